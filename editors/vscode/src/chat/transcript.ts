// The chat view's model: a pure reducer from kin's notifications (and a resumed session's
// history) to what the transcript shows. No VS Code and no DOM here: the extension feeds it and
// posts the state to the webview, and unit tests drive it directly.

import { FINAL_TOOL_STATUSES } from '../protocol/types';
import { countChanges } from '../lineDiff';
import type { SpendUsage } from '../spend';
import { applyFrame, delegateTask, isNested, newView, subagentLabel, type SubagentMap, type SubagentView } from './subagents';
import type {
	ApprovalRequest,
	ApprovalResolved,
	ElicitationRequest,
	ElicitationResolved,
	HistoryItem,
	Notice,
	CommandResult,
	InputPart,
	InstructionFile,
	PermissionOption,
	PlanEntry,
	ResourceLink,
	SessionConfigureResult,
	SessionMode,
	TurnPlan,
	TurnReasoning,
	TurnUndoResult,
	TurnUsage,
	ResumeResult,
	SessionInfo,
	ToolCallParams,
	ToolContent,
	ToolKind,
	ToolStatus,
	TurnCompleted,
	TurnDelta,
	TurnStarted,
	TurnStatus,
	TurnSteered,
	TurnRollbackResult,
} from '../protocol/types';
import { branchingEntry, rollbackText, steeredText } from './branching';

export interface UserEntry {
	type: 'user';
	key: string;
	turnId: string;
	text: string;
	/** What the question attached (files, a selection, problems…), without contents. */
	parts?: InputPart[];
}

/** The model's reasoning summary, shown folded and apart from the answer. */
export interface ReasoningEntry {
	type: 'reasoning';
	key: string;
	turnId: string;
	text: string;
}

/** The earlier conversation was summarised for the model (nothing is dropped from the log). */
export interface CompactionEntry {
	type: 'compaction';
	key: string;
	reason: string;
	text: string;
}

export interface AssistantEntry {
	type: 'assistant';
	key: string;
	turnId: string;
	text: string;
}

export interface ToolEntry {
	type: 'tool';
	key: string;
	turnId: string;
	callId: string;
	name: string;
	kind?: ToolKind;
	title: string;
	arguments?: string;
	status: ToolStatus;
	/** With status `working`: where its task stands. */
	statusMessage?: string;
	output: string;
	content?: ToolContent[];
	/** A delegate call's subagent: its progress, folded into the card (subagents.ts). */
	subagent?: SubagentView;
	/** A delegate call waiting for a free subagent slot (subagents.maxRunning). */
	waitingSlot?: boolean;
	/** An MCP result's resource links (its final notification), for the person to open. */
	links?: ResourceLink[];
}

/** A question waiting for the person, shown inline until kin resolves it. */
export interface WaitingEntry {
	type: 'waiting';
	key: string;
	requestId: string;
	what: 'approval' | 'elicitation';
	title: string;
	detail?: string;
	/** An approval's options, so its decision is named as kin named the option chosen. */
	options?: PermissionOption[];
	/** An approval's kind (an acknowledgement is recorded as one, not as "allowed"). */
	kind?: ApprovalRequest['kind'];
	/** A subagent's question: the subagent's session. */
	subagentSessionId?: string;
}

export interface DecisionEntry {
	type: 'decision';
	key: string;
	requestId: string;
	title?: string;
	decision: string;
	reason?: string;
	/** The chosen option's name as kin sent it, when the request was seen here. */
	label?: string;
	/** The approval's kind, when kin said it. */
	approvalKind?: ApprovalRequest['kind'];
}

export interface TurnEndEntry {
	type: 'turnEnd';
	key: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
	/** kin's file tools changed files in this turn (so it can be undone). */
	changedFiles?: boolean;
	/** The files kin's file tools changed in this turn, each opening its diff. */
	files?: ChangedFile[];
	/** The turn's file changes were undone. */
	undone?: boolean;
}

/** The model's plan (turn/plan), one per turn, replaced in place as it changes. */
export interface PlanCard {
	type: 'plan';
	key: string;
	turnId: string;
	entries: PlanEntry[];
}

/** One file a turn changed: its path and how many lines were added and removed. */
export interface ChangedFile {
	path: string;
	added: number;
	removed: number;
}

/** What a turn/undo put back. */
export interface UndoEntry {
	type: 'undo';
	key: string;
	result: TurnUndoResult;
	/** The undone turn's question (its first words), to name the turn; else its id is shown. */
	question?: string;
}

/** What one of kin's own commands (/plan, /mode, /undo…) said. */
export interface CommandEntry {
	type: 'command';
	key: string;
	name: string;
	text: string;
}

export interface NoticeEntry {
	type: 'notice';
	key: string;
	level: Notice['level'];
	message: string;
}

export type Entry =
	| UserEntry
	| AssistantEntry
	| ReasoningEntry
	| ToolEntry
	| WaitingEntry
	| DecisionEntry
	| TurnEndEntry
	| NoticeEntry
	| PlanCard
	| UndoEntry
	| CommandEntry
	| CompactionEntry;

/** How full the model's window is, from the latest turn/usage (or a turn's end). */
export interface ContextUsage extends SpendUsage {
	contextTokens: number;
	contextWindow: number;
	inputTokens: number;
	outputTokens: number;
}

/** The session's model and effort, and the project instructions in force, as kin last said. */
export interface SessionSetup {
	model?: string;
	effort?: string;
	instructions?: InstructionFile[];
}

export interface TranscriptState {
	session?: SessionInfo;
	/** The session's mode, as kin last said (session/list rows leave it out, so it is kept here). */
	mode?: SessionMode;
	setup?: SessionSetup;
	usage?: ContextUsage;
	entries: Entry[];
	/** The turn running in this session, if any. */
	runningTurn?: string;
	/** Why turns cannot run here (session/resume's readOnlyReason), when they cannot. */
	readOnly?: string;
	/** The subagents of this session (and theirs) whose frames this transcript follows. */
	subagents?: SubagentMap;
	/** Number of entries ever added, for stable keys. */
	seq: number;
}

export type Action =
	| { type: 'reset'; session?: SessionInfo; setup?: SessionSetup }
	| { type: 'resumed'; result: ResumeResult }
	| { type: 'turnStarted'; params: TurnStarted }
	| { type: 'delta'; params: TurnDelta }
	| { type: 'toolCall'; params: ToolCallParams }
	| { type: 'turnCompleted'; params: TurnCompleted }
	| { type: 'approvalRequest'; params: ApprovalRequest }
	| { type: 'approvalResolved'; params: ApprovalResolved }
	| { type: 'elicitationRequest'; params: ElicitationRequest }
	| { type: 'elicitationResolved'; params: ElicitationResolved }
	| { type: 'notice'; params: Notice }
	| { type: 'sessionUpdated'; session: SessionInfo }
	| { type: 'plan'; params: TurnPlan }
	| { type: 'undone'; result: TurnUndoResult }
	| { type: 'command'; sessionId: string; command: CommandResult }
	| { type: 'configured'; result: SessionConfigureResult }
	| { type: 'reasoning'; params: TurnReasoning }
	| { type: 'usage'; params: TurnUsage }
	| { type: 'steered'; params: TurnSteered }
	| { type: 'rolledBack'; sessionId: string; result: TurnRollbackResult };

export function initialState(session?: SessionInfo): TranscriptState {
	return session?.mode ? { session, mode: session.mode, entries: [], seq: 0 } : { session, entries: [], seq: 0 };
}

/** Returns the state after one action; never changes its argument. */
export function reduce(state: TranscriptState, action: Action): TranscriptState {
	const nested = reduceNested(state, action);
	if (nested) {
		return nested;
	}
	switch (action.type) {
		case 'reset':
			return action.setup ? { ...initialState(action.session), setup: action.setup } : initialState(action.session);
		case 'resumed':
			return fromHistory(action.result);
		case 'sessionUpdated':
			return sameSession(state, action.session.sessionId) ? { ...state, session: action.session } : state;
		case 'turnStarted': {
			const p = action.params;
			if (!sameSession(state, p.sessionId)) {
				return state;
			}
			const s = { ...state, runningTurn: p.turnId };
			// A resume answered just before this notification already shows the question.
			if (state.entries.some((e) => e.type === 'user' && e.turnId === p.turnId)) {
				return s;
			}
			return push(s, (key) => ({ type: 'user', key, turnId: p.turnId, text: p.input, ...(p.parts?.length ? { parts: p.parts } : {}) }));
		}
		case 'reasoning':
			return appendText(state, 'reasoning', action.params);
		case 'usage': {
			const p = action.params;
			return sameSession(state, p.sessionId) ? withUsage(state, p) : state;
		}
		case 'delta':
			return appendText(state, 'assistant', action.params);
		case 'toolCall':
			return sameSession(state, action.params.sessionId) ? applyToolCall(state, action.params) : state;
		case 'turnCompleted': {
			const p = action.params;
			if (!sameSession(state, p.sessionId)) {
				return state;
			}
			const s = withUsage({ ...state, runningTurn: state.runningTurn === p.turnId ? undefined : state.runningTurn }, p.usage);
			// Whatever still waits for this turn is over (kin resolves it too; this is belt and braces).
			return push(s, (key) => ({ type: 'turnEnd', key, turnId: p.turnId, status: p.status, error: p.error, ...turnFiles(s, p.turnId) }));
		}
		case 'plan':
			return sameSession(state, action.params.sessionId) ? applyPlan(state, action.params.turnId, action.params.entries) : state;
		case 'undone':
			return applyUndo(state, action.result);
		case 'command': {
			if (!sameSession(state, action.sessionId)) {
				return state;
			}
			const c = action.command;
			let s = push(state, (key) => ({ type: 'command', key, name: c.name, text: c.text }));
			const r = c.result as Partial<SessionConfigureResult & TurnUndoResult> | undefined;
			if (c.name === 'mode' && r?.mode) {
				s = { ...s, mode: r.mode };
			}
			if (c.name === 'model' && r?.model) {
				s = { ...s, setup: { ...s.setup, model: r.model, effort: r.effort } };
			}
			if (c.name === 'undo' && r?.turnId && Array.isArray(r.restored)) {
				s = markUndone(s, r.turnId);
			}
			return s;
		}
		case 'steered':
			return sameSession(state, action.params.sessionId)
				? push(state, (key) => ({ type: 'command', key, name: 'steer', text: steeredText(action.params.input) }))
				: state;
		case 'rolledBack': {
			if (!sameSession(state, action.sessionId)) {
				return state;
			}
			let s = push(state, (key) => ({ type: 'command', key, name: 'rollback', text: rollbackText(action.result) }));
			for (const u of action.result.undos ?? []) {
				s = markUndone(s, u.turnId);
			}
			return s;
		}
		case 'configured': {
			const r = action.result;
			if (!sameSession(state, r.sessionId)) {
				return state;
			}
			return { ...state, mode: r.mode ?? state.mode, setup: { ...state.setup, model: r.model ?? state.setup?.model, effort: r.effort } };
		}
		case 'approvalRequest': {
			const p = action.params;
			const shown = state.entries.findIndex((e) => e.type === 'waiting' && e.requestId === p.requestId);
			if (shown >= 0) {
				// Re-sent with the same requestId (what it proposes changed while it waited): the
				// same question, said anew in its place.
				const w = state.entries[shown] as WaitingEntry;
				const title = w.subagentSessionId ? `${subagentLabel(state.subagents, w.subagentSessionId)} — ${p.title}` : p.title;
				const again: WaitingEntry = { ...w, title, detail: approvalDetail(p), options: p.options, kind: p.kind };
				return JSON.stringify(again) === JSON.stringify(w) ? state : replaceAt(state, shown, again);
			}
			if (!showsWaiting(state, p)) {
				return state;
			}
			let s = state;
			if (isNested(state.session, state.subagents, p)) {
				s = subagentWaiting(s, p, 1);
				const label = subagentLabel(s.subagents, p.sessionId);
				return push(s, (key) => ({
					type: 'waiting',
					key,
					requestId: p.requestId,
					what: 'approval',
					title: `${label} — ${p.title}`,
					detail: approvalDetail(p),
					options: p.options,
					kind: p.kind,
					subagentSessionId: p.sessionId,
				}));
			}
			if (p.callId) {
				const i = findTool(s, p.callId, p.turnId);
				if (i >= 0) {
					const t = s.entries[i] as ToolEntry;
					if (t.status === 'pending') {
						s = replaceAt(s, i, { ...t, status: 'awaiting_approval' });
					}
				}
			}
			return push(s, (key) => ({
				type: 'waiting',
				key,
				requestId: p.requestId,
				what: 'approval',
				title: p.title,
				detail: approvalDetail(p),
				options: p.options,
				kind: p.kind,
			}));
		}
		case 'elicitationRequest': {
			const p = action.params;
			if (!showsWaiting(state, p)) {
				return state;
			}
			const sub = isNested(state.session, state.subagents, p) ? p.sessionId : undefined;
			const s = sub ? subagentWaiting(state, p, 1) : state;
			const what = p.mode === 'url' ? `${p.server ?? 'A server'} asks you to open a link` : `${p.source === 'kin' ? 'kin' : (p.server ?? 'A server')} asks for input`;
			return push(s, (key) => ({
				type: 'waiting',
				key,
				requestId: p.requestId,
				what: 'elicitation',
				title: sub ? `${subagentLabel(s.subagents, sub)} — ${what}` : what,
				detail: p.message,
				...(sub ? { subagentSessionId: sub } : {}),
			}));
		}
		case 'approvalResolved': {
			const p = action.params;
			const i = state.entries.findIndex((e) => e.type === 'waiting' && e.requestId === p.requestId);
			if (i < 0) {
				return state;
			}
			const waiting = state.entries[i] as WaitingEntry;
			const without = subagentWaiting({ ...state, entries: state.entries.filter((_, j) => j !== i) }, { sessionId: waiting.subagentSessionId }, -1);
			return push(without, (key) => ({
				type: 'decision',
				key,
				requestId: p.requestId,
				title: waiting.title,
				decision: p.decision,
				reason: p.reason,
				// An acknowledgement reads as one, not as the option's "Acknowledge and continue".
				label: p.reason === 'person' && waiting.kind !== 'acknowledge_unknown' ? waiting.options?.find((o) => o.optionId === p.decision)?.name : undefined,
				...(waiting.kind ? { approvalKind: waiting.kind } : {}),
			}));
		}
		case 'elicitationResolved': {
			const p = action.params;
			const w = state.entries.find((e): e is WaitingEntry => e.type === 'waiting' && e.requestId === p.requestId);
			const entries = state.entries.filter((e) => e !== w);
			return w ? subagentWaiting({ ...state, entries }, { sessionId: w.subagentSessionId }, -1) : state;
		}
		case 'notice': {
			const p = action.params;
			if (p.sessionId !== undefined && !sameSession(state, p.sessionId)) {
				return state;
			}
			return push(state, (key) => ({ type: 'notice', key, level: p.level, message: p.message }));
		}
	}
}

/** Redraws a resumed session: its history, then whatever still waits for the person. */
export function fromHistory(result: ResumeResult): TranscriptState {
	let s: TranscriptState = { ...initialState(result.session), setup: { model: result.model, effort: result.effort, instructions: result.instructions } };
	for (const item of result.history) {
		s = applyHistoryItem(s, item);
	}
	// kin says which turn it runs on this session (runningTurnId): that one shows Stop, and its
	// turn/completed still arrives. A turn without an end that kin does not run (another kin's, on
	// a read-only session) is not shown as running: nothing here could end it.
	if (result.runningTurnId) {
		s = { ...s, runningTurn: result.runningTurnId };
	}
	// A subagent's session (or one open in another kin): shown, not continued here (the composer
	// says why).
	if (result.readOnly) {
		s = { ...s, readOnly: result.readOnlyReason || 'this session is read-only here' };
	}
	for (const p of result.pending ?? []) {
		s = 'mode' in p ? reduce(s, { type: 'elicitationRequest', params: p as ElicitationRequest }) : reduce(s, { type: 'approvalRequest', params: p as ApprovalRequest });
	}
	return s;
}

function applyHistoryItem(s: TranscriptState, item: HistoryItem): TranscriptState {
	switch (item.type) {
		case 'user':
			return push(s, (key) => ({ type: 'user', key, turnId: item.turnId, text: item.text, ...(item.parts?.length ? { parts: item.parts } : {}) }));
		case 'assistant':
			return push(s, (key) => ({ type: 'assistant', key, turnId: item.turnId, text: item.text }));
		case 'toolCall':
			return applyToolCall(s, { ...item, sessionId: undefined });
		case 'decision':
			return push(s, (key) => ({
				type: 'decision',
				key,
				requestId: item.requestId ?? '',
				title: item.title || item.approved?.title,
				decision: item.decision,
				reason: item.reason,
				approvalKind: item.approvalKind,
			}));
		case 'elicitation':
			return push(s, (key) => ({
				type: 'decision',
				key,
				requestId: item.requestId,
				title: `${item.source === 'kin' ? 'kin' : item.server} asked${item.title ? `: ${item.title}` : ''}`,
				decision: item.decision,
				reason: item.reason,
			}));
		case 'turn':
			return push(withUsage(s, item.usage), (key) => ({ type: 'turnEnd', key, turnId: item.turnId, status: item.status, error: item.error, ...turnFiles(s, item.turnId) }));
		case 'reasoning':
			return push(s, (key) => ({ type: 'reasoning', key, turnId: item.turnId, text: item.text }));
		case 'compaction':
			return push(s, (key) => ({ type: 'compaction', key, reason: item.reason, text: item.text }));
		case 'instructions':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Project instructions changed: ${item.changed.join(', ')}` }));
		case 'configure':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Model: ${item.model}${item.effort ? ` (effort ${item.effort})` : ''}` }));
		case 'plan':
			return applyPlan(s, item.turnId, item.entries);
		case 'mode':
			return push({ ...s, mode: item.mode }, (key) => ({ type: 'notice', key, level: 'info', message: `Mode: ${item.mode}` }));
		case 'undo':
			return applyUndo(s, item.undo);
		case 'steer':
		case 'rollback':
		case 'fork': {
			const e = branchingEntry(item);
			return e ? push(s, (key) => ({ type: 'command', key, name: e.name, text: e.text })) : s;
		}
		default:
			return s;
	}
}

/**
 * Whether a question goes into this transcript: one of this session, or of no session (a server
 * launch, a sign-in link) while a session is shown, and not shown already (a resume re-sends it).
 */
function showsWaiting(state: TranscriptState, p: { requestId: string; sessionId?: string; parentSessionId?: string }): boolean {
	const ours = p.sessionId !== undefined ? sameSession(state, p.sessionId) || isNested(state.session, state.subagents, p) : !!state.session;
	if (!ours) {
		return false;
	}
	return !state.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId);
}

/** Streamed text (an answer's delta, a reasoning summary's) goes onto the entry it continues. */
function appendText(state: TranscriptState, type: 'assistant' | 'reasoning', p: TurnDelta | TurnReasoning): TranscriptState {
	if (!sameSession(state, p.sessionId) || p.text === '') {
		return state;
	}
	const last = state.entries[state.entries.length - 1];
	if (last && last.type === type && last.turnId === p.turnId) {
		return replaceAt(state, state.entries.length - 1, { ...last, text: last.text + p.text });
	}
	return push(state, (key) => ({ type, key, turnId: p.turnId, text: p.text }));
}

function applyToolCall(state: TranscriptState, p: ToolCallParams): TranscriptState {
	let s = applyPlainToolCall(state, p);
	if (p.subagent) {
		// While it waits for a free slot its card says so; it stops waiting once it has a session.
		const i = findTool(s, p.callId, p.turnId);
		const t = i >= 0 ? (s.entries[i] as ToolEntry) : undefined;
		const waitingSlot = !!p.subagent.waiting && !p.subagent.sessionId && !isFinal(p.status);
		if (t && !!t.waitingSlot !== waitingSlot) {
			s = replaceAt(s, i, waitingSlot ? { ...t, waitingSlot } : { ...t, waitingSlot: undefined });
		}
	}
	return p.subagent?.sessionId ? attachDelegate(s, p) : s;
}

function applyPlainToolCall(state: TranscriptState, p: ToolCallParams): TranscriptState {
	const i = findTool(state, p.callId, p.turnId);
	if (i < 0) {
		return push(state, (key) => ({
			type: 'tool',
			key,
			turnId: p.turnId,
			callId: p.callId,
			name: p.name,
			kind: p.kind,
			title: p.title || p.name,
			arguments: p.arguments,
			status: p.status,
			statusMessage: p.statusMessage,
			output: p.output ?? p.outputDelta ?? '',
			content: p.content,
			...(p.links?.length ? { links: p.links } : {}),
		}));
	}
	const t = state.entries[i] as ToolEntry;
	// A final status is final: a late `running` (or a duplicate) never reopens a card.
	if (isFinal(t.status) && !isFinal(p.status)) {
		return state;
	}
	const output = p.output !== undefined ? p.output : t.output + (p.outputDelta ?? '');
	return replaceAt(state, i, {
		...t,
		name: p.name || t.name,
		kind: p.kind ?? t.kind,
		title: p.title || t.title,
		arguments: p.arguments ?? t.arguments,
		status: p.status,
		statusMessage: p.status === 'working' ? (p.statusMessage ?? t.statusMessage) : undefined,
		output,
		content: p.content ?? t.content,
		...(p.links?.length ? { links: p.links } : {}),
	});
}

export function isFinal(status: ToolStatus): boolean {
	return FINAL_TOOL_STATUSES.includes(status);
}

/** One line (or a few) saying what an approval is about, for the inline card. */
export function approvalDetail(p: ApprovalRequest): string {
	if (p.kind === 'server_launch') {
		return `${p.transport ?? ''} ${p.destination ?? ''}`.trim();
	}
	if (p.command !== undefined) {
		return p.cwd ? `$ ${p.command}   (in ${p.cwd})` : `$ ${p.command}`;
	}
	if (p.diffs && p.diffs.length) {
		return p.diffs.map((d) => d.path).join('\n');
	}
	if (p.server) {
		return `${p.server} → ${p.destination ?? ''}`;
	}
	return p.warning ?? '';
}

function sameSession(state: TranscriptState, sessionId: string | undefined): boolean {
	return !!state.session && sessionId === state.session.sessionId;
}

/**
 * The card of a call: the newest with its callId, and of its turn when the turn is known (a model
 * may use a callId again in a later turn, which is a new call with a card of its own).
 */
function findTool(state: TranscriptState, callId: string, turnId?: string): number {
	for (let i = state.entries.length - 1; i >= 0; i--) {
		const e = state.entries[i];
		if (e.type === 'tool' && e.callId === callId && (!turnId || !e.turnId || e.turnId === turnId)) {
			return i;
		}
	}
	return -1;
}

function push(state: TranscriptState, make: (key: string) => Entry): TranscriptState {
	const key = `e${state.seq + 1}`;
	return { ...state, seq: state.seq + 1, entries: [...state.entries, make(key)] };
}

function replaceAt(state: TranscriptState, i: number, e: Entry): TranscriptState {
	const entries = state.entries.slice();
	entries[i] = e;
	return { ...state, entries };
}

/** Adds the session's cost as u says it, else as last said (a turn that ended before any request says none). */
function withSpend(base: ContextUsage, u: Partial<ContextUsage>, last: ContextUsage | undefined): ContextUsage {
	const out: ContextUsage = { ...base };
	const currency = u.currency ?? last?.currency;
	if (currency) {
		out.currency = currency;
		out.sessionCost = u.sessionCost ?? last?.sessionCost;
		if (u.estimated ?? last?.estimated) {
			out.estimated = true;
		}
	}
	return out;
}

/** Takes a usage that says how full the window is (turns recorded before kin kept it say 0). */
function withUsage(state: TranscriptState, u: Partial<ContextUsage> | undefined): TranscriptState {
	if (!u || !u.contextWindow) {
		return state;
	}
	return {
		...state,
		usage: withSpend(
			{ contextTokens: u.contextTokens ?? 0, contextWindow: u.contextWindow, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 },
			u,
			state.usage,
		),
	};
}

/** The turn's plan card, replaced in place (the card keeps its place, where the plan first came). */
function applyPlan(state: TranscriptState, turnId: string, entries: PlanEntry[]): TranscriptState {
	const i = state.entries.findIndex((e) => e.type === 'plan' && e.turnId === turnId);
	if (i >= 0) {
		return replaceAt(state, i, { ...(state.entries[i] as PlanCard), entries });
	}
	return push(state, (key) => ({ type: 'plan', key, turnId, entries }));
}

function applyUndo(state: TranscriptState, result: TurnUndoResult): TranscriptState {
	const question = result.question ?? state.entries.find((e): e is UserEntry => e.type === 'user' && e.turnId === result.turnId)?.text;
	// An undo kin was stopped in leaves the turn to be undone again (that finishes it).
	const s = result.error ? state : markUndone(state, result.turnId);
	return push(s, (key) => ({ type: 'undo', key, result, ...(question ? { question: firstWords(question) } : {}) }));
}

/** A question's first words, to name its turn (as kin names it: one line, at most 60 characters). */
export function firstWords(text: string): string {
	const one = text.trim().split(/\n\s*\n/)[0].split(/\s+/).filter(Boolean).join(' ');
	return [...one].length > 60 ? `${[...one].slice(0, 60).join('')}…` : one;
}

function markUndone(state: TranscriptState, turnId: string): TranscriptState {
	const i = state.entries.findIndex((e) => e.type === 'turnEnd' && e.turnId === turnId);
	return i < 0 ? state : replaceAt(state, i, { ...(state.entries[i] as TurnEndEntry), undone: true });
}

/** Whether kin's file tools changed something in the turn (an edit call that completed), and which files. */
function turnFiles(state: TranscriptState, turnId: string): { changedFiles: boolean; files?: ChangedFile[] } {
	const changed = state.entries.some((e) => e.type === 'tool' && e.turnId === turnId && e.kind === 'edit' && e.status === 'completed');
	const files = turnChanges(state.entries, turnId).map((c) => ({ path: c.path, ...countChanges(c.before, c.after) }));
	return files.length ? { changedFiles: changed, files } : { changedFiles: changed };
}

/** One file as a turn's edit tools left it: its text before the first change and after the last. */
export interface FileChange {
	path: string;
	before: string;
	after: string;
}

/**
 * The files a turn's file tools changed (the diffs of its completed edit calls), in the order they
 * were first changed: each with its text before the turn's first change and after its last.
 */
export function turnChanges(entries: Entry[], turnId: string): FileChange[] {
	const byPath = new Map<string, FileChange>();
	for (const e of entries) {
		if (e.type !== 'tool' || e.turnId !== turnId || e.kind !== 'edit' || e.status !== 'completed') {
			continue;
		}
		for (const c of e.content ?? []) {
			if (c.type !== 'diff') {
				continue;
			}
			const had = byPath.get(c.diff.path);
			byPath.set(c.diff.path, { path: c.diff.path, before: had ? had.before : (c.diff.oldText ?? ''), after: c.diff.newText ?? '' });
		}
	}
	return [...byPath.values()].filter((c) => c.before !== c.after);
}

/** A plan as one line per step: [x] done, [~] in progress, [ ] pending. */
export function planText(entries: PlanEntry[]): string {
	const mark = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const;
	return ['Plan:', ...entries.map((e) => `${mark[e.status] ?? '[ ]'} ${e.content}`)].join('\n');
}

// ---- subagents (subagents.ts holds the view; these hooks keep it in the transcript) ----

/** A subagent's frame (parentSessionId is this session or one of its subagents), else undefined. */
function reduceNested(state: TranscriptState, action: Action): TranscriptState | undefined {
	switch (action.type) {
		case 'turnStarted':
		case 'delta':
		case 'reasoning':
		case 'toolCall':
		case 'turnCompleted':
		case 'usage':
		case 'notice':
			break;
		default:
			return undefined;
	}
	const p = action.params;
	if (!isNested(state.session, state.subagents, p)) {
		return undefined;
	}
	const sid = p.sessionId as string;
	const v = state.subagents?.[sid] ?? newView(sid, p);
	switch (action.type) {
		case 'turnStarted':
			return putView(state, applyFrame(v, { type: 'turnStarted', turnId: action.params.turnId, input: action.params.input }));
		case 'delta':
			return putView(state, applyFrame(v, { type: 'delta', text: action.params.text }));
		case 'toolCall': {
			const c = action.params;
			let next = applyFrame(v, { type: 'toolCall', callId: c.callId, title: c.title || c.name, status: c.status });
			if (c.subagent?.sessionId) {
				// The subagent's own delegate call: its subagent nests under this call.
				const inner = state.subagents?.[c.subagent.sessionId] ?? newView(c.subagent.sessionId, { parentSessionId: sid, parentTurnId: c.turnId, parentCallId: c.callId }, delegateTask(c.arguments, c.title), c.subagent);
				next = { ...next, calls: next.calls.map((x) => (x.callId === c.callId ? { ...x, subagent: inner } : x)) };
				return putView(putView(state, next), inner);
			}
			return putView(state, next);
		}
		case 'turnCompleted':
			return putView(state, applyFrame(v, { type: 'turnCompleted', status: action.params.status, error: action.params.error }));
		case 'notice':
			return putView(state, { ...v, latest: action.params.message.split('\n')[0] });
		default:
			// Its reasoning and usage (its parent's turn/usage already counts it): not shown.
			return state;
	}
}

/** Stores a subagent's view and puts it where it shows: its delegate call's card (or its parent subagent's call). */
function putView(state: TranscriptState, v: SubagentView, depth = 0): TranscriptState {
	let s: TranscriptState = { ...state, subagents: { ...state.subagents, [v.sessionId]: v } };
	if (depth > 16 || !v.parentCallId) {
		return s;
	}
	if (v.parentSessionId === s.session?.sessionId) {
		const i = findTool(s, v.parentCallId, v.parentTurnId);
		if (i >= 0) {
			s = replaceAt(s, i, { ...(s.entries[i] as ToolEntry), subagent: v });
		}
		return s;
	}
	const parent = s.subagents?.[v.parentSessionId];
	if (!parent || parent.sessionId === v.sessionId) {
		return s;
	}
	return putView(s, { ...parent, calls: parent.calls.map((c) => (c.callId === v.parentCallId ? { ...c, subagent: v } : c)) }, depth + 1);
}

/** The parent's delegate call names its subagent's session: start following it. */
function attachDelegate(state: TranscriptState, p: ToolCallParams): TranscriptState {
	const info = p.subagent!;
	const sid = info.sessionId!;
	const had = state.subagents?.[sid];
	let v = had ?? newView(sid, { parentSessionId: state.session?.sessionId ?? '', parentTurnId: p.turnId, parentCallId: p.callId }, delegateTask(p.arguments, p.title), info);
	if (!v.task) {
		v = { ...v, task: delegateTask(p.arguments, p.title) };
	}
	// A call that ended (a resumed session's history) without its subagent's turn/completed seen here.
	if (isFinal(p.status) && v.status === 'running') {
		v = { ...v, status: p.status === 'completed' ? 'completed' : 'failed', latest: v.latest || p.status };
	}
	return putView(state, v);
}

/** Counts a subagent's question waiting (delta 1) or answered (delta -1) on its view. */
function subagentWaiting(state: TranscriptState, p: { sessionId?: string; callId?: string; parentSessionId?: string; parentTurnId?: string; parentCallId?: string }, delta: number): TranscriptState {
	if (!p.sessionId) {
		return state;
	}
	const v = state.subagents?.[p.sessionId] ?? (delta > 0 && p.parentSessionId ? newView(p.sessionId, p) : undefined);
	return v ? putView(state, applyFrame(v, { type: 'waiting', delta, callId: p.callId })) : state;
}

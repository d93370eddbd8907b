// The chat view's model: a pure reducer from kin's notifications (and a resumed session's
// history) to what the transcript shows. No VS Code and no DOM here: the extension feeds it and
// posts the state to the webview, and unit tests drive it directly.

import { FINAL_TOOL_STATUSES } from '../protocol/types';
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
} from '../protocol/types';

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
	output: string;
	content?: ToolContent[];
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
}

export interface TurnEndEntry {
	type: 'turnEnd';
	key: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
	/** kin's file tools changed files in this turn (so it can be undone). */
	changedFiles?: boolean;
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

/** What a turn/undo put back. */
export interface UndoEntry {
	type: 'undo';
	key: string;
	result: TurnUndoResult;
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
export interface ContextUsage {
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
	| { type: 'usage'; params: TurnUsage };

export function initialState(session?: SessionInfo): TranscriptState {
	return session?.mode ? { session, mode: session.mode, entries: [], seq: 0 } : { session, entries: [], seq: 0 };
}

/** Returns the state after one action; never changes its argument. */
export function reduce(state: TranscriptState, action: Action): TranscriptState {
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
			return push(s, (key) => ({ type: 'turnEnd', key, turnId: p.turnId, status: p.status, error: p.error, changedFiles: changedFiles(s, p.turnId) }));
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
		case 'configured': {
			const r = action.result;
			if (!sameSession(state, r.sessionId)) {
				return state;
			}
			return { ...state, mode: r.mode ?? state.mode, setup: { ...state.setup, model: r.model ?? state.setup?.model, effort: r.effort } };
		}
		case 'approvalRequest': {
			const p = action.params;
			if (!showsWaiting(state, p)) {
				return state;
			}
			let s = state;
			if (p.callId) {
				const i = findTool(s, p.callId);
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
			}));
		}
		case 'elicitationRequest': {
			const p = action.params;
			if (!showsWaiting(state, p)) {
				return state;
			}
			return push(state, (key) => ({
				type: 'waiting',
				key,
				requestId: p.requestId,
				what: 'elicitation',
				title: p.mode === 'url' ? `${p.server ?? 'A server'} asks you to open a link` : `${p.source === 'kin' ? 'kin' : (p.server ?? 'A server')} asks for input`,
				detail: p.message,
			}));
		}
		case 'approvalResolved': {
			const p = action.params;
			const i = state.entries.findIndex((e) => e.type === 'waiting' && e.requestId === p.requestId);
			if (i < 0) {
				return state;
			}
			const waiting = state.entries[i] as WaitingEntry;
			const without = { ...state, entries: state.entries.filter((_, j) => j !== i) };
			return push(without, (key) => ({
				type: 'decision',
				key,
				requestId: p.requestId,
				title: waiting.title,
				decision: p.decision,
				reason: p.reason,
				label: p.reason === 'person' ? waiting.options?.find((o) => o.optionId === p.decision)?.name : undefined,
			}));
		}
		case 'elicitationResolved': {
			const p = action.params;
			const entries = state.entries.filter((e) => !(e.type === 'waiting' && e.requestId === p.requestId));
			return entries.length === state.entries.length ? state : { ...state, entries };
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
			return push(withUsage(s, item.usage), (key) => ({ type: 'turnEnd', key, turnId: item.turnId, status: item.status, error: item.error, changedFiles: changedFiles(s, item.turnId) }));
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
		default:
			return s;
	}
}

/**
 * Whether a question goes into this transcript: one of this session, or of no session (a server
 * launch, a sign-in link) while a session is shown, and not shown already (a resume re-sends it).
 */
function showsWaiting(state: TranscriptState, p: { requestId: string; sessionId?: string }): boolean {
	if (p.sessionId !== undefined ? !sameSession(state, p.sessionId) : !state.session) {
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
	const i = findTool(state, p.callId);
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
			output: p.output ?? p.outputDelta ?? '',
			content: p.content,
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
		output,
		content: p.content ?? t.content,
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

function findTool(state: TranscriptState, callId: string): number {
	for (let i = state.entries.length - 1; i >= 0; i--) {
		const e = state.entries[i];
		if (e.type === 'tool' && e.callId === callId) {
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

/** Takes a usage that says how full the window is (turns recorded before kin kept it say 0). */
function withUsage(state: TranscriptState, u: Partial<ContextUsage> | undefined): TranscriptState {
	if (!u || !u.contextWindow) {
		return state;
	}
	return {
		...state,
		usage: { contextTokens: u.contextTokens ?? 0, contextWindow: u.contextWindow, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 },
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
	return push(markUndone(state, result.turnId), (key) => ({ type: 'undo', key, result }));
}

function markUndone(state: TranscriptState, turnId: string): TranscriptState {
	const i = state.entries.findIndex((e) => e.type === 'turnEnd' && e.turnId === turnId);
	return i < 0 ? state : replaceAt(state, i, { ...(state.entries[i] as TurnEndEntry), undone: true });
}

/** Whether kin's file tools changed something in the turn (an edit call that completed). */
function changedFiles(state: TranscriptState, turnId: string): boolean {
	return state.entries.some((e) => e.type === 'tool' && e.turnId === turnId && e.kind === 'edit' && e.status === 'completed');
}

/** A plan as one line per step: [x] done, [~] in progress, [ ] pending. */
export function planText(entries: PlanEntry[]): string {
	const mark = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const;
	return ['Plan:', ...entries.map((e) => `${mark[e.status] ?? '[ ]'} ${e.content}`)].join('\n');
}

// The chat view's model: a pure reducer from kin's notifications (and a resumed session's
// history) to what the transcript shows. No VS Code and no DOM here: the extension feeds it and
// posts the state to the webview, and unit tests drive it directly.

import type {
	ApprovalRequest,
	ApprovalResolved,
	ElicitationRequest,
	ElicitationResolved,
	HistoryItem,
	Notice,
	PlanEntry,
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
}

export interface DecisionEntry {
	type: 'decision';
	key: string;
	requestId: string;
	title?: string;
	decision: string;
	reason?: string;
}

export interface TurnEndEntry {
	type: 'turnEnd';
	key: string;
	turnId: string;
	status: TurnStatus;
	error?: string;
}

export interface NoticeEntry {
	type: 'notice';
	key: string;
	level: Notice['level'];
	message: string;
}

export type Entry = UserEntry | AssistantEntry | ToolEntry | WaitingEntry | DecisionEntry | TurnEndEntry | NoticeEntry;

export interface TranscriptState {
	session?: SessionInfo;
	entries: Entry[];
	/** The turn running in this session, if any. */
	runningTurn?: string;
	/** Number of entries ever added, for stable keys. */
	seq: number;
}

export type Action =
	| { type: 'reset'; session?: SessionInfo }
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
	| { type: 'sessionUpdated'; session: SessionInfo };

export function initialState(session?: SessionInfo): TranscriptState {
	return { session, entries: [], seq: 0 };
}

/** Returns the state after one action; never changes its argument. */
export function reduce(state: TranscriptState, action: Action): TranscriptState {
	switch (action.type) {
		case 'reset':
			return initialState(action.session);
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
			return push(s, (key) => ({ type: 'user', key, turnId: p.turnId, text: p.input }));
		}
		case 'delta': {
			const p = action.params;
			if (!sameSession(state, p.sessionId) || p.text === '') {
				return state;
			}
			const last = state.entries[state.entries.length - 1];
			if (last && last.type === 'assistant' && last.turnId === p.turnId) {
				return replaceAt(state, state.entries.length - 1, { ...last, text: last.text + p.text });
			}
			return push(state, (key) => ({ type: 'assistant', key, turnId: p.turnId, text: p.text }));
		}
		case 'toolCall':
			return sameSession(state, action.params.sessionId) ? applyToolCall(state, action.params) : state;
		case 'turnCompleted': {
			const p = action.params;
			if (!sameSession(state, p.sessionId)) {
				return state;
			}
			const s = { ...state, runningTurn: state.runningTurn === p.turnId ? undefined : state.runningTurn };
			// Whatever still waits for this turn is over (kin resolves it too; this is belt and braces).
			return push(s, (key) => ({ type: 'turnEnd', key, turnId: p.turnId, status: p.status, error: p.error }));
		}
		case 'approvalRequest': {
			const p = action.params;
			if (p.sessionId !== undefined && !sameSession(state, p.sessionId)) {
				return state;
			}
			if (p.sessionId === undefined && !state.session) {
				return state;
			}
			if (state.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId)) {
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
			}));
		}
		case 'elicitationRequest': {
			const p = action.params;
			if (p.sessionId !== undefined && !sameSession(state, p.sessionId)) {
				return state;
			}
			if (p.sessionId === undefined && !state.session) {
				return state;
			}
			if (state.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId)) {
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
	let s = initialState(result.session);
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
			return push(s, (key) => ({ type: 'user', key, turnId: item.turnId, text: item.text }));
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
			return push(s, (key) => ({ type: 'turnEnd', key, turnId: item.turnId, status: item.status, error: item.error }));
		// The second release's items, shown as notes until the chat view renders them its own way.
		case 'reasoning':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Thinking: ${item.text}` }));
		case 'compaction':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Earlier conversation summarised (${item.reason}):\n${item.text}` }));
		case 'instructions':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Project instructions changed: ${item.changed.join(', ')}` }));
		case 'configure':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Model: ${item.model}${item.effort ? ` (effort ${item.effort})` : ''}` }));
		case 'plan':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: planText(item.entries) }));
		case 'mode':
			return push(s, (key) => ({ type: 'notice', key, level: 'info', message: `Mode: ${item.mode}` }));
		case 'undo':
			return push(s, (key) => ({
				type: 'notice',
				key,
				level: item.undo.conflicts?.length ? 'warning' : 'info',
				message: `Undid turn ${item.undo.turnId}: restored ${item.undo.restored.length} file(s)${item.undo.conflicts?.length ? `, ${item.undo.conflicts.length} changed since left as they are` : ''}`,
			}));
		default:
			return s;
	}
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
	return status === 'completed' || status === 'failed' || status === 'denied' || status === 'unknown' || status === 'output_limit';
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

/** A plan as one line per step: [x] done, [~] in progress, [ ] pending. */
export function planText(entries: PlanEntry[]): string {
	const mark = { completed: '[x]', in_progress: '[~]', pending: '[ ]' } as const;
	return ['Plan:', ...entries.map((e) => `${mark[e.status] ?? '[ ]'} ${e.content}`)].join('\n');
}

// Subagents in the chat view (PROTOCOL.md, Subagents). A subagent's notifications and questions
// carry its own sessionId plus parentSessionId/parentTurnId/parentCallId. The transcript takes
// those whose parent is the open session (or, transitively, one of its subagents): questions are
// shown and answered like the session's own, labelled as the subagent's; progress is folded into
// the delegate call's card, never shown as the parent's answer. Pure functions, no VS Code.

import type { Nesting, SessionInfo, SubagentInfo, ToolStatus, TurnStatus } from '../protocol/types';

/** One call of a subagent, as its delegate card lists it. */
export interface SubagentCall {
	callId: string;
	title: string;
	status: ToolStatus;
	/** The call's own subagent (a subagent that delegates, subagents.maxDepth 2 or more). */
	subagent?: SubagentView;
}

/** What the delegate call's card shows of its subagent. */
export interface SubagentView {
	sessionId: string;
	parentSessionId: string;
	parentTurnId?: string;
	parentCallId?: string;
	task: string;
	mode?: string;
	model?: string;
	turnId?: string;
	/** `running` until its turn/completed says how it ended. */
	status: 'running' | TurnStatus;
	/** Its answer so far. */
	text: string;
	calls: SubagentCall[];
	/** One line: its latest activity (a call, its answer's last line, how it ended). */
	latest: string;
	/** Questions of it waiting for the person. */
	waiting?: number;
	/** A call came after its last text (the next text starts a new line). */
	afterCall?: boolean;
}

/** The subagents the open session's transcript follows, by their sessionId. */
export type SubagentMap = Record<string, SubagentView>;

/**
 * Whether a frame of another session belongs to the open one: its parent is the open session, or
 * a subagent of it this transcript already follows (a subagent's own subagent).
 */
export function isNested(open: SessionInfo | undefined, subs: SubagentMap | undefined, p: Nesting & { sessionId?: string }): boolean {
	if (!open || !p.sessionId || p.sessionId === open.sessionId || !p.parentSessionId) {
		return false;
	}
	return p.parentSessionId === open.sessionId || !!subs?.[p.parentSessionId];
}

/** The label of a subagent's question: "subagent: <task's first words>". */
export function subagentLabel(subs: SubagentMap | undefined, sessionId: string | undefined): string {
	const v = sessionId ? subs?.[sessionId] : undefined;
	return v?.task ? `subagent: ${short(v.task, 60)}` : 'subagent';
}

/** The task a delegate call asked for: its arguments' `task`, else its title's words. */
export function delegateTask(args: string | undefined, title: string | undefined): string {
	try {
		const a = JSON.parse(args ?? '') as { task?: unknown };
		if (typeof a.task === 'string' && a.task.trim()) {
			return a.task.trim();
		}
	} catch {
		// not JSON (still streaming): the title names it
	}
	return (title ?? '').replace(/^Subagent \([^)]*\):\s*/, '');
}

/** A view for a subagent first seen (by its delegate call, or by a frame of its own). */
export function newView(sessionId: string, parent: Nesting, task = '', info?: SubagentInfo): SubagentView {
	return {
		sessionId,
		parentSessionId: parent.parentSessionId ?? '',
		parentTurnId: parent.parentTurnId,
		parentCallId: parent.parentCallId,
		task,
		mode: info?.mode,
		model: info?.model,
		status: 'running',
		text: '',
		calls: [],
		latest: task ? 'started' : '',
	};
}

/** The view after one of its turn's frames. */
export function applyFrame(
	v: SubagentView,
	f:
		| { type: 'turnStarted'; turnId: string; input: string }
		| { type: 'delta'; text: string }
		| { type: 'toolCall'; callId: string; title: string; status: ToolStatus }
		| { type: 'turnCompleted'; status: TurnStatus; error?: string }
		| { type: 'waiting'; delta: number; callId?: string },
): SubagentView {
	switch (f.type) {
		case 'turnStarted':
			return { ...v, turnId: f.turnId, task: v.task || f.input, status: 'running', latest: 'started' };
		case 'delta': {
			// Text after a call is a new message of the subagent's: on a line of its own.
			const sep = v.afterCall && v.text !== '' && !v.text.endsWith('\n') ? '\n' : '';
			const text = v.text + sep + f.text;
			const last = text.trim().split('\n').pop() ?? '';
			return { ...v, text, afterCall: false, latest: last ? short(last, 100) : v.latest };
		}
		case 'toolCall': {
			const i = v.calls.findIndex((c) => c.callId === f.callId);
			const calls = v.calls.slice();
			if (i < 0) {
				calls.push({ callId: f.callId, title: f.title, status: f.status });
			} else {
				calls[i] = { ...calls[i], title: f.title || calls[i].title, status: f.status };
			}
			return { ...v, calls, afterCall: true, latest: `${f.title || calls[i < 0 ? calls.length - 1 : i].title}: ${f.status}` };
		}
		case 'turnCompleted':
			return { ...v, status: f.status, waiting: 0, latest: f.status === 'completed' ? 'done' : `${f.status}${f.error ? `: ${short(f.error, 80)}` : ''}` };
		case 'waiting': {
			const waiting = Math.max(0, (v.waiting ?? 0) + f.delta);
			let calls = v.calls;
			if (f.delta > 0 && f.callId) {
				calls = calls.map((c) => (c.callId === f.callId && c.status === 'pending' ? { ...c, status: 'awaiting_approval' } : c));
			}
			return { ...v, waiting, calls, latest: f.delta > 0 ? 'waiting for your answer' : v.latest };
		}
	}
}

/** A one-line summary for the collapsed card: "3 calls · waiting for your answer". */
export function summaryLine(v: SubagentView): string {
	const n = v.calls.length;
	const calls = n ? `${n} call${n === 1 ? '' : 's'}` : 'no calls yet';
	return [calls, v.latest].filter(Boolean).join(' · ');
}

function short(s: string, n: number): string {
	const one = s.replace(/\s+/g, ' ').trim();
	return [...one].length > n ? `${[...one].slice(0, n).join('')}…` : one;
}

/**
 * session/list's rows (asked with includeSubagents) in picker order: each subagent's session right
 * after its parent's, one level deeper; one whose parent is not listed comes last, one level deep.
 */
export function nestSessions<T extends { sessionId: string; parentId?: string }>(sessions: T[]): { session: T; depth: number }[] {
	const ids = new Set(sessions.map((s) => s.sessionId));
	const children = new Map<string, T[]>();
	for (const s of sessions) {
		if (s.parentId && ids.has(s.parentId) && s.parentId !== s.sessionId) {
			children.set(s.parentId, [...(children.get(s.parentId) ?? []), s]);
		}
	}
	const out: { session: T; depth: number }[] = [];
	const seen = new Set<string>();
	const walk = (s: T, depth: number) => {
		if (seen.has(s.sessionId)) {
			return;
		}
		seen.add(s.sessionId);
		out.push({ session: s, depth });
		for (const c of children.get(s.sessionId) ?? []) {
			walk(c, depth + 1);
		}
	};
	for (const s of sessions) {
		if (!s.parentId) {
			walk(s, 0);
		}
	}
	for (const s of sessions) {
		walk(s, 1); // a subagent's session whose parent is not listed (or a loop kin never makes)
	}
	return out;
}

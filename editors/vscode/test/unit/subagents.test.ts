import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Action, TranscriptState, fromHistory, initialState, reduce, ToolEntry, WaitingEntry } from '../../src/chat/transcript';
import { nestSessions } from '../../src/chat/subagents';
import type { ApprovalRequest } from '../../src/protocol/types';
import { renderEntry } from '../../src/webview/render';

const P = 's_parent';
const C = 's_child';
const G = 's_grandchild';
const session = { sessionId: P, title: 't', createdAt: '2026-11-30T23:15:00Z', updatedAt: '2026-11-30T23:15:00Z', turns: 0 };
const nest = { parentSessionId: P, parentTurnId: 't_2', parentCallId: 'call_d1' };
const task = 'Summarise what a.go and b.go do';

function run(actions: Action[], start: TranscriptState = initialState(session)): TranscriptState {
	return actions.reduce(reduce, start);
}

const delegate = (status: 'running' | 'completed', extra: object = {}): Action => ({
	type: 'toolCall',
	params: {
		sessionId: P,
		turnId: 't_2',
		callId: 'call_d1',
		name: 'delegate',
		kind: 'other',
		title: `Subagent (ask): ${task}`,
		arguments: JSON.stringify({ task }),
		status,
		subagent: { sessionId: C, mode: 'ask', model: 'gpt-5.1' },
		...extra,
	},
});

const start: Action[] = [
	{ type: 'turnStarted', params: { sessionId: P, turnId: 't_2', input: 'look at a and b' } },
	delegate('running'),
	{ type: 'turnStarted', params: { sessionId: C, turnId: 't_3', input: task, ...nest } },
];

const childApproval: ApprovalRequest = {
	requestId: 'ap_12',
	sessionId: C,
	turnId: 't_3',
	callId: 'call_1',
	...nest,
	kind: 'tool_call',
	tool: 'bash',
	title: 'Run go test ./...',
	command: 'go test ./...',
	options: [
		{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
		{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
	],
};

test("a subagent's approval shows on its parent's transcript, labelled as the subagent's, and its answer is recorded", () => {
	let s = run([...start, { type: 'toolCall', params: { sessionId: C, turnId: 't_3', callId: 'call_1', name: 'bash', title: 'Run go test ./...', status: 'pending', ...nest } }]);
	s = reduce(s, { type: 'approvalRequest', params: childApproval });
	const w = s.entries.find((e): e is WaitingEntry => e.type === 'waiting');
	assert.ok(w, 'the approval is shown');
	assert.equal(w.requestId, 'ap_12');
	assert.equal(w.subagentSessionId, C);
	assert.match(w.title, /^subagent: Summarise what a\.go and b\.go do — Run go test/);
	// The subagent's call waits, inside the delegate card; the parent has no card for call_1.
	const card = s.entries.find((e): e is ToolEntry => e.type === 'tool' && e.callId === 'call_d1')!;
	assert.equal(card.subagent?.waiting, 1);
	assert.equal(card.subagent?.calls[0].status, 'awaiting_approval');
	assert.equal(s.entries.filter((e) => e.type === 'tool').length, 1);
	// Re-sent (session/resume's pending): not shown twice.
	s = reduce(s, { type: 'approvalRequest', params: childApproval });
	assert.equal(s.entries.filter((e) => e.type === 'waiting').length, 1);
	s = reduce(s, { type: 'approvalResolved', params: { requestId: 'ap_12', sessionId: C, decision: 'allow_once', reason: 'person', ...nest } });
	assert.equal(s.entries.filter((e) => e.type === 'waiting').length, 0);
	const d = s.entries.find((e) => e.type === 'decision');
	assert.ok(d && d.type === 'decision');
	assert.equal(d.label, 'Allow once');
	assert.match(d.title ?? '', /^subagent: /);
	assert.equal((s.entries.find((e) => e.type === 'tool') as ToolEntry).subagent?.waiting, 0);
});

test("another session's subagent's approval stays out", () => {
	const s = run([...start, { type: 'approvalRequest', params: { ...childApproval, sessionId: 's_other_child', parentSessionId: 's_other' } }]);
	assert.equal(s.entries.filter((e) => e.type === 'waiting').length, 0);
});

test("a subagent's approval pending on resume (before any of its frames) is still shown", () => {
	const s = run([{ type: 'approvalRequest', params: childApproval }]);
	const w = s.entries.find((e): e is WaitingEntry => e.type === 'waiting');
	assert.ok(w);
	assert.match(w.title, /^subagent — Run go test/);
});

test("a subagent's elicitation is shown and goes away when resolved", () => {
	let s = run([...start, { type: 'elicitationRequest', params: { requestId: 'el_1', sessionId: C, ...nest, mode: 'form', server: 'docs', message: 'Which branch?', fields: [] } as any }]);
	const w = s.entries.find((e): e is WaitingEntry => e.type === 'waiting');
	assert.ok(w);
	assert.match(w.title, /^subagent: .* — docs asks for input$/);
	s = reduce(s, { type: 'elicitationResolved', params: { requestId: 'el_1', sessionId: C, action: 'cancel', reason: 'cancelled', ...nest } as any });
	assert.equal(s.entries.filter((e) => e.type === 'waiting').length, 0);
});

test("a subagent's progress nests under the delegate call, never as the parent's answer", () => {
	const s = run([
		...start,
		{ type: 'delta', params: { sessionId: C, turnId: 't_3', text: 'a.go: A adds two ints.\n', ...nest } },
		{ type: 'toolCall', params: { sessionId: C, turnId: 't_3', callId: 'call_s1', name: 'read_file', kind: 'read', title: 'Read a.go', status: 'completed', ...nest } },
		{ type: 'reasoning', params: { sessionId: C, turnId: 't_3', text: 'thinking', ...nest } },
		{ type: 'usage', params: { sessionId: C, turnId: 't_3', inputTokens: 800, outputTokens: 50, contextTokens: 530, contextWindow: 400000, ...nest } as any },
		{ type: 'turnCompleted', params: { sessionId: C, turnId: 't_3', status: 'completed', ...nest } },
		delegate('completed', { output: 'a.go: A adds two ints.' }),
	]);
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user', 'tool'],
		'no assistant, reasoning, user or turnEnd entry of the subagent',
	);
	assert.equal(s.runningTurn, 't_2', "the subagent's turn/completed does not end the parent's");
	assert.equal(s.usage, undefined, "the subagent's usage is not the parent's");
	const card = s.entries[1] as ToolEntry;
	assert.equal(card.status, 'completed');
	assert.equal(card.subagent?.status, 'completed');
	assert.equal(card.subagent?.text, 'a.go: A adds two ints.\n');
	assert.deepEqual(card.subagent?.calls, [{ callId: 'call_s1', title: 'Read a.go', status: 'completed' }]);
	const html = renderEntry(card);
	assert.match(html, /class="subagent-line"/);
	assert.match(html, /Subagent completed: 1 call · done/);
	assert.match(html, /<details class="subagent">/);
	assert.match(html, /Read a\.go/);
});

test("a subagent's own subagent nests under the subagent's call", () => {
	const n2 = { parentSessionId: C, parentTurnId: 't_3', parentCallId: 'call_s9' };
	const s = run([
		...start,
		{ type: 'toolCall', params: { sessionId: C, turnId: 't_3', callId: 'call_s9', name: 'delegate', title: 'Subagent (ask): Inner', arguments: '{"task":"Inner"}', status: 'running', subagent: { sessionId: G, mode: 'ask' }, ...nest } },
		{ type: 'turnStarted', params: { sessionId: G, turnId: 't_9', input: 'Inner', ...n2 } },
		{ type: 'toolCall', params: { sessionId: G, turnId: 't_9', callId: 'call_g1', name: 'list_dir', title: 'List .', status: 'running', ...n2 } },
		{ type: 'approvalRequest', params: { ...childApproval, requestId: 'ap_g', sessionId: G, turnId: 't_9', callId: 'call_g2', ...n2 } },
	]);
	const card = s.entries.find((e): e is ToolEntry => e.type === 'tool')!;
	const inner = card.subagent?.calls.find((c) => c.callId === 'call_s9')?.subagent;
	assert.equal(inner?.sessionId, G);
	assert.equal(inner?.calls[0].title, 'List .');
	const w = s.entries.find((e): e is WaitingEntry => e.type === 'waiting');
	assert.match(w?.title ?? '', /^subagent: Inner — /);
});

test("a subagent's frames whose parent names no session are ignored; the parent's own frames are unchanged", () => {
	const s = run([...start, { type: 'delta', params: { sessionId: 's_x', turnId: 't_1', text: 'nope', parentSessionId: 's_y' } }, { type: 'delta', params: { sessionId: P, turnId: 't_2', text: 'Done.' } }]);
	assert.deepEqual(
		s.entries.map((e) => [e.type, 'text' in e ? e.text : '']),
		[
			['user', 'look at a and b'],
			['tool', ''],
			['assistant', 'Done.'],
		],
	);
});

test("session/list's subagent sessions come right after their parent, one level deeper; orphans last", () => {
	const row = (sessionId: string, parentId?: string) => ({ sessionId, ...(parentId ? { parentId } : {}) });
	const out = nestSessions([row('s_a'), row('s_c1', 's_b'), row('s_b'), row('s_g', 's_c1'), row('s_lost', 's_gone'), row('s_loop', 's_loop')]);
	assert.deepEqual(
		out.map((r) => [r.session.sessionId, r.depth]),
		[
			['s_a', 0],
			['s_b', 0],
			['s_c1', 1],
			['s_g', 2],
			['s_lost', 1],
			['s_loop', 1],
		],
	);
});

test("a subagent's session resumed read-only keeps the reason in the state (the composer shows it)", () => {
	const s = fromHistory({
		session: { sessionId: C, title: 'Summarise', createdAt: '', updatedAt: '', turns: 1, parentId: P },
		history: [{ type: 'user', turnId: 't_3', text: task }],
		pending: [],
		readOnly: true,
		readOnlyReason: `this is a subagent's session: it did one task for session ${P} and is read-only; ask in that session`,
	});
	assert.match(s.readOnly ?? '', /^this is a subagent's session/);
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user'],
	);
});

test('a delegate call waiting for a free slot says so until its subagent has a session', () => {
	const waiting: Action = {
		type: 'toolCall',
		params: { sessionId: P, turnId: 't_2', callId: 'call_d1', name: 'delegate', kind: 'other', title: `Subagent (ask): ${task}`, status: 'running', subagent: { mode: 'ask', waiting: true } },
	};
	let s = run([{ type: 'turnStarted', params: { sessionId: P, turnId: 't_2', input: 'x' } }, waiting]);
	let card = s.entries.find((e): e is ToolEntry => e.type === 'tool')!;
	assert.equal(card.waitingSlot, true);
	assert.match(renderEntry(card), /waiting for a free slot/);
	s = run([delegate('running')], s);
	card = s.entries.find((e): e is ToolEntry => e.type === 'tool')!;
	assert.equal(card.waitingSlot, undefined);
	assert.doesNotMatch(renderEntry(card), /free slot/);
	assert.match(renderEntry(card), /Subagent running/);
});

test("a resumed session's finished delegate call shows no empty subagent summary", () => {
	const s = fromHistory({
		session,
		history: [
			{ type: 'user', turnId: 't_2', text: 'x' },
			{ type: 'toolCall', turnId: 't_2', callId: 'call_d1', name: 'delegate', title: `Subagent (ask): ${task}`, arguments: JSON.stringify({ task }), status: 'completed', output: 'done', subagent: { sessionId: C, mode: 'ask' } },
		],
		pending: [],
	});
	const card = s.entries.find((e): e is ToolEntry => e.type === 'tool')!;
	assert.equal(card.subagent?.task, task, 'followed, so a late question is still named');
	assert.doesNotMatch(renderEntry(card), /subagent-line/);
});

test("a subagent's text after a call starts a new line of its answer", () => {
	const s = run([
		...start,
		{ type: 'delta', params: { sessionId: C, turnId: 't_3', text: 'Running it.', ...nest } },
		{ type: 'toolCall', params: { sessionId: C, turnId: 't_3', callId: 'call_s1', name: 'bash', title: 'Run echo', status: 'completed', ...nest } },
		{ type: 'delta', params: { sessionId: C, turnId: 't_3', text: 'It printed ok.', ...nest } },
	]);
	const card = s.entries.find((e): e is ToolEntry => e.type === 'tool')!;
	assert.equal(card.subagent?.text, 'Running it.\nIt printed ok.');
	assert.equal(card.subagent?.latest, 'It printed ok.');
});

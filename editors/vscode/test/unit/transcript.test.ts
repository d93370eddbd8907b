import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Action, TranscriptState, initialState, reduce, fromHistory, ToolEntry } from '../../src/chat/transcript';
import type { ApprovalRequest } from '../../src/protocol/types';

const S = 's_1';
const session = { sessionId: S, title: 't', createdAt: '2026-11-30T23:15:00Z', updatedAt: '2026-11-30T23:15:00Z', turns: 0 };

function run(actions: Action[], start: TranscriptState = initialState(session)): TranscriptState {
	return actions.reduce(reduce, start);
}

const approval: ApprovalRequest = {
	requestId: 'ap_1',
	sessionId: S,
	turnId: 't_1',
	callId: 'c1',
	kind: 'tool_call',
	tool: 'bash',
	title: 'Run go test ./...',
	command: 'go test ./...',
	cwd: '/w',
	options: [],
};

test('deltas of one turn stream into one assistant message', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'hi' } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'All ' } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'tests pass.' } },
	]);
	assert.deepEqual(
		s.entries.map((e) => [e.type, 'text' in e ? e.text : '']),
		[
			['user', 'hi'],
			['assistant', 'All tests pass.'],
		],
	);
	assert.equal(s.runningTurn, 't_1');
});

test('text after a tool call starts a new assistant message below the card', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'hi' } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'Running.' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'pending' } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'Done.' } },
	]);
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user', 'assistant', 'tool', 'assistant'],
	);
});

test('a tool card follows its status, streams output, and a final status is never reopened', () => {
	const base: Action[] = [
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'pending' } },
	];
	let s = run(base);
	const card = () => s.entries.find((e) => e.type === 'tool') as ToolEntry;
	assert.equal(card().title, 'bash', 'the name stands in until kin sends a title');
	for (const status of ['awaiting_approval', 'running'] as const) {
		s = reduce(s, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', title: 'Run ls', status } });
		assert.equal(card().status, status);
	}
	s = reduce(s, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'running', outputDelta: 'a\n' } });
	s = reduce(s, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'running', outputDelta: 'b\n' } });
	assert.equal(card().output, 'a\nb\n');
	assert.equal(card().title, 'Run ls');
	s = reduce(s, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'output_limit', output: 'a\nb\n[cut]' } });
	assert.equal(card().status, 'output_limit');
	assert.equal(card().output, 'a\nb\n[cut]');
	const late = reduce(s, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'running', outputDelta: 'z' } });
	assert.equal(late, s, 'a late running after a final status changes nothing');
	for (const final of ['completed', 'failed', 'denied', 'unknown'] as const) {
		const t = run([...base, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: final } }]);
		assert.equal((t.entries[1] as ToolEntry).status, final);
	}
});

test('a pending approval shows inline and is replaced by its decision when resolved', () => {
	let s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'bash', status: 'pending' } },
		{ type: 'approvalRequest', params: approval },
	]);
	const waiting = s.entries.find((e) => e.type === 'waiting');
	assert.ok(waiting && waiting.type === 'waiting');
	assert.equal(waiting.title, 'Run go test ./...');
	assert.match(waiting.detail ?? '', /\$ go test \.\/\.\.\.\s+\(in \/w\)/);
	assert.equal((s.entries[1] as ToolEntry).status, 'awaiting_approval');
	// The same request again (a resume's `pending`) is not shown twice.
	assert.equal(reduce(s, { type: 'approvalRequest', params: approval }), s);
	s = reduce(s, { type: 'approvalResolved', params: { requestId: 'ap_1', sessionId: S, decision: 'deny', reason: 'person' } });
	assert.equal(
		s.entries.some((e) => e.type === 'waiting'),
		false,
	);
	const d = s.entries[s.entries.length - 1];
	assert.equal(d.type, 'decision');
	assert.equal(d.type === 'decision' && d.decision, 'deny');
});

test('an elicitation waits inline until resolved', () => {
	let s = run([{ type: 'elicitationRequest', params: { requestId: 'el_1', sessionId: S, server: 'everything', mode: 'form', message: 'details?' } }]);
	assert.equal(s.entries.length, 1);
	assert.match((s.entries[0] as any).title, /everything asks for input/);
	s = reduce(s, { type: 'elicitationResolved', params: { requestId: 'el_1', action: 'decline', reason: 'person' } });
	assert.equal(s.entries.length, 0);
});

test('notifications of another session are ignored', () => {
	const s0 = initialState(session);
	const s = run(
		[
			{ type: 'turnStarted', params: { sessionId: 's_other', turnId: 't_9', input: 'x' } },
			{ type: 'delta', params: { sessionId: 's_other', turnId: 't_9', text: 'x' } },
			{ type: 'approvalRequest', params: { ...approval, sessionId: 's_other' } },
		],
		s0,
	);
	assert.equal(s, s0);
});

test('a turn ends: running clears; failures keep their error', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } },
		{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_1', status: 'failed', error: 'HTTP 401' } },
	]);
	assert.equal(s.runningTurn, undefined);
	const end = s.entries[s.entries.length - 1];
	assert.deepEqual(end.type === 'turnEnd' && [end.status, end.error], ['failed', 'HTTP 401']);
});

test('a resumed session redraws its history and shows what still waits', () => {
	const s = fromHistory({
		session,
		history: [
			{ type: 'user', turnId: 't_1', text: 'run the tests' },
			{
				type: 'toolCall',
				turnId: 't_1',
				callId: 'call_1',
				name: 'bash',
				kind: 'execute',
				title: 'Run go test ./...',
				arguments: '{"command":"go test ./..."}',
				status: 'completed',
				output: 'ok\n',
			},
			{ type: 'decision', turnId: 't_1', callId: 'call_1', requestId: 'ap_1', approvalKind: 'tool_call', decision: 'allow_once', reason: 'person', title: 'Run go test ./...' },
			{ type: 'assistant', turnId: 't_1', text: 'All tests pass.' },
			{ type: 'turn', turnId: 't_1', status: 'completed' },
			{ type: 'user', turnId: 't_2', text: 'again' },
		],
		pending: [{ ...approval, requestId: 'ap_2', turnId: 't_2', callId: 'call_2' }],
		runningTurnId: 't_2',
	});
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user', 'tool', 'decision', 'assistant', 'turnEnd', 'user', 'waiting'],
	);
	assert.equal((s.entries[1] as ToolEntry).output, 'ok\n');
	assert.equal(s.runningTurn, 't_2', 'kin runs t_2');
	// Keys stay unique.
	assert.equal(new Set(s.entries.map((e) => e.key)).size, s.entries.length);
});

test('a turn without an end that kin does not run is not shown running', () => {
	const s = fromHistory({
		session,
		history: [{ type: 'user', turnId: 't_1', text: 'another kin runs this' }],
		pending: [],
		readOnly: true,
		readOnlyReason: 'this session is open in another kin',
	});
	assert.equal(s.runningTurn, undefined);
});

test('reduce never changes the state it is given', () => {
	const s0 = run([{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } }]);
	const copy = JSON.parse(JSON.stringify(s0));
	reduce(s0, { type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'y' } });
	reduce(s0, { type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c', name: 'n', status: 'running' } });
	assert.deepEqual(s0, copy);
});

test('a turn has one plan card, replaced in place as the plan changes, also when resumed', () => {
	const p1 = [
		{ content: 'read the test', status: 'in_progress' as const },
		{ content: 'fix it', status: 'pending' as const },
	];
	const p2 = [
		{ content: 'read the test', status: 'completed' as const },
		{ content: 'fix it', status: 'in_progress' as const, priority: 'high' as const },
	];
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'fix' } },
		{ type: 'plan', params: { sessionId: S, turnId: 't_1', entries: p1 } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'Reading.' } },
		{ type: 'plan', params: { sessionId: S, turnId: 't_1', entries: p2 } },
		{ type: 'plan', params: { sessionId: 'other', turnId: 't_9', entries: p1 } },
	]);
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user', 'plan', 'assistant'],
	);
	assert.deepEqual(s.entries[1].type === 'plan' && s.entries[1].entries, p2);
	const r = fromHistory({
		session,
		pending: [],
		history: [
			{ type: 'user', turnId: 't_1', text: 'fix' },
			{ type: 'plan', turnId: 't_1', callId: 'c1', entries: p1 },
			{ type: 'plan', turnId: 't_1', callId: 'c2', entries: p2 },
			{ type: 'mode', mode: 'auto-edit' },
		],
	});
	assert.deepEqual(
		r.entries.map((e) => e.type),
		['user', 'plan', 'notice'],
	);
	assert.equal(r.mode, 'auto-edit');
});

test('a turn whose edits completed offers undo; an undo marks it and says what came back', () => {
	let s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'edit' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'c1', name: 'edit_file', kind: 'edit', status: 'completed' } },
		{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_1', status: 'completed' } },
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_2', input: 'look' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_2', callId: 'c2', name: 'edit_file', kind: 'edit', status: 'denied' } },
		{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_2', status: 'completed' } },
	]);
	const ends = () => s.entries.filter((e) => e.type === 'turnEnd').map((e) => e.type === 'turnEnd' && [e.turnId, !!e.changedFiles, !!e.undone]);
	assert.deepEqual(ends(), [
		['t_1', true, false],
		['t_2', false, false],
	]);
	s = reduce(s, { type: 'undone', result: { turnId: 't_1', restored: ['/w/a.go'], conflicts: [{ path: '/w/b.go', reason: 'changed since' }] } });
	assert.deepEqual(ends()[0], ['t_1', true, true]);
	assert.equal(s.entries[s.entries.length - 1].type, 'undo');
	// /undo typed as a command does the same, and /mode sets the mode.
	s = reduce(s, { type: 'command', sessionId: S, command: { name: 'mode', text: 'Mode: ask', result: { sessionId: S, mode: 'ask' } } });
	assert.equal(s.mode, 'ask');
	assert.equal(s.entries[s.entries.length - 1].type, 'command');
	s = reduce(s, { type: 'configured', result: { sessionId: S, mode: 'auto-edit', model: 'gpt-5.1' } });
	assert.equal(s.mode, 'auto-edit');
});

test('reasoning streams into one folded entry before the answer; usage feeds the gauge', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'why', parts: [{ type: 'file', path: 'main.go', bytes: 30 }] } },
		{ type: 'reasoning', params: { sessionId: S, turnId: 't_1', text: '**Checking**\n\nIt ' } },
		{ type: 'reasoning', params: { sessionId: S, turnId: 't_1', text: 'writes.' } },
		{ type: 'delta', params: { sessionId: S, turnId: 't_1', text: 'Yes.' } },
		{ type: 'usage', params: { sessionId: S, turnId: 't_1', inputTokens: 10, outputTokens: 2, contextTokens: 12, contextWindow: 100 } },
		{ type: 'usage', params: { sessionId: 'other', turnId: 't_9', inputTokens: 1, outputTokens: 1, contextTokens: 99, contextWindow: 100 } },
	]);
	assert.deepEqual(
		s.entries.map((e) => [e.type, 'text' in e ? e.text : '']),
		[
			['user', 'why'],
			['reasoning', '**Checking**\n\nIt writes.'],
			['assistant', 'Yes.'],
		],
	);
	assert.deepEqual((s.entries[0] as any).parts, [{ type: 'file', path: 'main.go', bytes: 30 }]);
	assert.deepEqual(s.usage, { contextTokens: 12, contextWindow: 100, inputTokens: 10, outputTokens: 2 });
	// The turn's end carries the final usage; a turn recorded without a window leaves the gauge alone.
	const done = run([{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_1', status: 'completed', usage: { inputTokens: 20, outputTokens: 4, contextTokens: 24, contextWindow: 100 } } }], s);
	assert.equal(done.usage?.contextTokens, 24);
	const old = run([{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_1', status: 'completed', usage: { inputTokens: 0, outputTokens: 0 } } }], s);
	assert.equal(old.usage?.contextTokens, 12);
});

test('a resumed session shows its reasoning, compactions, attachments, model and last usage', () => {
	const s = fromHistory({
		session,
		model: 'gpt-5.1',
		effort: 'low',
		instructions: [{ path: 'AGENTS.md', bytes: 12 }],
		pending: [],
		history: [
			{ type: 'user', turnId: 't_1', text: 'q', parts: [{ type: 'selection', path: 'a.go', range: { start: { line: 1, character: 0 }, end: { line: 2, character: 0 } }, bytes: 5 }] },
			{ type: 'reasoning', turnId: 't_1', text: 'thinking' },
			{ type: 'assistant', turnId: 't_1', text: 'a' },
			{ type: 'turn', turnId: 't_1', status: 'completed', usage: { inputTokens: 5, outputTokens: 1, contextTokens: 6, contextWindow: 50 } },
			{ type: 'compaction', reason: 'threshold', text: '## What was asked\nq' },
		] as any,
	});
	assert.deepEqual(
		s.entries.map((e) => e.type),
		['user', 'reasoning', 'assistant', 'turnEnd', 'compaction'],
	);
	assert.equal((s.entries[0] as any).parts[0].path, 'a.go');
	assert.deepEqual(s.setup, { model: 'gpt-5.1', effort: 'low', instructions: [{ path: 'AGENTS.md', bytes: 12 }] });
	assert.equal(s.usage?.contextWindow, 50);
	const c = run([{ type: 'configured', result: { sessionId: S, mode: 'agent', model: 'small' } }], s);
	assert.deepEqual([c.setup?.model, c.setup?.effort], ['small', undefined]);
});

test('a turn/started that arrives after a resume already showing its question adds no second question', () => {
	const resumed = fromHistory({ session, pending: [], history: [{ type: 'user', turnId: 't_2', text: 'again' }] as any, runningTurnId: 't_2' });
	const s = run([{ type: 'turnStarted', params: { sessionId: S, turnId: 't_2', input: 'again' } }], resumed);
	assert.equal(s.entries.filter((e) => e.type === 'user').length, 1);
	assert.equal(s.runningTurn, 't_2');
});

test('a call an MCP server runs as a task shows working with where it stands, until its final status', async () => {
	const { renderEntry } = await import('../../src/webview/render');
	const call = { sessionId: S, turnId: 't_1', callId: 'j1', name: 'mcp__jobs__job', title: 'Call job on jobs' };
	let s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } },
		{ type: 'toolCall', params: { ...call, status: 'running' } },
		{ type: 'toolCall', params: { ...call, status: 'working', statusMessage: 'task working: indexing 1/2' } },
		{ type: 'toolCall', params: { ...call, status: 'working', statusMessage: 'task working: indexing 2/2' } },
	]);
	const card = () => s.entries.find((e) => e.type === 'tool') as ToolEntry;
	assert.equal(card().status, 'working');
	assert.equal(card().statusMessage, 'task working: indexing 2/2');
	const html = renderEntry(card());
	assert.match(html, /working: task working: indexing 2\/2/);
	assert.match(html, /<details open>/, 'a working card is open, as a running one');
	s = reduce(s, { type: 'toolCall', params: { ...call, status: 'completed', output: 'indexed 2 files' } });
	assert.equal(card().status, 'completed');
	assert.equal(card().statusMessage, undefined, 'the message goes with working only');
});

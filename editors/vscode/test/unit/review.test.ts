// Issue 27's VS Code items that are logic: which keys the models need and what the person is told
// about them, a turn's changed files and their hunks (where they sit after later typing), a
// re-sent approval, an acknowledgement, the turn an undo names, and the status bar while the
// person is asked something.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droppedKeysText, keyChoices, notConfiguredText, setKeyHint } from '../../src/apiKeys';
import { Action, TranscriptState, initialState, reduce, fromHistory, turnChanges, firstWords } from '../../src/chat/transcript';
import { countChanges, hunks, lines, locate } from '../../src/lineDiff';
import type { ApprovalRequest, ModelEntry, ToolCallParams } from '../../src/protocol/types';
import { describe } from '../../src/statusText';
import { decisionText, renderCard, renderEntry, renderUndo } from '../../src/webview/render';
import { approvalCard } from '../../src/approvalText';

const S = 's_1';
const session = { sessionId: S, title: 't', createdAt: '2026-11-30T23:15:00Z', updatedAt: '2026-11-30T23:15:00Z', turns: 0 };
const run = (actions: Action[], start: TranscriptState = initialState(session)) => actions.reduce(reduce, start);

const model = (id: string, apiKeyEnv: string, configured: boolean): ModelEntry => ({
	id,
	name: id.toUpperCase(),
	contextWindow: 1000,
	efforts: [],
	api: 'responses',
	images: true,
	apiKeyEnv,
	configured,
	...(configured ? {} : { missing: `set ${apiKeyEnv}` }),
});

test("Set API Key offers each model's key once, the default model's first, and kin.env's dropped names", () => {
	const choices = keyChoices([model('a', 'OPENAI_API_KEY', true), model('b', 'SECOND_KEY', false), model('c', 'OPENAI_API_KEY', true)], 'b', ['TYPO_KEY', 'SECOND_KEY']);
	assert.deepEqual(
		choices.map((c) => [c.name, c.models, c.configured]),
		[
			['SECOND_KEY', ['B'], false],
			['OPENAI_API_KEY', ['A', 'C'], true],
			['TYPO_KEY', [], false],
		],
	);
	// Before kin listed its models, the one key there is.
	assert.deepEqual(
		keyChoices([], undefined).map((c) => c.name),
		['OPENAI_API_KEY'],
	);
});

test('the first-run message names kin.env and Set API Key, not only the environment and settings.json', () => {
	const t = notConfiguredText('set OPENAI_API_KEY (and OPENAI_BASE_URL …), or put them in $KIN_HOME/settings.json');
	assert.match(t, /kin: Set API Key/);
	assert.match(t, /kin\.env/);
	assert.match(t, /OPENAI_BASE_URL, KIN_MODEL/);
	assert.match(t, /kin says: set OPENAI_API_KEY/);
	assert.match(setKeyHint('SECOND_KEY'), /"kin: Set API Key" and pick SECOND_KEY/);
	// A key put into kin.env is named, with why it is not passed and where it goes instead.
	const d = droppedKeysText(['SECOND_KEY']);
	assert.match(d, /SECOND_KEY is not passed to kin/);
	assert.match(d, /settings\.json/);
	assert.match(d, /kin: Set API Key/);
});

test('a turn lists the files it changed, from before its first change to after its last', () => {
	const edit = (callId: string, path: string, oldText: string, newText: string): Action => ({
		type: 'toolCall',
		params: { sessionId: S, turnId: 't_1', callId, name: 'edit_file', kind: 'edit', status: 'completed', content: [{ type: 'diff', diff: { path, oldText, newText } }] } as ToolCallParams,
	});
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'fix both' } },
		edit('c1', '/w/a.go', 'a\nb\nc\n', 'a\nB\nc\n'),
		edit('c2', '/w/b.go', '', 'new\n'),
		edit('c3', '/w/a.go', 'a\nB\nc\n', 'a\nB\nc\nd\n'),
		{ type: 'turnCompleted', params: { sessionId: S, turnId: 't_1', status: 'completed' } },
	]);
	assert.deepEqual(turnChanges(s.entries, 't_1'), [
		{ path: '/w/a.go', before: 'a\nb\nc\n', after: 'a\nB\nc\nd\n' },
		{ path: '/w/b.go', before: '', after: 'new\n' },
	]);
	const end = s.entries[s.entries.length - 1];
	assert.ok(end.type === 'turnEnd');
	assert.deepEqual(end.files, [
		{ path: '/w/a.go', added: 2, removed: 1 },
		{ path: '/w/b.go', added: 1, removed: 0 },
	]);
	const html = renderEntry(end);
	assert.match(html, /data-action="turnDiff" data-turn="t_1" data-path="\/w\/a\.go"/);
	assert.match(html, /Changed 2 files/);
});

test("kin's hunks are found where they are after someone typed elsewhere, and not where someone typed into them", () => {
	const before = lines('one\ntwo\nthree\nfour\nfive\n');
	const left = lines('one\nTWO\nthree\nfour\nfive\nsix\n');
	const kin = hunks(before, left);
	assert.deepEqual(
		kin.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines]),
		[
			[1, ['two'], 1, ['TWO']],
			[5, [], 5, ['six']],
		],
	);
	// Two lines typed at the top: both hunks move down by two.
	assert.deepEqual(
		locate(kin, left, lines('x\ny\none\nTWO\nthree\nfour\nfive\nsix\n')).map((x) => x.line),
		[3, 7],
	);
	// A line typed right above a hunk moves it; typed into it, the hunk is no longer offered.
	assert.deepEqual(
		locate(kin, left, lines('one\ntyped\nTWO\nthree\nfour\nfive\nsix\n')).map((x) => x.line),
		[2, 6],
	);
	assert.deepEqual(
		locate(kin, left, lines('one\nTWO!\nthree\nfour\nfive\nsix\n')).map((x) => [x.hunk.newLines, x.line]),
		[[['six'], 5]],
	);
	// A removal is found between the lines it left.
	const removed = hunks(lines('a\nb\nc\n'), lines('a\nc\n'));
	assert.deepEqual(locate(removed, lines('a\nc\n'), lines('z\na\nc\n')).map((x) => x.line), [2]);
	assert.deepEqual(locate(removed, lines('a\nc\n'), lines('a\nnew\nc\n')), [], 'typed exactly where kin removed lines');
	assert.deepEqual(countChanges('a\nb\n', 'a\nc\nd\n'), { added: 2, removed: 1 });
});

test('an approval sent again with the same requestId replaces its card, not a second one', () => {
	const first: ApprovalRequest = {
		requestId: 'ap_7',
		sessionId: S,
		turnId: 't_1',
		kind: 'tool_call',
		title: 'Edit a.go',
		diffs: [{ path: '/w/a.go', oldText: 'a\n', newText: 'b\n', unified: '' }],
		options: [{ optionId: 'deny', name: 'Deny', kind: 'reject_once' }],
	};
	const again: ApprovalRequest = { ...first, diffs: [{ path: '/w/a.go', oldText: 'a typed\n', newText: 'b\n', unified: '' }], warning: 'The file changed while this waited.' };
	let s = run([{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } }, { type: 'approvalRequest', params: first }]);
	s = reduce(s, { type: 'approvalRequest', params: again });
	assert.equal(s.entries.filter((e) => e.type === 'waiting').length, 1);
	assert.match(renderCard(approvalCard(again)), /a typed/);
});

test('an acknowledgement is recorded and shown as "Acknowledged", live and after a resume', () => {
	const ack: ApprovalRequest = {
		requestId: 'ap_3',
		sessionId: S,
		turnId: 't_2',
		kind: 'acknowledge_unknown',
		tool: 'bash',
		title: 'bash may already have run',
		options: [
			{ optionId: 'allow_once', name: 'Acknowledge and continue', kind: 'allow_once' },
			{ optionId: 'deny', name: 'Not now', kind: 'reject_once' },
		],
	};
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_2', input: 'next' } },
		{ type: 'approvalRequest', params: ack },
		{ type: 'approvalResolved', params: { requestId: 'ap_3', sessionId: S, decision: 'allow_once', reason: 'person' } },
	]);
	const live = s.entries[s.entries.length - 1];
	assert.match(renderEntry(live), /Acknowledged: bash may already have run/);
	assert.doesNotMatch(renderEntry(live), /Allowed once/);
	const resumed = fromHistory({
		session,
		history: [{ type: 'decision', turnId: 't_2', requestId: 'ap_3', approvalKind: 'acknowledge_unknown', decision: 'allow_once', reason: 'person', title: 'bash may already have run' }],
	} as never);
	assert.match(renderEntry(resumed.entries[0]), /Acknowledged: bash may already have run/);
	assert.equal(decisionText('deny', 'acknowledge_unknown'), 'Not acknowledged');
	assert.equal(decisionText('allow_once'), 'Allowed once');
});

test('an undo names the turn by its question, not its id', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_00000004', input: 'write two files\n\nand more words here' } },
		{ type: 'undone', result: { turnId: 't_00000004', restored: ['/w/a.txt'] } },
	]);
	const u = s.entries[s.entries.length - 1];
	assert.ok(u.type === 'undo');
	assert.equal(u.question, 'write two files');
	assert.match(renderEntry(u), /Undid “write two files”: restored 1 file/);
	assert.match(renderUndo({ turnId: 't_9', question: 'kin named it', restored: [] }), /Undid “kin named it”/);
	assert.match(renderUndo({ turnId: 't_9', restored: [] }), /Undid turn t_9/);
	assert.equal(firstWords('a'.repeat(70)).length, 61);
});

test('the status bar says waiting, not busy, while a form or a link waits for the person', () => {
	assert.match(describe({ service: 'ready', busy: true, waiting: 0, asking: 1 }).text, /waiting for your answer/);
	assert.equal(describe({ service: 'ready', busy: true, waiting: 0, asking: 1 }).warn, true);
	assert.match(describe({ service: 'ready', busy: true, waiting: 1, asking: 1 }).text, /waiting for approval \(2\)/);
	assert.match(describe({ service: 'ready', busy: true, waiting: 0, asking: 0 }).text, /busy/);
});

test('a refused call says why under its card (kin\'s words), and a command offers its terminal view', () => {
	const html = renderEntry({
		type: 'tool',
		key: 'e1',
		turnId: 't_1',
		callId: 'c1',
		name: 'write_file',
		kind: 'edit',
		title: 'Write a.txt',
		status: 'denied',
		output: 'Refused because the session is in ask mode, which offers no tools that change files or run commands; nothing was run or sent.',
	});
	assert.match(html, /class="why"[^]*in ask mode, which offers no tools that change files/);
	const cmd = renderEntry({ type: 'tool', key: 'e2', turnId: 't_1', callId: 'c2', name: 'bash', kind: 'execute', title: 'Run make', status: 'running', output: '' });
	assert.match(cmd, /data-action="terminal" data-call="c2"/);
});

test('a callId a model uses again in a later turn gets a card of its own (the earlier one stays as it ended)', () => {
	const s = run([
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_1', input: 'x' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_1', callId: 'call_slow', name: 'bash', status: 'unknown' } },
		{ type: 'turnStarted', params: { sessionId: S, turnId: 't_2', input: 'y' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_2', callId: 'call_slow', name: 'bash', status: 'pending' } },
		{ type: 'toolCall', params: { sessionId: S, turnId: 't_2', callId: 'call_slow', name: 'bash', status: 'running' } },
	]);
	const cards = s.entries.filter((e) => e.type === 'tool');
	assert.deepEqual(
		cards.map((c) => c.type === 'tool' && [c.turnId, c.status]),
		[
			['t_1', 'unknown'],
			['t_2', 'running'],
		],
	);
});

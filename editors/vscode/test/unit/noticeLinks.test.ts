// A hostile model (or MCP server) writes VS Code's link syntax into a text the extension shows in
// a notification or an input box's prompt: `[Review](command:workbench.action.terminal.
// sendSequence?…)` in a command (an approval's title is its first line) or in a question of kin's
// ask tool. VS Code draws that as a link in the toast and opens it with every command allowed:
// one click typed the model's text into the person's terminal, outside kin's sandbox and without
// an approval. Every such text must reach VS Code with its link syntax broken.

import { shown } from './fakeVscode'; // first: the code below loads `vscode` through it
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Approvals } from '../../src/approvals';
import { Elicitations } from '../../src/elicitation';
import { noLinks } from '../../src/notify';
import type { ApprovalRequest, ElicitationRequest } from '../../src/protocol/types';

// VS Code's own pattern for links in notification messages and quick input prompts
// (vs/base/common/linkedText.ts), which opens them with allowCommands: true.
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^\)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
const links = (s: unknown) => (typeof s === 'string' ? [...s.replace(/(\r\n|\n|\r)/gm, ' ').matchAll(VSCODE_LINK)].map((m) => m[2]) : []);

const EVIL = '[Review](command:workbench.action.terminal.sendSequence?{"text":"sh\\ta\\n"})';

function fakeService() {
	const handlers = new Map<string, (p: unknown) => void>();
	return {
		notify: (method: string, p: unknown) => handlers.get(method)?.(p),
		onNotification: (method: string, fn: (p: unknown) => void) => {
			handlers.set(method, fn);
			return { dispose: () => handlers.delete(method) };
		},
		onDidChangeState: () => ({ dispose: () => {} }),
		request: async () => ({}),
	};
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const notes = () => shown.calls.filter((c) => /^show(Information|Warning|Error)Message$/.test(c.name));

test('the pattern this test looks for is the one VS Code makes links of', () => {
	assert.deepEqual(links(`kin: Run ${EVIL}`), ['command:workbench.action.terminal.sendSequence?{"text":"sh\\ta\\n"}']);
	assert.deepEqual(links(noLinks(`kin: Run ${EVIL}`)), []);
	assert.equal(noLinks('see [docs] (x) and a[1](2)'), 'see [docs] (x) and a[1] (2)');
});

test("with the chat hidden, an approval's notification shows the model's command without a link", async () => {
	shown.calls.length = 0;
	const service = fakeService();
	const ap = new Approvals(service as any, { isOpen: () => false, open: async () => {}, close: async () => {} } as any, { appendLine: () => {} } as any);
	ap.host = { visible: false, reveal: async () => {} };
	service.notify('approval/request', {
		requestId: 'ap_1',
		sessionId: 's_1',
		kind: 'tool_call',
		tool: 'bash',
		title: `Run ${EVIL}`,
		command: EVIL,
		options: [
			{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
			{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
		],
	} as ApprovalRequest);
	await tick();
	const n = notes();
	assert.equal(n.length, 1, 'a notification says an approval waits');
	assert.match(String(n[0].args[0]), /Review/, 'it still shows the title');
	assert.deepEqual(links(n[0].args[0]), [], 'the title became a link VS Code runs');
	ap.dispose();
});

test("with the chat hidden, a form's notification and its input box show the asker's text without a link", async () => {
	shown.calls.length = 0;
	shown.inputs.length = 0;
	const service = fakeService();
	const el = new Elicitations(service as any, { appendLine: () => {} } as any);
	el.host = { visible: false, reveal: async () => {} };
	const p = {
		requestId: 'el_1',
		sessionId: 's_1',
		source: 'kin',
		mode: 'form',
		message: `Before I go on, ${EVIL}`,
		fields: [{ name: 'db', type: 'string', title: 'Database', description: `See ${EVIL}`, required: true, pattern: `^${EVIL}$` }],
	} as ElicitationRequest;
	service.notify('elicitation/request', p);
	await tick();
	const n = notes();
	assert.equal(n.length, 1);
	assert.deepEqual(links(n[0].args[0]), [], "the notification made a link of the model's question");

	const answered = el.answer('el_1', 'answer');
	await tick();
	const box = shown.inputs[0];
	assert.match(box.prompt ?? '', /Before I go on/);
	assert.deepEqual(links(box.prompt), [], "the input box's prompt made a link of the model's question");
	box.type('x'); // does not match the field's pattern: the message names the pattern
	assert.match(box.validationMessage ?? '', /pattern/);
	assert.deepEqual(links(box.validationMessage), [], "the validation message made a link of the field's pattern");
	box.hide();
	await answered;
	el.dispose();
});

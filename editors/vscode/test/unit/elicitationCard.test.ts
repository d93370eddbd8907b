// A form (an MCP server's, or kin's ask tool's) is a card first: receiving elicitation/request
// must never open an input by itself, since a quick input takes the keyboard from whoever is
// typing in an editor, and their Enter would send their keys as the answer.

import { shown } from './fakeVscode'; // first: the code below loads `vscode` through it
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Elicitations } from '../../src/elicitation';
import { formCard, notificationText } from '../../src/approvalText';
import { renderCard } from '../../src/webview/render';
import type { ElicitationRequest } from '../../src/protocol/types';

const OPENERS = ['createQuickPick', 'createInputBox', 'showInputBox', 'showQuickPick'];

/** A KinService stand-in: notifications the test plays, and the requests the extension sends. */
function fakeService() {
	const handlers = new Map<string, (p: unknown) => void>();
	const sent: { method: string; params: any }[] = [];
	return {
		sent,
		notify: (method: string, p: unknown) => handlers.get(method)?.(p),
		onNotification: (method: string, fn: (p: unknown) => void) => {
			handlers.set(method, fn);
			return { dispose: () => handlers.delete(method) };
		},
		onDidChangeState: () => ({ dispose: () => {} }),
		request: async (method: string, params: unknown) => {
			sent.push({ method, params });
			return {};
		},
	};
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const opened = () => shown.calls.filter((c) => OPENERS.includes(c.name)).map((c) => c.name);

function setup(visible: boolean) {
	shown.calls.length = 0;
	shown.inputs.length = 0;
	const service = fakeService();
	const output = { appendLine: () => {} };
	const revealed: string[] = [];
	const el = new Elicitations(service as any, output as any);
	el.host = { visible, reveal: async (id: string) => void revealed.push(id) };
	return { service, el, revealed };
}

const ask: ElicitationRequest = {
	requestId: 'el_ask_1',
	sessionId: 's_1',
	source: 'kin',
	mode: 'form',
	message: 'Which database should the tests use?',
	fields: [{ name: 'db', type: 'string', title: 'Database', required: true }],
} as ElicitationRequest;

test('an elicitation/request opens no input by itself: it waits as a card until Answer… is chosen', async () => {
	const { service, el } = setup(true);
	service.notify('elicitation/request', ask);
	await tick();
	await tick();
	assert.deepEqual(opened(), [], 'a form took the keyboard on arrival');
	const cards = el.cards();
	assert.equal(cards.length, 1);
	assert.equal(cards[0].what, 'form');
	assert.deepEqual(
		cards[0].buttons.map((b) => [b.optionId, b.deny]),
		[
			['decline', true],
			['cancel', false],
			['answer', false],
		],
	);
	assert.equal(service.sent.length, 0);

	const answered = el.answer('el_ask_1', 'answer');
	await tick();
	assert.deepEqual(opened(), ['createInputBox'], 'Answer… opens the form');
	assert.equal(el.cards()[0].answering, true, 'the card waits while the form is open');
	const box = shown.inputs[0];
	assert.match(box.title, /Database/);
	box.type('');
	assert.ok(box.validationMessage, 'the field is still checked: an empty required answer is refused');
	box.type('postgres');
	await answered;
	assert.deepEqual(service.sent, [{ method: 'elicitation/respond', params: { requestId: 'el_ask_1', action: 'accept', content: { db: 'postgres' } } }]);
});

test('Decline and Cancel on a form card answer so, without opening anything', async () => {
	for (const action of ['decline', 'cancel']) {
		const { service, el } = setup(true);
		service.notify('elicitation/request', { ...ask, requestId: `el_${action}` });
		await el.answer(`el_${action}`, action);
		assert.deepEqual(opened(), []);
		assert.deepEqual(service.sent, [{ method: 'elicitation/respond', params: { requestId: `el_${action}`, action } }]);
		service.notify('elicitation/resolved', { requestId: `el_${action}`, action, reason: 'person' });
		assert.equal(el.cards().length, 0, 'kin resolving it takes the card away');
	}
});

test('a form closed unsent (Escape declines, and kin fails to take it) leaves its card live again', async () => {
	const { service, el } = setup(true);
	service.request = async (method: string, params: unknown) => {
		service.sent.push({ method, params });
		throw new Error('connection lost');
	};
	service.notify('elicitation/request', ask);
	const answered = el.answer('el_ask_1', 'answer');
	await tick();
	shown.inputs[0].hide(); // Escape
	await answered;
	assert.equal(service.sent[0].params.action, 'decline');
	assert.equal(el.cards()[0].answering, false);
});

test('with the chat hidden, a notification names who asks and leads to the card', async () => {
	const { service, el, revealed } = setup(false);
	const server: ElicitationRequest = { requestId: 'el_srv', server: 'docs', mode: 'form', message: 'Which branch?', fields: [{ name: 'b', type: 'string' }] } as ElicitationRequest;
	service.notify('elicitation/request', server);
	await tick();
	assert.deepEqual(opened(), []);
	const note = shown.calls.find((c) => c.name === 'showWarningMessage');
	assert.deepEqual(note?.args, ['kin: docs asks you to fill in a form: Which branch?', 'Review']);
	assert.equal(el.cards().length, 1);
	assert.deepEqual(revealed, []); // the fake person did not pick Review
});

test("a form's card says who asks and what, Decline first and the default", () => {
	const c = formCard(ask);
	assert.equal(c.heading, 'kin asks you a question');
	assert.equal(c.title, 'Which database should the tests use?');
	assert.deepEqual(c.facts[0], { label: 'Asked by', value: 'kin (its model, with the ask tool)' });
	assert.match(c.warning ?? '', /goes to the model .*Never type a password/);
	assert.equal(notificationText(c), 'kin: kin asks you a question: Which database should the tests use?');
	const s = formCard({ requestId: 'el_2', server: 'docs', mode: 'form', message: 'Which branch?', fields: [{ name: 'b', type: 'string', title: 'Branch' }] } as ElicitationRequest);
	assert.equal(s.heading, 'docs asks you to fill in a form');
	assert.deepEqual(s.facts, [
		{ label: 'Asked by', value: 'the MCP server docs' },
		{ label: 'Field', value: 'Branch' },
	]);
	assert.equal(s.warning, 'What you answer goes to docs.');
	const html = renderCard(s);
	assert.match(html, /<button class="deny" data-option="decline" data-default="true">Decline<\/button><button class="secondary" data-option="cancel">Cancel<\/button><button class="allow" data-option="answer">Answer…<\/button>/);
	assert.match(renderCard({ ...s, answering: true }), /Answer in the input at the top of the window/);
});

// A form kin closes (its turn cancelled) says who asked, in a warning; a link card kin closes
// goes without one (it was never an input the person was filling in), as does a form the person
// answered.
test('a form kin closes is named in a warning; a link or an answered form is not', async () => {
	const { service } = setup(true);
	const link = { requestId: 'el_link_1', sessionId: 's_1', server: 'docs', mode: 'url', url: 'https://example.com/sign-in', message: 'Sign in' } as ElicitationRequest;
	const answered = { ...ask, requestId: 'el_ask_2' } as ElicitationRequest;
	for (const p of [ask, link, answered]) {
		service.notify('elicitation/request', p);
	}
	await tick();
	shown.calls.length = 0;
	service.notify('elicitation/resolved', { requestId: link.requestId, sessionId: 's_1', action: 'cancel', reason: 'cancelled' });
	service.notify('elicitation/resolved', { requestId: answered.requestId, sessionId: 's_1', action: 'accept', reason: 'person' });
	service.notify('elicitation/resolved', { requestId: ask.requestId, sessionId: 's_1', action: 'cancel', reason: 'cancelled' });
	const warnings = shown.calls.filter((c) => c.name === 'showWarningMessage').map((c) => c.args[0]);
	assert.deepEqual(warnings, ['kin closed the question from kin: its turn or request was cancelled']);
});

// A resource template picked from the `@` list, filled in (PROTOCOL.md "completion/complete"):
// its variables asked in order, completion/complete sent (through the fake kin, over the real
// framing) with the values already chosen, the server's values shown, free text accepted, a
// cancel that fills nothing, RFC 6570 expansion and encoding, and the input text the page puts
// in place of the picked template.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ArgumentQuestion, encodeValue, expandTemplate, fillTemplate, templateVariables, type ValuesShown } from '../../src/chat/resourceTemplates';
import { resourceRows, resourceWords, templateOf, templateWords } from '../../src/chat/resources';
import { Connection, type Requester } from '../../src/protocol/connection';
import type { CompletionCompleteParams, CompletionCompleteResult, McpResourcesResult } from '../../src/protocol/types';
import { placeFilled } from '../../src/webview/completion';
import { startFakeKin } from './fakeKin';

// The pause before a request is the caller's timer; here it runs at once (no test waits on time).
const now = { schedule: (fn: () => void) => (fn(), () => {}) };

/** Types `value` into a question and resolves with what it shows once the server answered. */
function typeAndWait(q: ArgumentQuestion, value: string): Promise<ValuesShown> {
	return new Promise((resolve) => {
		q.onShown = (s) => {
			if (!s.busy) {
				resolve(s);
			}
		};
		q.typed(value);
	});
}

function completionParams(received: any[]): CompletionCompleteParams[] {
	return received.filter((m) => m.method === 'completion/complete').map((m) => m.params);
}

test('the variables are asked in order, each request carries the values chosen before, the values are shown, free text is accepted', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const titles: string[] = [];
	const shown: Record<string, ValuesShown[]> = {};
	const uri = await fillTemplate(
		c,
		'notes',
		'notes://{project}/{note}',
		async (q) => {
			titles.push(q.title);
			const seen = (shown[q.variable] = [] as ValuesShown[]);
			if (q.variable === 'project') {
				seen.push(await typeAndWait(q, ''));
				seen.push(await typeAndWait(q, 'k'));
				return seen[1].items[0].value; // picks the server's value
			}
			seen.push(await typeAndWait(q, 'd'));
			seen.push(await typeAndWait(q, 'draft 2/ü'));
			const typed = seen[1].items.find((i) => i.typed);
			return typed?.value; // a value the server does not know, as typed
		},
		now,
	);
	assert.deepEqual(titles, ['notes:notes://{project}/{note} — project (1 of 2)', 'notes:notes://{project}/{note} — note (2 of 2)']);
	assert.deepEqual(shown.project, [
		{ items: [{ value: 'kin' }, { value: 'web' }], busy: false },
		{ items: [{ value: 'kin' }, { value: 'k', typed: true }], busy: false },
	]);
	assert.deepEqual(shown.note, [
		{ items: [{ value: 'design' }, { value: 'deploy' }, { value: 'd', typed: true }], busy: false },
		{ items: [{ value: 'draft 2/ü', typed: true }], busy: false },
	]);
	const ref = { type: 'ref/resource', uri: 'notes://{project}/{note}' };
	assert.deepEqual(completionParams(kin.received), [
		{ server: 'notes', ref, argument: { name: 'project', value: '' }, context: { arguments: {} } },
		{ server: 'notes', ref, argument: { name: 'project', value: 'k' }, context: { arguments: {} } },
		{ server: 'notes', ref, argument: { name: 'note', value: 'd' }, context: { arguments: { project: 'kin' } } },
		{ server: 'notes', ref, argument: { name: 'note', value: 'draft 2/ü' }, context: { arguments: { project: 'kin' } } },
	]);
	assert.equal(uri, 'notes://kin/draft%202%2F%C3%BC', 'the typed value, percent-encoded as a {var} requires');
	kin.close();
});

test('a cancelled question fills nothing and asks no more', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const asked: string[] = [];
	const uri = await fillTemplate(
		c,
		'notes',
		'notes://{project}/{note}',
		async (q) => {
			asked.push(q.variable);
			if (q.variable === 'project') {
				await typeAndWait(q, 'web');
				return 'web';
			}
			return undefined; // Escape
		},
		now,
	);
	assert.equal(uri, undefined);
	assert.deepEqual(asked, ['project', 'note']);
	// Escape on the first question: the second is never asked.
	const again: string[] = [];
	assert.equal(await fillTemplate(c, 'notes', 'notes://{project}/{note}', async (q) => (again.push(q.variable), undefined), now), undefined);
	assert.deepEqual(again, ['project']);
	kin.close();
});

test('a closed question sends nothing more and shows nothing more', async () => {
	let sent = 0;
	const rpc: Requester = { request: async () => (sent++, { completion: { values: ['x'] } }) as never };
	const q = new ArgumentQuestion(rpc, 'notes', 'notes://{a}', 'a', {}, 1, 1, now);
	let shows = 0;
	q.onShown = () => shows++;
	q.close();
	q.typed('x');
	await new Promise((r) => setImmediate(r));
	assert.equal(sent, 0);
	assert.equal(shows, 0);
});

test('typing waits for a pause, and only the newest answer is shown', async () => {
	const timers: { fn: () => void; cancelled: boolean }[] = [];
	const schedule = (fn: () => void) => {
		const t = { fn, cancelled: false };
		timers.push(t);
		return () => (t.cancelled = true);
	};
	const answers: { value: string; resolve: (r: CompletionCompleteResult) => void }[] = [];
	const rpc: Requester = {
		request: (_m: string, p?: unknown) => new Promise((resolve) => answers.push({ value: (p as CompletionCompleteParams).argument.value, resolve: resolve as never })) as never,
	};
	const q = new ArgumentQuestion(rpc, 'notes', 'notes://{project}/{note}', 'note', { project: 'kin' }, 2, 2, { schedule });
	const shown: ValuesShown[] = [];
	q.onShown = (s) => shown.push(s);
	q.typed('d');
	q.typed('de');
	assert.deepEqual(
		timers.map((t) => t.cancelled),
		[true, false],
		'the second key cancels the first request before it is sent',
	);
	assert.deepEqual(shown.at(-1), { items: [{ value: 'de', typed: true }], busy: true }, 'what is typed is offered at once');
	timers[1].fn();
	q.typed('dep');
	timers[2].fn();
	assert.deepEqual(
		answers.map((a) => a.value),
		['de', 'dep'],
	);
	answers[1].resolve({ completion: { values: ['deploy'] } });
	await new Promise((r) => setImmediate(r));
	assert.deepEqual(shown.at(-1), { items: [{ value: 'deploy' }, { value: 'dep', typed: true }], busy: false });
	answers[0].resolve({ completion: { values: ['design', 'deploy'] } }); // late: dropped
	await new Promise((r) => setImmediate(r));
	assert.deepEqual(shown.at(-1), { items: [{ value: 'deploy' }, { value: 'dep', typed: true }], busy: false });
	// Typed on: until the server answers, only the values that still contain what is typed stay.
	q.typed('depl');
	assert.deepEqual(shown.at(-1), { items: [{ value: 'deploy' }, { value: 'depl', typed: true }], busy: true });
	q.typed('dex');
	assert.deepEqual(shown.at(-1), { items: [{ value: 'dex', typed: true }], busy: true });
});

test('more values than shown, and a server that is not connected, are said; what is typed can still be used', async () => {
	const more: Requester = { request: async () => ({ completion: { values: ['a1', 'a2'], total: 250, hasMore: true } }) as never };
	const q = new ArgumentQuestion(more, 'notes', 'notes://{n}', 'n', {}, 1, 1, now);
	assert.equal((await typeAndWait(q, 'a')).note, '2 of 250 values: type more to narrow them');
	const noTotal: Requester = { request: async () => ({ completion: { values: ['a1'], hasMore: true } }) as never };
	assert.equal((await typeAndWait(new ArgumentQuestion(noTotal, 'notes', 'notes://{n}', 'n', {}, 1, 1, now), 'a')).note, '1 of more values: type more to narrow them');
	const whole: Requester = { request: async () => ({ completion: { values: ['a1'], total: 1 } }) as never };
	assert.equal((await typeAndWait(new ArgumentQuestion(whole, 'notes', 'notes://{n}', 'n', {}, 1, 1, now), 'a')).note, undefined);

	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const uri = await fillTemplate(
		c,
		'ghost',
		'ghost://{id}',
		async (q) => {
			const s = await typeAndWait(q, '42');
			assert.equal(s.note, 'no values from ghost: MCP server ghost is not connected');
			assert.deepEqual(s.items, [{ value: '42', typed: true }]);
			return s.items[0].value;
		},
		now,
	);
	assert.equal(uri, 'ghost://42');
	kin.close();
});

test('RFC 6570 expansion: variables in order, values percent-encoded per operator', () => {
	assert.deepEqual(templateVariables('notes://{project}/{note}'), ['project', 'note']);
	assert.deepEqual(templateVariables('x://{a}/{+b}{?c,d}{#a}'), ['a', 'b', 'c', 'd']);
	assert.deepEqual(templateVariables('x://fixed'), []);
	// Level 1: only unreserved characters are kept; UTF-8 bytes, upper-case hex.
	assert.equal(encodeValue("A-z0._~ /?#[]@!$&'()*+,;=%é"), 'A-z0._~%20%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D%25%C3%A9');
	assert.equal(encodeValue('a/b%20c%zz', true), 'a/b%20c%25zz', 'reserved expansion keeps reserved characters and %XX triplets');
	assert.equal(encodeValue('😀'), '%F0%9F%98%80');
	assert.equal(expandTemplate('notes://{project}/{note}', { project: 'kin', note: 'a b' }), 'notes://kin/a%20b');
	assert.equal(expandTemplate('file://{+path}', { path: '/src/a b.go' }), 'file:///src/a%20b.go');
	assert.equal(expandTemplate('x://s{?q,lang}', { q: 'a&b', lang: '' }), 'x://s?q=a%26b&lang=');
	assert.equal(expandTemplate('x://s{?q,lang}', { q: 'a' }), 'x://s?q=a', 'a variable with no value is left out');
	assert.equal(expandTemplate('x://s{/a,b}{.ext}{;p}{&r}{#f}', { a: 'x', b: 'y/z', ext: 'md', p: '', r: '1', f: 'h/i' }), 'x://s/x/y%2Fz.md;p&r=1#h/i');
	assert.equal(expandTemplate('x://{id:3}/{v*}', { id: 'abcdef', v: 'q' }), 'x://abc/q', 'prefix and explode modifiers');
});

test("the request for a template's argument is the golden frame's, and the @ list knows which words are templates", () => {
	const golden = JSON.parse(fs.readFileSync(path.resolve('..', '..', 'rpc', 'testdata', 'golden', 'completion_complete.json'), 'utf8')) as { frames: { params?: CompletionCompleteParams }[] };
	const want = golden.frames.find((f) => f.params)!.params!;
	const q = new ArgumentQuestion({ request: async () => undefined as never }, want.server, want.ref.uri, want.argument.name, want.context?.arguments ?? {}, 2, 2, now);
	assert.deepEqual(q.params(want.argument.value), want);

	const listing = JSON.parse(fs.readFileSync(path.resolve('..', '..', 'rpc', 'testdata', 'golden', 'mcp_resources.json'), 'utf8')) as { frames: { result?: McpResourcesResult }[] };
	const rows = resourceRows(listing.frames.find((f) => f.result)!.result!);
	const words = resourceWords(rows, 'notes');
	const tpl = rows.find((r) => r.template)!;
	assert.deepEqual(templateWords(rows, words), [`${tpl.server}:${tpl.uri}`]);
	assert.deepEqual(templateOf(rows, `${tpl.server}:${tpl.uri}`), tpl);
	assert.equal(templateOf(rows, words.find((w) => !w.includes('{'))!), undefined, 'a resource is not a template');
});

test("the filled template's text goes where the template was picked, or at the end when the input changed", () => {
	const input = 'look at @no please';
	const p = { seq: 1, start: 8, end: 11, input };
	assert.deepEqual(placeFilled(input, p, '@notes:notes://kin/design '), { value: 'look at @notes:notes://kin/design  please', caret: 34 });
	assert.deepEqual(placeFilled('changed', p, '@notes:notes://kin/design '), { value: 'changed @notes:notes://kin/design ', caret: 34 });
	assert.deepEqual(placeFilled('', p, '@n:x://y '), { value: '@n:x://y ', caret: 9 });
});

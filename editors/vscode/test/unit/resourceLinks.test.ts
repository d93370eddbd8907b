// A tool call's MCP resource links in the chat (PROTOCOL.md "An MCP result's resource_link blocks
// are also links") and the read-only document a click opens (mcp/readResource, through the fake
// kin: the request sent, the text shown, the cuts said, an error naming the server).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Connection } from '../../src/protocol/connection';
import { cutsMessage, readErrorText, readResourceDocument, resourceFileName, resourceLanguage, resourceOfQuery, resourceQuery } from '../../src/chat/resources';
import { initialState, reduce } from '../../src/chat/transcript';
import type { ResourceLink, ToolCallParams } from '../../src/protocol/types';
import { renderEntry } from '../../src/webview/render';
import { startFakeKin } from './fakeKin';

const session = { sessionId: 's_1', title: '', createdAt: '', updatedAt: '', turns: 0 };

function call(status: ToolCallParams['status'], links?: ResourceLink[]): ToolCallParams {
	return { sessionId: 's_1', turnId: 't_1', callId: 'call_r1', name: 'mcp__notes__find', kind: 'other', title: 'Call find on notes', status, ...(links ? { links } : {}) };
}

test("a call's resource links show under its card: title or name, server:uri, a link that opens it, a button that attaches it", () => {
	const links: ResourceLink[] = [
		{ server: 'notes', uri: 'notes://kin/design', name: 'design', title: 'Design <notes>', mimeType: 'text/markdown' },
		{ server: 'notes', uri: 'notes://kin/a"b', name: 'ab' },
		{ server: 'docs', uri: 'docs://x' },
	];
	let s = reduce(initialState(session), { type: 'toolCall', params: call('running') });
	assert.doesNotMatch(s.entries.map(renderEntry).join(''), /resource-link/, 'no links before the final notification');
	s = reduce(s, { type: 'toolCall', params: call('completed', links) });
	const html = s.entries.map(renderEntry).join('');
	const items = html.split('<li>').slice(1);
	assert.equal(items.length, 3);
	assert.ok(
		items[0].includes(
			'<a href="#" class="resource-link" data-action="openResource" data-server="notes" data-uri="notes://kin/design" data-name="design" data-title="Design &lt;notes&gt;" data-mime="text/markdown"',
		),
		items[0],
	);
	assert.match(items[0], /<span class="link-name">Design &lt;notes&gt;<\/span> <code class="link-where">notes:notes:\/\/kin\/design<\/code>/);
	assert.match(items[0], /data-action="attachResource" data-server="notes" data-uri="notes:\/\/kin\/design"/);
	assert.match(items[1], /data-uri="notes:\/\/kin\/a&quot;b"/);
	assert.match(items[1], /<span class="link-name">ab<\/span>/);
	assert.match(items[2], /<span class="link-name">docs:\/\/x<\/span> <code class="link-where">docs:docs:\/\/x<\/code>/, 'a link with no name is named by its URI');
	// The links stay outside the folded details, so a finished call shows them.
	assert.ok(html.indexOf('</details>') < html.indexOf('resource-links'));
	// A later frame without links (a duplicate) keeps them.
	s = reduce(s, { type: 'toolCall', params: call('completed') });
	assert.match(s.entries.map(renderEntry).join(''), /resource-links/);
});

test("a link's document: the text mcp/readResource returns, in the MIME type's language, its cuts said, an error naming the server", async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const link = { server: 'notes', uri: 'notes://kin/design', mimeType: 'text/markdown' };
	const doc = await readResourceDocument(c, resourceOfQuery(resourceQuery(link))!);
	assert.deepEqual(
		kin.received.filter((m) => m.method === 'mcp/readResource').map((m) => m.params),
		[{ server: 'notes', uri: 'notes://kin/design' }],
	);
	assert.deepEqual(doc, { text: '# Design\n\nnotes of notes://kin/design\n', cuts: [] });
	assert.equal(cutsMessage(link, doc.cuts), undefined, 'a whole text says nothing');
	assert.equal(resourceLanguage(link.mimeType), 'markdown');

	const big = await readResourceDocument(c, { server: 'notes', uri: 'notes://kin/big' });
	assert.equal(big.text, 'x'.repeat(16));
	assert.equal(cutsMessage({ server: 'notes', uri: 'notes://kin/big' }, big.cuts), "kin: notes:notes://kin/big is not shown in full: output: cut to fit a resource's 32 KiB (40000 bytes, 32768 shown)");

	const gone = { server: 'ghost', uri: 'ghost://x' };
	const err = await readResourceDocument(c, gone).then(
		() => undefined,
		(e: unknown) => e,
	);
	assert.ok(err, 'a server that is not connected is an error');
	assert.equal(readErrorText(gone, err), 'kin: could not read ghost://x from MCP server ghost: MCP server ghost is not connected');
	kin.close();
});

test("a link's document URI names its resource exactly, and its tab a file name", () => {
	for (const l of [
		{ server: 'notes', uri: 'notes://kin/design?x=1&y=2#top' },
		{ server: 'a b', uri: 'file:///tmp/r%20s.txt' },
	]) {
		assert.deepEqual(resourceOfQuery(resourceQuery(l)), l);
	}
	assert.equal(resourceOfQuery('server=notes'), undefined);
	assert.equal(resourceFileName({ server: 'notes', uri: 'notes://kin/design.md?x=1' }), 'design.md');
	assert.equal(resourceFileName({ server: 'notes', uri: 'notes://', name: 'root' }), 'root');
	assert.equal(resourceFileName({ server: 'notes', uri: 'urn:x' }), 'notes');
});

test("a resource's language: the obvious ones by MIME type, plain text otherwise", () => {
	const cases: [string | undefined, string][] = [
		['application/json', 'json'],
		['application/ld+json', 'json'],
		['text/markdown; charset=utf-8', 'markdown'],
		['image/svg+xml', 'xml'],
		['text/x-python', 'python'],
		['text/plain', 'plaintext'],
		['application/octet-stream', 'plaintext'],
		[undefined, 'plaintext'],
	];
	for (const [m, want] of cases) {
		assert.equal(resourceLanguage(m), want, String(m));
	}
});

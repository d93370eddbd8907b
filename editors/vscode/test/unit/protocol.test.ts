import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Connection, RpcError } from '../../src/protocol/connection';
import { CrashBudget } from '../../src/protocol/crashBudget';
import { FrameDecoder, encodeFrame } from '../../src/protocol/framing';
import { startFakeKin } from './fakeKin';

test('a frame split anywhere, even inside a multi-byte character, decodes whole', () => {
	const body = JSON.stringify({ jsonrpc: '2.0', method: 'turn/delta', params: { text: 'héllo ✓ 日本' } });
	const bytes = Buffer.concat([encodeFrame(body), encodeFrame('{"b":2}')]);
	for (let cut = 1; cut < bytes.length; cut++) {
		const got: string[] = [];
		const d = new FrameDecoder((b) => got.push(b));
		d.push(bytes.subarray(0, cut));
		d.push(bytes.subarray(cut));
		assert.deepEqual(got, [body, '{"b":2}'], `cut at ${cut}`);
		assert.equal(d.buffered, 0);
	}
});

test('Content-Length counts bytes, not characters', () => {
	const f = encodeFrame('"✓"');
	assert.equal(f.toString('ascii').split('\r\n')[0], 'Content-Length: 5');
});

test('a frame with an unreadable header is reported and skipped; the next one is read', () => {
	const got: string[] = [];
	const errors: string[] = [];
	const d = new FrameDecoder(
		(b) => got.push(b),
		(e) => errors.push(e.message),
	);
	d.push(Buffer.from('Content-Length: x\r\n\r\n'));
	d.push(Buffer.concat([Buffer.from('Content-Type: application/vscode-jsonrpc\r\n'), encodeFrame('{}')]));
	assert.deepEqual(got, ['{}']);
	assert.equal(errors.length, 1);
	assert.match(errors[0], /unreadable frame header/);
});

test('requests resolve with results and reject with the error kin sent', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const init: any = await c.request('initialize', { processId: 1 });
	assert.equal(init.protocolVersion, '1');
	await assert.rejects(c.request('turn/start', { sessionId: 'nope', input: 'x' }), (e: unknown) => {
		assert.ok(e instanceof RpcError);
		assert.equal(e.code, -32010);
		return true;
	});
	await assert.rejects(c.request('no/such'), (e: RpcError) => e.code === -32601);
	// Ids are unique and increasing.
	const ids = kin.received.filter((m) => m.id !== undefined).map((m) => m.id);
	assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
	assert.equal(new Set(ids).size, ids.length);
});

test('notifications reach their handlers in order; a turn streams and an approval round-trips', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const seen: string[] = [];
	let text = '';
	c.onAnyNotification((m) => seen.push(m));
	c.onNotification('turn/delta', (p) => (text += p.text));
	c.onNotification('approval/request', (p) => void c.request('approval/respond', { requestId: p.requestId, decision: 'allow_once' }));
	const completed = new Promise<any>((r) => c.onNotification('turn/completed', r));
	await c.request('session/new', {});
	await c.request('turn/start', { sessionId: 's_test_1', input: 'hi' });
	const done = await completed;
	assert.equal(done.status, 'completed');
	assert.equal(text, 'Hello');
	assert.deepEqual(seen, [
		'turn/started',
		'turn/delta',
		'turn/delta',
		'turn/toolCall',
		'approval/request',
		'approval/resolved',
		'turn/toolCall',
		'turn/completed',
	]);
	const respond = kin.received.find((m) => m.method === 'approval/respond');
	assert.deepEqual(respond.params, { requestId: 'ap_1', decision: 'allow_once' });
});

test('an aborted request sends $/cancelRequest and rejects with -32800', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const ac = new AbortController();
	const p = c.request('mcp/check', {}, ac.signal);
	ac.abort();
	await assert.rejects(p, (e: RpcError) => e.code === -32800);
	const cancel = kin.received.find((m) => m.method === '$/cancelRequest');
	const check = kin.received.find((m) => m.method === 'mcp/check');
	assert.deepEqual(cancel.params, { id: check.id });
});

test('when kin goes away, pending requests reject and new ones fail at once', async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	let closed = false;
	c.onClose(() => (closed = true));
	const p = c.request('mcp/check', {});
	kin.close();
	await assert.rejects(p, /service closed its output \(mcp\/check got no answer\)/);
	assert.ok(closed);
	await assert.rejects(c.request('session/list', {}), /closed/);
});

test('a request from kin is answered with method not found; a bad body is reported', async () => {
	const kin = startFakeKin();
	const errors: string[] = [];
	const c = new Connection(kin.toClient, kin.fromClient, { onProtocolError: (m) => errors.push(m) });
	kin.raw(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'window/doSomething', params: {} })));
	kin.raw(encodeFrame('{not json'));
	await c.request('initialize', {}); // a round trip: what came before it was handled
	await new Promise((r) => setImmediate(r));
	assert.ok(errors.some((e) => /not JSON/.test(e)));
	// The fake records the client's answer to its request among what it received.
	const answer = kin.received.find((m) => m.id === 99);
	assert.equal(answer.error.code, -32601);
});

test("kin's workspace/applyEdit reaches its handler and gets exactly one answer with its id as sent", async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const seen: unknown[] = [];
	c.onRequest('workspace/applyEdit', async (p) => {
		seen.push(p);
		if (p.label === 'refuse') {
			throw new RpcError(-32602, 'bad edit');
		}
		return { applied: true };
	});
	kin.raw(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id: 'e-1', method: 'workspace/applyEdit', params: { label: 'Edit a.go', edit: { documentChanges: [] } } })));
	kin.raw(encodeFrame(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'workspace/applyEdit', params: { label: 'refuse', edit: { documentChanges: [] } } })));
	await c.request('initialize', {});
	await new Promise((r) => setImmediate(r));
	assert.equal(seen.length, 2);
	const answers = kin.received.filter((m) => m.method === undefined);
	assert.deepEqual(
		answers.map((m) => [m.id, m.result, m.error?.code]),
		[
			['e-1', { applied: true }, undefined],
			[0, undefined, -32602],
		],
	);
});

test('the trace sees every message both ways', async () => {
	const kin = startFakeKin();
	const trace: string[] = [];
	const c = new Connection(kin.toClient, kin.fromClient, { trace: (d, m: any) => trace.push(`${d} ${m.method ?? 'response'}`) });
	await c.request('initialize', {});
	c.notify('initialized', {});
	assert.deepEqual(trace, ['send initialize', 'recv response', 'send initialized']);
});

test('the crash budget allows 3 restarts within 3 minutes, then stops; old crashes age out', () => {
	const b = new CrashBudget(3, 180_000);
	assert.equal(b.record(0), true);
	assert.equal(b.record(1000), true);
	assert.equal(b.record(2000), true);
	assert.equal(b.record(3000), false);
	const c = new CrashBudget(3, 180_000);
	c.record(0);
	c.record(1000);
	c.record(2000);
	assert.equal(c.record(200_000), true, 'the first three are older than the window');
});

// The session picker asks kin for the person's sessions only: one-shot and piped `kin chat` runs
// stay out of it (PROTOCOL.md session/list, `interactive`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Connection } from '../../src/protocol/connection';
import { listSessions, SESSION_PAGE } from '../../src/chat/sessionList';
import { startFakeKin } from './fakeKin';

test("the session picker's session/list asks for interactive sessions, on every page, and gets no one-shot run", async () => {
	const kin = startFakeKin();
	const c = new Connection(kin.toClient, kin.fromClient);
	const first = await listSessions(c);
	await listSessions(c, 'cur_1');
	const sent = kin.received.filter((m) => m.method === 'session/list').map((m) => m.params);
	assert.deepEqual(sent, [
		{ limit: SESSION_PAGE, interactive: true, includeSubagents: true },
		{ limit: SESSION_PAGE, interactive: true, includeSubagents: true, cursor: 'cur_1' },
	]);
	assert.deepEqual(
		first.sessions.map((s) => s.sessionId),
		['s_test_1'],
		'the one-shot session (it has an origin) is not listed',
	);
	// The fake lists it when not asked for interactive sessions: the test above can fail.
	const all = await c.request<{ sessions: { origin?: string }[] }>('session/list', {});
	assert.ok(all.sessions.some((s) => s.origin === 'chat-oneshot'));
	kin.close();
});

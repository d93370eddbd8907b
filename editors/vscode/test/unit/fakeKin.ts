// A small fake of `kin serve` for unit tests: it speaks the real framing over in-memory streams
// and answers a few methods the way PROTOCOL.md shows, with a scripted turn. It is not kin; the
// integration test runs the real binary.

import { PassThrough } from 'node:stream';
import { FrameDecoder, encodeFrame } from '../../src/protocol/framing';

export interface FakeKin {
	/** What the client reads (kin's stdout). */
	toClient: PassThrough;
	/** What the client writes (kin's stdin). */
	fromClient: PassThrough;
	/** Every message the fake received, in order. */
	received: any[];
	notify(method: string, params: unknown): void;
	/** Sends raw bytes, to test framing. */
	raw(bytes: Buffer | string): void;
	close(): void;
}

export function startFakeKin(): FakeKin {
	const toClient = new PassThrough();
	const fromClient = new PassThrough();
	const received: any[] = [];
	const send = (m: unknown) => toClient.write(encodeFrame(JSON.stringify(m)));
	const notify = (method: string, params: unknown) => send({ jsonrpc: '2.0', method, params });
	let n = 0;
	const sessionId = 's_test_1';
	const pendingApprovals = new Map<string, () => void>();

	const decoder = new FrameDecoder((body) => {
		const msg = JSON.parse(body);
		received.push(msg);
		const reply = (result: unknown) => send({ jsonrpc: '2.0', id: msg.id, result });
		const fail = (code: number, message: string) => send({ jsonrpc: '2.0', id: msg.id, error: { code, message } });
		if (msg.method === undefined) {
			return; // the client's answer to a request of ours
		}
		switch (msg.method) {
			case 'initialize':
				return reply({
					protocolVersion: '1',
					serverInfo: { name: 'kin', version: 'fake' },
					capabilities: { sessions: true, mcp: true, approvals: true },
					model: { configured: true, model: 'fake-model' },
				});
			case 'initialized':
			case 'exit':
				return;
			case 'shutdown':
				return reply(null);
			case 'session/new':
				return reply({ session: { sessionId, title: msg.params?.title ?? '', turns: 0 } });
			case 'turn/start': {
				if (msg.params.sessionId !== sessionId) {
					return fail(-32010, `session ${msg.params.sessionId} not found`);
				}
				const turnId = `t_${++n}`;
				reply({ turnId });
				setImmediate(() => {
					notify('turn/started', { sessionId, turnId, input: msg.params.input });
					notify('turn/delta', { sessionId, turnId, text: 'Hel' });
					notify('turn/delta', { sessionId, turnId, text: 'lo' });
					notify('turn/toolCall', { sessionId, turnId, callId: 'call_1', name: 'bash', kind: 'execute', status: 'pending' });
					pendingApprovals.set('ap_1', () => {
						notify('turn/toolCall', { sessionId, turnId, callId: 'call_1', name: 'bash', status: 'completed', output: 'a\n' });
						notify('turn/completed', { sessionId, turnId, status: 'completed' });
					});
					notify('approval/request', {
						requestId: 'ap_1',
						sessionId,
						turnId,
						callId: 'call_1',
						kind: 'tool_call',
						tool: 'bash',
						title: 'Run ls',
						command: 'ls',
						cwd: '/w',
						options: [
							{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
							{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
						],
					});
				});
				return;
			}
			case 'approval/respond': {
				const done = pendingApprovals.get(msg.params.requestId);
				if (!done) {
					return fail(-32013, `approval ${msg.params.requestId} not found`);
				}
				pendingApprovals.delete(msg.params.requestId);
				reply({});
				notify('approval/resolved', { requestId: msg.params.requestId, sessionId, decision: msg.params.decision, reason: 'person' });
				done();
				return;
			}
			case 'session/list': {
				// As PROTOCOL.md shows it: a one-shot kin chat's session has an origin, and
				// `interactive` leaves it out.
				const rows = [
					{ sessionId, title: 'fix the flaky test', createdAt: '2026-11-30T23:15:00Z', updatedAt: '2026-11-30T23:16:10Z', turns: 2, cwd: '/w' },
					{ sessionId: 's_test_oneshot', title: 'what does main.go do?', createdAt: '2026-11-30T23:17:00Z', updatedAt: '2026-11-30T23:17:04Z', turns: 1, cwd: '/w', origin: 'chat-oneshot' },
				];
				return reply({ sessions: rows.filter((r) => !msg.params?.interactive || !r.origin) });
			}
			case 'mcp/readResource': {
				// The notes server is connected and has resources; any other server is not.
				const { server, uri } = msg.params ?? {};
				if (server !== 'notes') {
					return fail(-32013, `MCP server ${server} is not connected`);
				}
				if (uri === 'notes://kin/big') {
					return reply({ server, uri, text: 'x'.repeat(16), cuts: [{ what: 'output', why: "cut to fit a resource's 32 KiB", bytes: 40000, kept: 32768 }] });
				}
				return reply({ server, uri, text: `# Design\n\nnotes of ${uri}\n` });
			}
			case 'completion/complete': {
				// The notes server completes notes://{project}/{note}: projects, then a project's notes
				// (from context.arguments), by prefix; any other server is not connected.
				const { server, argument, context } = msg.params ?? {};
				if (server !== 'notes') {
					return fail(-32013, `MCP server ${server} is not connected`);
				}
				const notes: Record<string, string[]> = { kin: ['design', 'deploy', 'readme'], web: ['dashboard'] };
				const all = argument?.name === 'project' ? Object.keys(notes) : (notes[context?.arguments?.project] ?? []);
				const values = all.filter((v) => v.startsWith(argument?.value ?? ''));
				return reply({ completion: { values, total: values.length } });
			}
			case 'mcp/check':
				// A long request: answers only when cancelled.
				return;
			case '$/cancelRequest':
				return send({ jsonrpc: '2.0', id: msg.params.id, error: { code: -32800, message: 'request cancelled' } });
			default:
				if (msg.id !== undefined) {
					return fail(-32601, `method not found: ${msg.method}`);
				}
		}
	});
	fromClient.on('data', (c: Buffer) => decoder.push(c));

	return {
		toClient,
		fromClient,
		received,
		notify,
		raw: (b) => toClient.write(typeof b === 'string' ? Buffer.from(b, 'utf8') : b),
		close: () => toClient.end(),
	};
}

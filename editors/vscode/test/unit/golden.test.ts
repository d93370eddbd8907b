// Every frame kin's server recorded in rpc/testdata/golden, read as this extension reads the wire:
// decoded against the extension's own types (src/protocol/types.ts, through the TypeScript
// checker: no required field missing, no field the type does not know), then shown through the
// extension's own renderers (the chat transcript, the approval dialog, the elicitation inputs,
// the MCP manager and grants pickers). A field renamed on either side fails here.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { approvalCard, linkCard } from '../../src/approvalText';
import { fromHistory, initialState, reduce, type Action, type TranscriptState } from '../../src/chat/transcript';
import { choiceItems, fieldTitle } from '../../src/elicitationFields';
import { renderCard } from '../../src/webview/render';
import { foreignItem, grantItem, noteItems, serverItem, shadowedItem } from '../../src/mcpText';
import type {
	ApprovalRequest,
	ElicitationRequest,
	GrantsListResult,
	McpListResult,
	McpServersResult,
	ResumeResult,
	SessionInfo,
} from '../../src/protocol/types';

const GOLDEN = path.resolve('..', '..', 'rpc', 'testdata', 'golden');
const TYPES = path.resolve('src', 'protocol', 'types.ts');

/** The types.ts names of each method's params and result, and of each notification's params. */
const WIRE: Record<string, { params?: string; result?: string }> = {
	initialize: { params: 'InitializeParams', result: 'InitializeResult' },
	initialized: { params: 'Empty' },
	shutdown: {},
	exit: {},
	'$/cancelRequest': { params: 'CancelParams' },
	'session/new': { params: 'SessionNewParams', result: 'SessionResult' },
	'session/list': { result: 'SessionListResult' },
	'session/resume': { params: 'SessionResumeParams', result: 'ResumeResult' },
	'session/delete': { params: 'SessionIdParams', result: 'Empty' },
	'session/compact': { params: 'SessionIdParams', result: 'SessionCompactResult' },
	'models/list': { result: 'ModelsListResult' },
	'turn/start': { params: 'TurnStartParams', result: 'TurnStartResult' },
	'turn/cancel': { params: 'SessionIdParams', result: 'TurnCancelResult' },
	'turn/undo': { params: 'TurnUndoParams', result: 'TurnUndoResult' },
	'turn/plan': { params: 'TurnPlan' },
	'session/configure': { params: 'SessionConfigureParams', result: 'SessionConfigureResult' },
	'commands/list': { params: 'CommandsListParams', result: 'CommandsListResult' },
	'commands/changed': { params: 'Empty' },
	'turn/started': { params: 'TurnStarted' },
	'turn/delta': { params: 'TurnDelta' },
	'turn/reasoning': { params: 'TurnReasoning' },
	'turn/usage': { params: 'TurnUsage' },
	'turn/toolCall': { params: 'ToolCallParams' },
	'turn/completed': { params: 'TurnCompleted' },
	'approval/request': { params: 'ApprovalRequest' },
	'approval/respond': { params: 'ApprovalRespondParams', result: 'Empty' },
	'approval/resolved': { params: 'ApprovalResolved' },
	'elicitation/request': { params: 'ElicitationRequest' },
	'elicitation/respond': { params: 'ElicitationRespondParams', result: 'Empty' },
	'elicitation/resolved': { params: 'ElicitationResolved' },
	'mcp/status': { params: 'McpStatus' },
	notice: { params: 'Notice' },
	'log/message': { params: 'LogMessage' },
	'mcp/list': { result: 'McpListResult' },
	'mcp/add': { params: 'McpAddParams', result: 'Empty' },
	'mcp/update': { params: 'McpAddParams', result: 'Empty' },
	'mcp/remove': { params: 'McpRemoveParams', result: 'Empty' },
	'mcp/setEnabled': { params: 'McpSetEnabledParams', result: 'Empty' },
	'mcp/adopt': { params: 'McpAdoptParams', result: 'Empty' },
	'mcp/apply': { result: 'McpServersResult' },
	'mcp/reload': { result: 'McpServersResult' },
	'mcp/check': { params: 'McpNameParams', result: 'McpCheckResult' },
	'mcp/login': { params: 'McpNameParams', result: 'McpLoginResult' },
	'grants/list': { result: 'GrantsListResult' },
	'grants/revoke': { params: 'GrantIdParams', result: 'Empty' },
	'textDocument/didOpen': { params: 'DidOpenTextDocumentParams' },
	'textDocument/didChange': { params: 'DidChangeTextDocumentParams' },
	'textDocument/didClose': { params: 'DidCloseTextDocumentParams' },
	'workspace/applyEdit': { params: 'ApplyWorkspaceEditParams', result: 'ApplyWorkspaceEditResult' },
	'workspace/didChangeFiles': { params: 'DidChangeFilesParams' },
};

interface Frame {
	jsonrpc: string;
	id?: number;
	method?: string;
	params?: unknown;
	result?: unknown;
	error?: { code: number; message: string };
}

interface GoldenFile {
	method: string;
	frames: Frame[];
}

function goldenFiles(): GoldenFile[] {
	return fs
		.readdirSync(GOLDEN)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((f) => JSON.parse(fs.readFileSync(path.join(GOLDEN, f), 'utf8')) as GoldenFile);
}

function framesOf(method: string): Frame[] {
	const f = goldenFiles().find((g) => g.method === method);
	assert.ok(f, `no golden frames for ${method}`);
	return f.frames;
}

/** The params of a notification's frames, or the results of a request's. */
function payloads<T>(method: string): T[] {
	return framesOf(method)
		.filter((f) => (f.method !== undefined && f.id === undefined) || f.result !== undefined)
		.map((f) => (f.result !== undefined ? f.result : f.params) as T);
}

// ---- decoding against types.ts ----

const program = ts.createProgram([TYPES], { strict: true, target: ts.ScriptTarget.ES2022, noEmit: true });
const checker = program.getTypeChecker();
const source = program.getSourceFile(TYPES)!;
const exported = new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).map((s) => [s.name, s]));

function typeNamed(name: string): ts.Type {
	const s = exported.get(name);
	assert.ok(s, `types.ts exports no ${name}`);
	return checker.getDeclaredTypeOfSymbol(s);
}

/** What is wrong with v as a t: missing required fields, unknown fields, wrong kinds of value. */
function problems(v: unknown, t: ts.Type, at: string): string[] {
	const f = t.flags;
	if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) {
		return [];
	}
	if (t.isUnion()) {
		let best: string[] | undefined;
		for (const m of t.types) {
			const p = problems(v, m, at);
			if (p.length === 0) {
				return [];
			}
			if (!best || p.length < best.length) {
				best = p;
			}
		}
		return best ?? [`${at}: matches nothing`];
	}
	const is = (ok: boolean, want: string) => (ok ? [] : [`${at}: ${JSON.stringify(v)} is not ${want}`]);
	if (f & ts.TypeFlags.Never) return [`${at}: not allowed here`];
	if (f & ts.TypeFlags.Undefined) return is(v === undefined, 'absent');
	if (f & ts.TypeFlags.Null) return is(v === null, 'null');
	if (f & ts.TypeFlags.StringLiteral) return is(v === (t as ts.StringLiteralType).value, JSON.stringify((t as ts.StringLiteralType).value));
	if (f & ts.TypeFlags.String) return is(typeof v === 'string', 'a string');
	if (f & ts.TypeFlags.NumberLiteral) return is(v === (t as ts.NumberLiteralType).value, String((t as ts.NumberLiteralType).value));
	if (f & ts.TypeFlags.Number) return is(typeof v === 'number', 'a number');
	if (f & ts.TypeFlags.BooleanLiteral) return is(v === (checker.typeToString(t) === 'true'), checker.typeToString(t));
	if (f & ts.TypeFlags.Boolean) return is(typeof v === 'boolean', 'a boolean');
	if (checker.isArrayType(t)) {
		if (!Array.isArray(v)) {
			return is(false, 'a list');
		}
		const el = checker.getTypeArguments(t as ts.TypeReference)[0];
		return v.flatMap((x, i) => problems(x, el, `${at}[${i}]`));
	}
	if (typeof v !== 'object' || v === null || Array.isArray(v)) {
		return is(false, `an object (${checker.typeToString(t)})`);
	}
	const obj = v as Record<string, unknown>;
	const out: string[] = [];
	const known = new Set<string>();
	for (const p of checker.getPropertiesOfType(t)) {
		known.add(p.name);
		if (!(p.name in obj)) {
			if (!(p.flags & ts.SymbolFlags.Optional)) {
				out.push(`${at}.${p.name}: missing (renamed?)`);
			}
			continue;
		}
		out.push(...problems(obj[p.name], checker.getTypeOfSymbol(p), `${at}.${p.name}`));
	}
	const index = checker.getIndexInfoOfType(t, ts.IndexKind.String);
	for (const k of Object.keys(obj)) {
		if (known.has(k)) {
			continue;
		}
		if (index) {
			out.push(...problems(obj[k], index.type, `${at}.${k}`));
		} else {
			out.push(`${at}.${k}: not in ${checker.typeToString(t)} (renamed?)`);
		}
	}
	return out;
}

test('every golden method and notification has a type in types.ts, and every frame decodes into it', () => {
	const files = goldenFiles();
	assert.deepEqual(
		files.map((f) => f.method).sort(),
		Object.keys(WIRE).sort(),
		'the golden frames and this test name different methods',
	);
	for (const { method, frames } of files) {
		const w = WIRE[method];
		for (const [i, fr] of frames.entries()) {
			const at = `${method}#${i}`;
			assert.equal(fr.jsonrpc, '2.0', at);
			if (fr.error) {
				assert.ok(typeof fr.error.code === 'number' && fr.error.message, `${at}: an error without code or message`);
				continue;
			}
			const isResponse = fr.method === undefined;
			const want = isResponse ? w.result : w.params;
			const value = isResponse ? fr.result : fr.params;
			if (!want) {
				assert.ok(value === undefined || value === null || JSON.stringify(value) === '{}', `${at}: carries ${JSON.stringify(value)}`);
				continue;
			}
			const p = problems(value ?? {}, typeNamed(want), `${at} ${want}`);
			assert.deepEqual(p, [], p.join('\n'));
		}
	}
});

// ---- rendering ----

test('every golden turn, approval, elicitation and notice shows in the chat transcript', () => {
	const session = payloads<{ session: SessionInfo }>('session/new')[0].session;
	let s: TranscriptState = initialState(session);
	// Each notification, and the fields of it the transcript must show.
	const actions: [string, Action['type'], string[]][] = [
		['turn/started', 'turnStarted', ['input']],
		['turn/delta', 'delta', ['text']],
		['turn/toolCall', 'toolCall', ['callId', 'status', 'output']],
		['approval/request', 'approvalRequest', ['requestId', 'title']],
		['elicitation/request', 'elicitationRequest', ['requestId', 'message', 'server']],
		['notice', 'notice', ['message']],
		['turn/completed', 'turnCompleted', ['status', 'error']],
	];
	for (const [method, type, shown] of actions) {
		for (const params of payloads<Record<string, unknown>>(method)) {
			const before = s.entries.length;
			s = reduce(s, { type, params } as Action);
			const mine = params.sessionId === undefined ? method !== 'turn/started' : params.sessionId === session.sessionId;
			if (!mine) {
				continue;
			}
			const text = JSON.stringify(s.entries);
			for (const k of shown) {
				if (typeof params[k] === 'string') {
					assert.ok(text.includes(JSON.stringify(params[k]).slice(1, -1)), `${method}: ${k} ${params[k]} is not in the transcript`);
				}
			}
			assert.ok(s.entries.length >= before, method);
		}
	}
	// Resolutions take the waiting cards away.
	for (const p of payloads<{ requestId: string }>('approval/resolved')) {
		s = reduce(s, { type: 'approvalResolved', params: p } as Action);
		assert.ok(!s.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId));
	}
	for (const p of payloads<{ requestId: string }>('elicitation/resolved')) {
		s = reduce(s, { type: 'elicitationResolved', params: p } as Action);
		assert.ok(!s.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId));
	}
});

test('every golden session/resume redraws one entry per history item, and what still waits', () => {
	for (const r of payloads<ResumeResult>('session/resume')) {
		const s = fromHistory(r);
		// A turn's plan is one card, replaced in place: later plan items of a turn add no entry.
		const planTurns = new Set<string>();
		const replaced = r.history.filter((h) => h.type === 'plan' && (planTurns.has(h.turnId) || !planTurns.add(h.turnId))).length;
		assert.equal(s.entries.length, r.history.length + r.pending.length - replaced, JSON.stringify(r.history.map((h) => h.type)));
		for (const h of r.history) {
			if (h.type === 'plan') {
				const card = s.entries.find((e) => e.type === 'plan' && e.turnId === h.turnId);
				assert.ok(card, `the plan of ${h.turnId} is shown`);
			}
		}
		for (const p of r.pending) {
			assert.ok(s.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId), `pending ${p.requestId}`);
		}
	}
});

test("every golden approval's card shows kin's options by name, deny first, and what would happen", () => {
	for (const p of payloads<ApprovalRequest>('approval/request')) {
		const c = approvalCard(p);
		const deny = p.options.find((o) => o.kind === 'reject_once')!;
		assert.equal(c.buttons[0].optionId, deny.optionId, `${p.requestId}: deny is not the first button`);
		assert.equal(c.buttons[0].deny, true);
		assert.deepEqual(
			c.buttons.map((x) => x.label).sort(),
			p.options.map((o) => o.name).sort(),
			`${p.requestId}: the buttons are not kin's options`,
		);
		const html = renderCard(c);
		const shown = JSON.stringify(c);
		for (const v of [p.command, p.destination, p.server, p.serverTool ?? p.tool, p.warning, p.transport, p.scope, p.cwd, p.title]) {
			if (v) {
				assert.ok(shown.includes(JSON.stringify(v).slice(1, -1)), `${p.requestId}: ${v} is not on the card`);
			}
		}
		for (const d of p.diffs ?? []) {
			const last = d.unified.replace(/\n$/, '').split('\n').pop()!;
			assert.ok(html.includes(`<span class="line`) && html.includes(last.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')), `${p.requestId}: the diff's last line is not on the card`);
		}
		if (p.sandbox) {
			assert.ok(c.sandbox, `${p.requestId}: how the command runs is not on the card`);
		}
	}
	for (const p of payloads<ElicitationRequest>('elicitation/request').filter((x) => x.mode === 'url')) {
		const c = linkCard(p);
		assert.equal(c.url, p.url);
		assert.equal(c.buttons[0].deny, true);
	}
});

test('every golden form field is asked by its title, with its options titled as sent', () => {
	for (const p of payloads<ElicitationRequest>('elicitation/request')) {
		const fields = p.fields ?? [];
		assert.equal(p.mode === 'form', fields.length > 0, p.requestId);
		for (const [i, f] of fields.entries()) {
			assert.ok(fieldTitle(p, f, i, fields.length).includes(f.title ?? f.name), f.name);
			if (f.type === 'enum' || f.type === 'multi_select') {
				assert.deepEqual(
					choiceItems(f).map((c) => c.label),
					f.enumNames ?? f.enum,
					f.name,
				);
			}
		}
	}
});

test('every golden MCP row, warning and grant is shown in the pickers', () => {
	for (const l of payloads<McpListResult>('mcp/list')) {
		const notes = noteItems(l).map((n) => n.label);
		for (const w of [...l.notices, ...l.warnings]) {
			assert.ok(
				notes.some((n) => n.endsWith(w)),
				`${w} is not shown`,
			);
		}
		for (const r of l.servers) {
			assert.ok(serverItem(r).label.endsWith(r.name) && serverItem(r).detail?.includes(r.launch), r.name);
		}
		for (const r of l.foreign) {
			assert.ok(foreignItem(r).label.endsWith(r.name), r.name);
		}
		for (const r of l.shadowed ?? []) {
			assert.ok(shadowedItem(r).label.endsWith(r.name), r.name);
		}
	}
	for (const method of ['mcp/apply', 'mcp/reload']) {
		for (const r of payloads<McpServersResult>(method)) {
			for (const s of r.servers) {
				assert.ok(serverItem(s).description?.includes(s.enabled ? (s.state ?? '') : 'disabled'), `${method} ${s.name}`);
			}
		}
	}
	for (const r of payloads<GrantsListResult>('grants/list')) {
		for (const g of r.grants) {
			const item = grantItem(g);
			assert.equal(item.label, g.label);
			assert.ok(item.description?.includes(g.scope === 'permanent' ? 'every session' : 'this session'), g.id);
		}
	}
});

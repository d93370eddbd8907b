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
import { approvalCard, formCard, linkCard } from '../../src/approvalText';
import { fromHistory, initialState, reduce, type Action, type TranscriptState } from '../../src/chat/transcript';
import { choiceItems, fieldTitle, overviewItems, refusedFields } from '../../src/elicitationFields';
import { escapeHtml, renderCard, renderEntry, renderGauge } from '../../src/webview/render';
import { formatCost, LIMIT_HEADING, usageLines } from '../../src/spend';
import { findingDiagnostic } from '../../src/review';
import { foreignItem, grantItem, noteItems, serverItem, shadowedItem } from '../../src/mcpText';
import { cutText, cutsMessage, resourcePart, resourceRows, resourceWords, sawLines } from '../../src/chat/resources';
import { acceptParams, instructionsText } from '../../src/mcpInstructionsText';
import { appliedText, describeWorktree, fileItems, nextStep, removedText, statusSummary, worktreeError } from '../../src/worktreeText';
import type {
	CompletionCompleteResult,
	InputPart,
	McpReadResourceResult,
	McpResourcesResult,
	ToolCallParams,
	TurnStartParams,
	ApprovalRequest,
	ElicitationRequest,
	GrantsListResult,
	McpListResult,
	McpServersResult,
	ResumeResult,
	ReviewFinding,
	ReviewStartResult,
	SessionInfo,
	UsageSummaryResult,
	SessionResult,
	TurnRollbackResult,
	WorktreeApplyResult,
	WorktreeRemoveResult,
	WorktreeStatusResult,
} from '../../src/protocol/types';

const GOLDEN = path.resolve('..', '..', 'rpc', 'testdata', 'golden');
const TYPES = path.resolve('src', 'protocol', 'types.ts');

/** The types.ts names of each method's params and result, and of each notification's params. */
const WIRE: Record<string, { params?: string; result?: string; error?: string }> = {
	initialize: { params: 'InitializeParams', result: 'InitializeResult' },
	initialized: { params: 'Empty' },
	shutdown: {},
	exit: {},
	'$/cancelRequest': { params: 'CancelParams' },
	'session/new': { params: 'SessionNewParams', result: 'SessionResult' },
	'session/list': { params: 'SessionListParams', result: 'SessionListResult' },
	'session/resume': { params: 'SessionResumeParams', result: 'ResumeResult' },
	'session/delete': { params: 'SessionIdParams', result: 'Empty' },
	'session/compact': { params: 'SessionIdParams', result: 'SessionCompactResult' },
	'models/list': { result: 'ModelsListResult' },
	'turn/start': { params: 'TurnStartParams', result: 'TurnStartResult' },
	'turn/cancel': { params: 'SessionIdParams', result: 'TurnCancelResult' },
	'turn/undo': { params: 'TurnUndoParams', result: 'TurnUndoResult' },
	'turn/steer': { params: 'TurnSteerParams', result: 'TurnSteerResult' },
	'turn/steered': { params: 'TurnSteered' },
	'turn/rollback': { params: 'TurnRollbackParams', result: 'TurnRollbackResult' },
	'session/fork': { params: 'SessionForkParams', result: 'SessionForkResult' },
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
	'elicitation/respond': { params: 'ElicitationRespondParams', result: 'Empty', error: 'ElicitationAnswerError' },
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
	'mcp/acceptInstructions': { params: 'McpAcceptInstructionsParams', result: 'McpAcceptInstructionsResult' },
	'grants/list': { result: 'GrantsListResult' },
	'grants/revoke': { params: 'GrantIdParams', result: 'Empty' },
	'skills/list': { params: 'SkillsListParams', result: 'SkillsListResult' },
	'trust/list': { result: 'TrustListResult' },
	'trust/revoke': { params: 'TrustRevokeParams', result: 'Empty' },
	'mcp/resources': { params: 'McpResourcesParams', result: 'McpResourcesResult' },
	'completion/complete': { params: 'CompletionCompleteParams', result: 'CompletionCompleteResult' },
	'mcp/resourceUpdated': { params: 'McpResourceUpdated' },
	'mcp/readResource': { params: 'McpReadResourceParams', result: 'McpReadResourceResult' },
	'worktree/status': { params: 'SessionIdParams', result: 'WorktreeStatusResult', error: 'WorktreeErrorData' },
	'worktree/apply': { params: 'SessionIdParams', result: 'WorktreeApplyResult', error: 'WorktreeErrorData' },
	'worktree/remove': { params: 'WorktreeRemoveParams', result: 'WorktreeRemoveResult', error: 'WorktreeErrorData' },
	'textDocument/didOpen': { params: 'DidOpenTextDocumentParams' },
	'textDocument/didChange': { params: 'DidChangeTextDocumentParams' },
	'textDocument/didClose': { params: 'DidCloseTextDocumentParams' },
	'workspace/applyEdit': { params: 'ApplyWorkspaceEditParams', result: 'ApplyWorkspaceEditResult' },
	'workspace/didChangeFiles': { params: 'DidChangeFilesParams' },
	'usage/summary': { params: 'UsageSummaryParams', result: 'UsageSummaryResult' },
	'review/start': { params: 'ReviewStartParams', result: 'ReviewStartResult' },
	'review/finding': { params: 'ReviewFinding' },
};

/**
 * Methods whose golden frames are still to come (another change adds them): this test knows their
 * types already, decodes their frames when the file is there, and does not miss them until then.
 */
const COMING = new Set(['mcp/readResource']);

interface Frame {
	jsonrpc: string;
	id?: number;
	method?: string;
	params?: unknown;
	result?: unknown;
	error?: { code: number; message: string; data?: unknown };
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
	const golden = new Set(files.map((f) => f.method));
	assert.deepEqual(
		[...golden].sort(),
		Object.keys(WIRE)
			.filter((m) => golden.has(m) || !COMING.has(m))
			.sort(),
		'the golden frames and this test name different methods',
	);
	for (const { method, frames } of files) {
		const w = WIRE[method];
		for (const [i, fr] of frames.entries()) {
			const at = `${method}#${i}`;
			assert.equal(fr.jsonrpc, '2.0', at);
			if (fr.error) {
				assert.ok(typeof fr.error.code === 'number' && fr.error.message, `${at}: an error without code or message`);
				if (fr.error.data !== undefined) {
					assert.ok(w.error, `${at}: error data the extension has no type for`);
					const p = problems(fr.error.data, typeNamed(w.error), `${at} error ${w.error}`);
					assert.deepEqual(p, [], p.join('\n'));
				}
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
		// A trust card lists every item: its kind, name and place, a hook's whole command as code,
		// what else kin says of it, and whether it changed since it was trusted.
		const items = html.split('<li class="trust-item').slice(1);
		assert.equal(items.length, p.items?.length ?? 0, `${p.requestId}: not every item to trust is on the card`);
		for (const [i, it] of (p.items ?? []).entries()) {
			const li = items[i];
			for (const v of [it.path, it.name]) {
				if (v) {
					assert.ok(li.includes(escapeHtml(v)), `${p.requestId}: ${it.kind} ${v} is not on the card`);
				}
			}
			if (it.kind === 'hook') {
				assert.ok(li.includes(`<pre class="command" tabindex="0">${escapeHtml(it.detail!)}</pre>`), `${p.requestId}: the hook's command is not shown as a command`);
			} else if (it.detail) {
				assert.ok(li.includes(escapeHtml(it.detail)), `${p.requestId}: ${it.path}'s detail is not on the card`);
			}
			assert.equal(li.includes('changed since you trusted it'), it.changed === true, `${p.requestId}: ${it.path} changed or not`);
		}
	}
	assert.ok(
		payloads<ApprovalRequest>('approval/request').some((p) => p.kind === 'project_trust' && p.items?.some((it) => it.kind === 'hook')),
		'a golden project_trust request with a hook',
	);
	for (const p of payloads<ElicitationRequest>('elicitation/request').filter((x) => x.mode === 'url')) {
		const c = linkCard(p);
		assert.equal(c.url, p.url);
		assert.equal(c.buttons[0].deny, true);
	}
	// A form is a card first (its inputs open only on Answer…), naming who asks, Decline the default.
	const forms = payloads<ElicitationRequest>('elicitation/request').filter((x) => x.mode === 'form');
	assert.ok(forms.length > 0, 'a golden form');
	for (const p of forms) {
		const c = formCard(p);
		assert.equal(c.what, 'form');
		assert.deepEqual(
			c.buttons.map((b) => [b.optionId, b.deny]),
			[
				['decline', true],
				['cancel', false],
				['answer', false],
			],
		);
		assert.ok(c.heading.includes(p.source === 'kin' ? 'kin' : p.server!), `${p.requestId}: the card names who asks`);
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

test('every golden refused answer names fields of its form, which are asked again, the rest kept', () => {
	const forms = new Map(payloads<ElicitationRequest>('elicitation/request').map((p) => [p.requestId, p]));
	const asked = new Map<number, string>();
	let seen = 0;
	for (const fr of framesOf('elicitation/respond')) {
		if (fr.method) {
			asked.set(fr.id!, (fr.params as { requestId: string }).requestId);
			continue;
		}
		if (!fr.error?.data) {
			continue;
		}
		const p = forms.get(asked.get(fr.id!)!)!;
		const data = fr.error.data as { fields: { name: string; message: string }[] };
		const { redo, problems } = refusedFields(p, data);
		assert.deepEqual(redo, data.fields.map((x) => x.name));
		const shown = overviewItems(p, {}, problems);
		for (const fe of data.fields) {
			assert.ok(shown.some((x) => x.detail?.endsWith(fe.message)), `${fe.name}: its problem is not shown`);
		}
		seen++;
	}
	assert.ok(seen > 0, 'a refused answer in the golden frames');
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
			if (r.instructions) {
				const shown = instructionsText(r);
				assert.ok(shown.includes(r.instructions) && shown.includes(r.instructionsHash ?? '\0'), `instructions of ${r.name}`);
				assert.equal(r.instructionsPending === true, serverItem(r).description?.includes('instructions changed'), `pending instructions of ${r.name}`);
			}
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

test("every golden review finding (review/finding, and session/resume's findings) is a diagnostic on its lines", () => {
	const started = payloads<ReviewStartResult>('review/start');
	assert.ok(started.length > 0 && started.every((r) => r.turnId && r.root && r.files.length > 0));
	const found = payloads<ReviewFinding>('review/finding');
	const resumed = payloads<ResumeResult>('session/resume').flatMap((r) => r.findings ?? []);
	assert.ok(found.length > 0, 'review/finding frames');
	assert.ok(resumed.length > 0, "a session/resume with findings");
	for (const f of [...found, ...resumed]) {
		const d = findingDiagnostic(f);
		assert.equal(d.file, f.file);
		assert.equal(d.startLine, f.range.start.line);
		assert.ok(d.endLine >= d.startLine && d.endLine < f.range.end.line + 1, 'the last line is the one before the range\'s end');
		assert.equal(d.severity, { error: 0, warning: 1, info: 2 }[f.severity]);
		assert.ok(d.message.startsWith(f.title) && (!f.body || d.message.includes(f.body)), d.message);
	}
});

test('every golden resource listing, completion, resource part and modelSaw is read and shown', () => {
	const lists = payloads<McpResourcesResult>('mcp/resources');
	assert.ok(lists.length > 0, 'mcp/resources frames');
	const rows = resourceRows(lists[0]);
	const first = lists[0].servers[0];
	const word = `${first.server}:${first.resources[0].uri}`;
	assert.ok(resourceWords(rows, first.server).includes(word), `the @ list offers ${word}`);
	assert.deepEqual(resourcePart(word, new Set(rows.map((r) => r.server))), { type: 'resource', server: first.server, uri: first.resources[0].uri });
	assert.equal(resourcePart(`ghost:${first.resources[0].uri}`, new Set(rows.map((r) => r.server))), undefined);
	const sent = framesOf('turn/start').flatMap((f) => (Array.isArray((f.params as TurnStartParams | undefined)?.input) ? ((f.params as TurnStartParams).input as InputPart[]) : []));
	assert.ok(sent.some((p) => p.type === 'resource' && p.server), 'a golden question attaches a server resource');
	for (const c of payloads<CompletionCompleteResult>('completion/complete')) {
		assert.ok(Array.isArray(c.completion.values));
	}
	let shown = 0;
	for (const p of payloads<ToolCallParams>('turn/toolCall')) {
		if (!p.modelSaw) {
			continue;
		}
		shown++;
		const text = sawLines(p).join('\n');
		assert.ok(text.includes(p.modelSaw.text), `modelSaw text of ${p.callId}`);
		if (p.modelSaw.framing) {
			assert.ok(text.includes(p.modelSaw.framing), `framing of ${p.callId}`);
		}
		for (const c of p.modelSaw.cuts ?? []) {
			assert.ok(text.includes(c.why), `cut of ${p.callId}`);
		}
		for (const l of p.links ?? []) {
			assert.ok(text.includes(l.uri), `link of ${p.callId}`);
		}
	}
	assert.ok(shown > 0, 'turn/toolCall frames with modelSaw');
	// Each link of a call is on its card in the chat: its title (or name), where it is, and a
	// link that opens it read-only.
	const linked = payloads<ToolCallParams>('turn/toolCall').filter((p) => p.links?.length);
	assert.ok(linked.length > 0, 'a golden turn/toolCall with links');
	for (const p of linked) {
		const s = reduce(initialState({ sessionId: p.sessionId!, title: '', createdAt: '', updatedAt: '', turns: 0 }), { type: 'toolCall', params: p });
		const html = s.entries.map(renderEntry).join('');
		for (const l of p.links!) {
			assert.ok(html.includes(`data-action="openResource" data-server="${escapeHtml(l.server)}" data-uri="${escapeHtml(l.uri)}"`), `${p.callId}: ${l.uri} does not open`);
			assert.ok(html.includes(escapeHtml(l.title || l.name || l.uri)) && html.includes(escapeHtml(`${l.server}:${l.uri}`)), `${p.callId}: ${l.uri} is not named`);
		}
	}
	// mcp/readResource (when its golden frames are there): the document shows the text, and says every cut.
	if (goldenFiles().some((g) => g.method === 'mcp/readResource')) {
		for (const r of payloads<McpReadResourceResult>('mcp/readResource')) {
			const msg = cutsMessage(r, (r.cuts ?? []).map((c) => cutText(c, 'shown'))) ?? '';
			for (const c of r.cuts ?? []) {
				assert.ok(msg.includes(c.why), `${r.uri}: cut ${c.what} is not said`);
			}
		}
	}
});

test('accepting golden pending instructions sends exactly the hash mcp/list showed', () => {
	const pending = payloads<McpListResult>('mcp/list').flatMap((l) => l.servers.filter((s) => s.instructionsPending));
	assert.ok(pending.length > 0, 'no pending instructions in the golden frames');
	const sent = framesOf('mcp/acceptInstructions').filter((f) => f.method && f.id !== undefined);
	const accepted = sent[sent.length - 1].params;
	assert.deepEqual(acceptParams(pending[pending.length - 1]), accepted);
	assert.equal(acceptParams({ ...pending[0], instructionsPending: false }), undefined, 'nothing to accept once accepted');
});

// ---- spend limits ----

test("every golden turn/usage with a cost shows the session's cost beside the gauge, and usage/summary decodes", () => {
	const session = payloads<{ session: SessionInfo }>('session/new')[0].session;
	const priced = payloads<{ sessionId: string; sessionCost?: number; currency?: string; contextTokens: number; contextWindow: number }>('turn/usage').filter((p) => p.currency);
	assert.ok(priced.length > 0, 'a turn/usage frame with a cost');
	for (const p of priced) {
		const s = reduce(initialState({ ...session, sessionId: p.sessionId }), { type: 'usage', params: p } as unknown as Action);
		const html = renderGauge(s.usage);
		assert.ok(html.includes(formatCost(p.sessionCost, p.currency)), `the session's cost ${p.sessionCost} ${p.currency} is not beside the gauge: ${html}`);
		assert.ok(html.includes('role="meter"'), 'the context gauge is still there');
	}
	for (const r of payloads<UsageSummaryResult>('usage/summary')) {
		// "kin: Usage and Spend Limits" shows every answer: its tokens, its cost, each limit.
		const text = usageLines(r).join('\n');
		assert.ok(text.includes(r.totalTokens.toLocaleString('en-US')), text);
		if (r.cost !== undefined && r.currency) {
			assert.ok(text.includes(formatCost(r.cost, r.currency)), text);
		}
		for (const l of r.limits ?? []) {
			assert.ok(text.includes(`${l.name}: ${l.used.toLocaleString('en-US')} of ${l.limit.toLocaleString('en-US')}`), text);
		}
	}
	const scopes = payloads<UsageSummaryResult>('usage/summary').map((r) => r.scope);
	assert.deepEqual([...new Set(scopes)].sort(), ['day', 'session']);
});

test('a golden limit approval shows its three choices, stop first', () => {
	const limits = payloads<ApprovalRequest>('approval/request').filter((p) => p.kind === 'limit');
	assert.ok(limits.length > 0, 'a limit approval frame');
	for (const p of limits) {
		const c = approvalCard(p);
		assert.deepEqual(
			c.buttons.map((b) => b.optionId),
			['deny', 'allow_once', 'allow_always'],
		);
		assert.ok(JSON.stringify(c).includes(LIMIT_HEADING));
	}
});

test("every golden subagent frame lands in its parent's transcript: its approval shown and answered, its progress under the delegate call", () => {
	const nested = <T extends { parentSessionId?: string }>(m: string) => payloads<T>(m).filter((p) => p.parentSessionId);
	const approvals = nested<ApprovalRequest>('approval/request');
	assert.ok(approvals.length > 0, 'a subagent approval/request frame');
	const parent = approvals[0].parentSessionId!;
	const child = approvals[0].sessionId!;
	const delegates = payloads<ToolCallParams>('turn/toolCall').filter((p) => p.sessionId === parent && p.subagent?.sessionId === child);
	assert.ok(delegates.length >= 2, 'the delegate call, running and final');
	const session: SessionInfo = { sessionId: parent, title: 'golden', createdAt: '', updatedAt: '', turns: 0 };
	const actions: Action[] = [
		{ type: 'turnStarted', params: { sessionId: parent, turnId: delegates[0].turnId, input: 'delegate it' } },
		{ type: 'toolCall', params: delegates[0] },
		...nested<any>('turn/started').map((params): Action => ({ type: 'turnStarted', params })),
		...nested<any>('turn/delta').map((params): Action => ({ type: 'delta', params })),
		...nested<ToolCallParams>('turn/toolCall').map((params): Action => ({ type: 'toolCall', params })),
	];
	let s = actions.reduce(reduce, initialState(session));
	for (const p of approvals) {
		s = reduce(s, { type: 'approvalRequest', params: p });
		const w = s.entries.find((e) => e.type === 'waiting' && e.requestId === p.requestId);
		assert.ok(w && w.type === 'waiting' && w.title.startsWith('subagent'), `subagent approval ${p.requestId} shown as the subagent's`);
	}
	for (const p of nested<any>('approval/resolved')) {
		s = reduce(s, { type: 'approvalResolved', params: p });
		assert.ok(!s.entries.some((e) => e.type === 'waiting' && e.requestId === p.requestId), `${p.requestId} resolved`);
		assert.ok(s.entries.some((e) => e.type === 'decision' && e.requestId === p.requestId), `${p.requestId} decision recorded`);
	}
	s = [
		...nested<any>('turn/usage').map((params): Action => ({ type: 'usage', params })),
		...nested<any>('turn/completed').map((params): Action => ({ type: 'turnCompleted', params })),
		{ type: 'toolCall', params: delegates[delegates.length - 1] } as Action,
	].reduce(reduce, s);
	assert.deepEqual(
		[...new Set(s.entries.map((e) => e.type))].sort(),
		['decision', 'tool', 'user'],
		"nothing of the subagent's shows as the parent's own (answer, turn end)",
	);
	const card = s.entries.find((e) => e.type === 'tool' && e.callId === delegates[0].callId);
	assert.ok(card && card.type === 'tool' && card.subagent, 'the delegate card has its subagent');
	assert.equal(card.subagent.status, 'completed');
	const childCalls = new Set(nested<ToolCallParams>('turn/toolCall').map((p) => p.callId));
	assert.deepEqual(card.subagent.calls.map((c) => c.callId).sort(), [...childCalls].sort());
	assert.ok(card.subagent.text.length > 0, "the subagent's answer so far");
});

test('turn/steered, turn/rollback and session/fork decode and show as kin sends them', () => {
	const session = payloads<{ session: SessionInfo }>('session/new')[0].session;
	for (const p of payloads<{ sessionId: string; turnId: string; input: string }>('turn/steered')) {
		const s = reduce(initialState({ ...session, sessionId: p.sessionId }), { type: 'steered', params: p } as Action);
		const e = s.entries[s.entries.length - 1];
		assert.ok(e?.type === 'command' && e.text.includes(p.input), 'the steered words are shown');
	}
	for (const r of payloads<{ turns: string[]; undos: { turnId: string; restored: string[] }[] }>('turn/rollback')) {
		const s = reduce(initialState(session), { type: 'rolledBack', sessionId: session.sessionId, result: r } as Action);
		const e = s.entries[s.entries.length - 1];
		assert.ok(e?.type === 'command', 'the rollback is shown');
		assert.ok(e.text.includes(r.turns[0]), 'the rolled-back turn is named');
		for (const u of r.undos) {
			for (const f of u.restored) {
				assert.ok(e.text.includes(f), `restored ${f} is listed`);
			}
		}
	}
	for (const r of payloads<{ session: SessionInfo; forkedFrom: { sessionId: string } }>('session/fork')) {
		assert.ok(r.session.sessionId && r.forkedFrom.sessionId && r.session.sessionId !== r.forkedFrom.sessionId, 'a fork is a new session');
	}
	const kinds = new Set<string>();
	for (const r of payloads<ResumeResult>('session/resume')) {
		for (const h of r.history) {
			kinds.add(h.type);
			if (h.rolledBack) {
				kinds.add('rolledBack');
			}
		}
	}
	for (const k of ['steer', 'rollback', 'rolledBack']) {
		assert.ok(kinds.has(k), `a golden session/resume holds a ${k} item`);
	}
});

test('a golden undo kin was stopped in shows as unfinished, its turn left to undo again', () => {
	let seen = 0;
	for (const r of payloads<ResumeResult>('session/resume')) {
		for (const h of r.history) {
			if (h.type !== 'undo' || !h.undo.error) {
				continue;
			}
			seen++;
			const s = fromHistory({ ...r, history: [{ type: 'turn', turnId: h.undo.turnId, status: 'completed' } as ResumeResult['history'][number], h] });
			const u = s.entries[s.entries.length - 1];
			assert.ok(u.type === 'undo');
			const html = renderEntry(u);
			assert.match(html, /unfinished/);
			assert.ok(html.includes(escapeHtml(h.undo.error)), 'the error is shown');
			assert.doesNotMatch(html, /restored 0 files/);
			const end = s.entries.find((e) => e.type === 'turnEnd');
			assert.ok(end?.type === 'turnEnd' && !end.undone, 'the turn is not marked undone');
		}
	}
	assert.ok(seen > 0, 'a golden session/resume holds an unfinished undo item');
	const finished = payloads<{ turnId: string; restored: string[]; error?: string }>('turn/undo');
	assert.ok(finished.every((u) => u.error === undefined), 'a turn/undo result never has error');
});

test("a golden rollback's errors (a fork's copied turn, a rollback kin was stopped in) are shown to the person, each with its turn", () => {
	const session = payloads<{ session: SessionInfo }>('session/new')[0].session;
	const shown = (html: string, err: { turnId: string; error: string }, what: string) => {
		assert.ok(html.includes(escapeHtml(err.turnId)), `${what}: turn ${err.turnId} is named`);
		assert.ok(html.includes(escapeHtml(err.error)), `${what}: "${err.error}" is shown`);
	};
	let results = 0;
	for (const r of payloads<TurnRollbackResult>('turn/rollback').filter((r) => (r.errors ?? []).length > 0)) {
		results++;
		const s = reduce(initialState(session), { type: 'rolledBack', sessionId: session.sessionId, result: r } as Action);
		const html = renderEntry(s.entries[s.entries.length - 1]);
		for (const err of r.errors!) {
			shown(html, err, 'turn/rollback');
		}
	}
	assert.ok(results > 0, 'a golden turn/rollback result has errors');
	let items = 0;
	for (const r of payloads<ResumeResult>('session/resume')) {
		const s = fromHistory(r);
		const html = s.entries.map(renderEntry).join('');
		for (const h of r.history) {
			if (h.type === 'rollback' && (h.rollback.errors ?? []).length > 0) {
				items++;
				for (const err of h.rollback.errors!) {
					shown(html, err, 'history rollback item');
				}
			}
		}
	}
	assert.ok(items > 0, 'a golden session/resume holds a rollback item with errors');
});

test("every golden worktree frame reads as kin sends it: the session's worktree, status, apply, remove and their refusals", () => {
	const sessions = payloads<SessionResult>('session/new').filter((r) => r.session.worktree);
	assert.ok(sessions.length > 0, 'a session/new with a worktree');
	for (const r of sessions) {
		const wt = r.session.worktree!;
		const line = describeWorktree(wt);
		for (const v of [wt.path, wt.branch, wt.baseBranch]) {
			assert.ok(v && line.includes(v), `${v} in ${line}`);
		}
		assert.equal(r.session.cwd, wt.path, "the session's cwd is its worktree");
	}
	for (const st of payloads<WorktreeStatusResult>('worktree/status')) {
		assert.ok(statusSummary(st).includes(st.branch) && statusSummary(st).includes(st.baseBranch));
		assert.deepEqual(
			fileItems(st).map((i) => `${i.label} ${i.description}`),
			st.files.map((f) => `${f.path} ${f.status}`),
		);
	}
	const kinds: string[] = [];
	for (const method of ['worktree/apply', 'worktree/remove']) {
		for (const fr of framesOf(method)) {
			if (fr.error) {
				const e = worktreeError(fr.error);
				assert.ok(e.kind && e.paths.length > 0 && nextStep(e.kind), `${method} refusal`);
				kinds.push(e.kind!);
			} else if (fr.method === undefined && method === 'worktree/apply') {
				const r = fr.result as WorktreeApplyResult;
				for (const f of r.files) {
					assert.ok(appliedText(r).includes(f.path), f.path);
				}
			} else if (fr.method === undefined) {
				const r = fr.result as WorktreeRemoveResult;
				assert.ok(removedText(r).includes(r.branch) && removedText(r).includes(r.commit!));
			}
		}
	}
	assert.deepEqual(kinds, ['conflict', 'unapplied']);
});

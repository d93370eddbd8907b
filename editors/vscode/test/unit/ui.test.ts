// The pure parts of what a person sees: dialog text and buttons, elicitation checks, the status
// bar's words, command-line splitting and the markdown rendering of the chat.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buttonsFor, dialogDetail, dialogMessage } from '../../src/approvalText';
import { choiceItems, fieldPrompt, fieldTitle, parseFieldValue, validateChoices, validateField } from '../../src/elicitationFields';
import type { ApprovalRequest, ElicitationField, ElicitationRequest, PermissionOption } from '../../src/protocol/types';
import { maskedNames, splitArgs } from '../../src/shellWords';
import { describe } from '../../src/statusText';
import { renderEntry, renderMarkdown } from '../../src/webview/render';

const opts = (always: string): PermissionOption[] => [
	{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
	{ optionId: 'allow_always', name: `${always} in this session`, kind: 'allow_always' },
	{ optionId: 'allow_always_permanent', name: `${always} in every session`, kind: 'allow_always' },
	{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
];

test("deny is the first (Enter) button, closing the dialog denies too, and kin's options keep their names", () => {
	const b = buttonsFor({ requestId: 'a', kind: 'tool_call', title: 't', options: opts('Always allow `go test` commands') });
	assert.deepEqual(
		b.map((x) => [x.title, x.optionId, !!x.close]),
		[
			['Deny', 'deny', false],
			['Allow once', 'allow_once', false],
			['Always allow `go test` commands in this session', 'allow_always', false],
			['Always allow `go test` commands in every session', 'allow_always_permanent', false],
			['Cancel', 'deny', true],
		],
	);
	// Nothing is added: a request without "always" options has none.
	const once = buttonsFor({ requestId: 'b', kind: 'tool_call', title: 't', options: [opts('x')[0], opts('x')[3]] });
	assert.deepEqual(
		once.map((x) => x.title),
		['Deny', 'Allow once', 'Cancel'],
	);
});

test('a file change offers Review diff; a server launch offers Trust server', () => {
	const edit = buttonsFor({
		requestId: 'a',
		kind: 'tool_call',
		title: 'Edit main.go',
		diffs: [{ path: '/w/main.go', oldText: 'a', newText: 'b', unified: '' }],
		options: opts('Always allow edit_file'),
	});
	assert.ok(edit.some((x) => x.title === 'Review diff' && x.optionId === undefined));
	const launch = buttonsFor({
		requestId: 'b',
		kind: 'server_launch',
		title: 'Start MCP server files',
		options: [
			{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
			{ optionId: 'trust', name: 'Trust server', kind: 'allow_always' },
			{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
		],
	});
	assert.deepEqual(
		launch.map((x) => x.title),
		['Deny', 'Allow once', 'Trust server', 'Cancel'],
	);
	assert.equal(
		dialogDetail({
			requestId: 'ap_8',
			kind: 'server_launch',
			title: 'Start MCP server elicit',
			server: 'elicit',
			destination: 'node server.mjs',
			arguments: 'env API_TOKEN=●●●●',
			transport: 'stdio',
			scope: 'project',
			options: [],
		}),
		'Server: elicit\nTransport: stdio\nDestination: node server.mjs\nScope: project\nEnvironment: env API_TOKEN=●●●●',
	);
});

test('the dialog names server, destination, tool and arguments of an MCP call', () => {
	const p: ApprovalRequest = {
		requestId: 'ap_5',
		kind: 'tool_call',
		tool: 'mcp__docs__query-docs',
		title: 'Call query-docs on docs',
		server: 'docs',
		destination: 'https://mcp.example.com/mcp',
		arguments: '{\n  "query": "react hooks"\n}',
		warning: 'Arguments are sent to this MCP server.',
		options: [],
	};
	assert.equal(dialogMessage(p), 'kin wants to: Call query-docs on docs');
	assert.equal(
		dialogDetail(p),
		'Server: docs\nDestination: https://mcp.example.com/mcp\nTool: mcp__docs__query-docs\nArguments:\n{\n  "query": "react hooks"\n}\n\nArguments are sent to this MCP server.',
	);
});

test('a bash approval shows its command and cwd; acknowledge_unknown names the call', () => {
	const bash = dialogDetail({ requestId: 'a', kind: 'tool_call', tool: 'bash', title: 'Run ls', command: 'ls -la', cwd: '/w', options: [] });
	assert.equal(bash, 'Tool: bash\nCommand: ls -la\nCwd: /w');
	const ack: ApprovalRequest = {
		requestId: 'ap_7',
		kind: 'acknowledge_unknown',
		tool: 'mcp__docs__create-ticket',
		callId: 'call_9',
		title: 'mcp__docs__create-ticket may already have run',
		warning: 'The outcome of this call is unknown.',
		options: [],
	};
	assert.equal(dialogMessage(ack), 'kin: mcp__docs__create-ticket may already have run');
	assert.match(dialogDetail(ack), /Call: mcp__docs__create-ticket/);
});

test('elicitation fields are checked as the person types', () => {
	const age: ElicitationField = { name: 'age', title: 'Age', type: 'integer', minimum: 0, maximum: 150 };
	assert.equal(validateField(age, 'x'), 'Enter a number');
	assert.equal(validateField(age, '3.5'), 'Enter a whole number');
	assert.equal(validateField(age, '200'), 'At most 150');
	assert.equal(validateField(age, '31'), undefined);
	assert.equal(parseFieldValue(age, '31'), 31);
	assert.equal(validateField({ name: 'n', title: 'Name', type: 'string', required: true }, ''), 'Name is required');
	assert.equal(validateField({ name: 'n', type: 'string' }, ''), undefined);
	assert.equal(parseFieldValue({ name: 'n', type: 'string' }, ''), undefined);
	assert.equal(validateField({ name: 'e', type: 'string', format: 'email' }, 'ana'), 'Enter an email address');
	assert.equal(validateField({ name: 'd', type: 'string', format: 'date' }, '1 April'), 'Enter a date as YYYY-MM-DD');
	assert.equal(validateField({ name: 'd', type: 'string', format: 'date' }, '1990-04-01'), undefined);
	assert.match(validateField({ name: 't', type: 'string', format: 'date-time' }, '2026-11-30 23:15') ?? '', /date and time/);
	assert.equal(validateField({ name: 't', type: 'string', format: 'date-time' }, '2026-11-30T23:15:00Z'), undefined);
});

test('a multi-select lists titled options, preselects its default and counts the picks', () => {
	const fish: ElicitationField = {
		name: 'fish',
		title: 'Fish',
		type: 'multi_select',
		enum: ['fish-1', 'fish-2', 'fish-3'],
		enumNames: ['Tuna', 'Salmon', 'Trout'],
		minItems: 1,
		maxItems: 2,
		default: ['fish-1'],
	};
	assert.deepEqual(
		choiceItems(fish).map((c) => [c.label, c.value, !!c.picked]),
		[
			['Tuna', 'fish-1', true],
			['Salmon', 'fish-2', false],
			['Trout', 'fish-3', false],
		],
	);
	assert.equal(validateChoices(fish, []), 'Pick at least 1');
	assert.equal(validateChoices(fish, ['fish-1', 'fish-2', 'fish-3']), 'Pick at most 2');
	assert.equal(validateChoices(fish, ['fish-2']), undefined);
	const p: ElicitationRequest = { requestId: 'el_1', server: 'everything', mode: 'form', message: 'Details', fields: [fish] };
	assert.equal(fieldTitle(p, fish, 0, 1), 'everything asks (1/1): Fish (optional)');
	assert.equal(fieldPrompt(p, fish), 'Details — 1–2 choices');
	// Untitled options show their values.
	assert.deepEqual(
		choiceItems({ name: 't', type: 'multi_select', enum: ['work', 'home'] }).map((c) => c.label),
		['work', 'home'],
	);
});

test('the status bar: connected, busy, waiting for approval (warning), failed (error)', () => {
	assert.match(describe({ service: 'ready', busy: false, waiting: 0 }).text, /connected/);
	assert.match(describe({ service: 'ready', busy: true, waiting: 0 }).text, /busy/);
	const w = describe({ service: 'ready', busy: true, waiting: 2 });
	assert.match(w.text, /waiting for approval \(2\)/);
	assert.equal(w.warn, true);
	assert.equal(describe({ service: 'failed', busy: false, waiting: 0 }).error, true);
	const u = describe({ service: 'ready', busy: false, waiting: 0, unconfined: 'commands run unconfined: bubblewrap (bwrap) is not installed' });
	assert.match(u.text, /unconfined/);
	assert.match(u.tooltip, /bubblewrap \(bwrap\) is not installed/);
	assert.equal(u.warn, true);
});

test('command lines split like a shell, without expansion', () => {
	assert.deepEqual(splitArgs('npx -y @modelcontextprotocol/server-filesystem "/data dir" \'$HOME\' a\\ b'), [
		'npx',
		'-y',
		'@modelcontextprotocol/server-filesystem',
		'/data dir',
		'$HOME',
		'a b',
	]);
	assert.deepEqual(splitArgs('   '), []);
});

test('masked env and header names are read in both shapes kin may send', () => {
	assert.deepEqual(maskedNames({ TOKEN: '●●●●' }), ['TOKEN']);
	assert.deepEqual(maskedNames(['API_TOKEN=●●●●', 'X-Tenant: ●●●●']), ['API_TOKEN', 'X-Tenant']);
	assert.deepEqual(maskedNames(undefined), []);
});

test('markdown renders code blocks and never passes HTML through', () => {
	const html = renderMarkdown('Hi **there**\n\n```go\nfmt.Println("<b>")\n```\n\n<script>alert(1)</script>');
	assert.match(html, /<strong>there<\/strong>/);
	assert.match(html, /<pre><code class="language-go">fmt.Println\(&quot;&lt;b&gt;&quot;\)/);
	assert.doesNotMatch(html, /<script>/);
	const user = renderEntry({ type: 'user', key: 'e1', turnId: 't', text: '<img src=x onerror=alert(1)>' });
	assert.doesNotMatch(user, /<img/);
});

test('a tool card shows its status, arguments and output', () => {
	const html = renderEntry({
		type: 'tool',
		key: 'e2',
		turnId: 't',
		callId: 'c1',
		name: 'bash',
		kind: 'execute',
		title: 'Run echo <hi>',
		arguments: '{"command":"echo <hi>"}',
		status: 'denied',
		output: 'denied by the person',
	});
	assert.match(html, /status-denied/);
	assert.match(html, /<span class="status">denied<\/span>/);
	assert.match(html, /Run echo &lt;hi&gt;/);
	assert.match(html, /&quot;command&quot;: &quot;echo &lt;hi&gt;&quot;/);
});

// Turns transcript entries and waiting cards into HTML strings. Markdown goes through markdown-it
// with raw HTML disabled (so any HTML the model writes is shown as text) and its link validation
// (no javascript:, file: or data: links); code blocks are highlighted by highlight.js and get copy
// and insert-at-cursor buttons; file paths written as code become links the extension opens.
// Everything else is escaped here. Icons are codicons. No DOM access, so it is unit-tested under node.

import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/common';
import type { CardItem, WaitingCard } from '../approvalText';
import type { ChangedFile, Entry, ToolEntry } from '../chat/transcript';
import type { InputPart, PartRange, PlanEntry, ResourceLink, TurnUndoResult } from '../protocol/types';
import { linkLabel } from '../chat/resources';
import { escapeHtml, visibleHtml, visibleText } from './escape';
import { renderSlotLine, renderSubagent, renderSubagentLine, showsSubagent } from './subagentRender';
import { sessionCostText, type SpendUsage } from '../spend';

export { escapeHtml, visibleHtml, visibleText };

/** Text with `code` spans, as kin writes commands in its option names: escaped, the spans as <code>. */
export function inlineCode(s: string): string {
	return escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
}

export function icon(name: string, extra = ''): string {
	return `<i class="codicon codicon-${name}${extra ? ` ${extra}` : ''}" aria-hidden="true"></i>`;
}

const md = new MarkdownIt({
	html: false,
	linkify: true,
	breaks: false,
	highlight: (code, lang) => {
		const language = lang && hljs.getLanguage(lang) ? lang : undefined;
		try {
			return language ? hljs.highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
		} catch {
			return escapeHtml(code);
		}
	},
});

// Every text of the answer (prose, inline code, code blocks) shows its hidden characters.
md.core.ruler.push('visible', (state) => {
	for (const t of state.tokens) {
		t.content = visibleText(t.content);
		for (const c of t.children ?? []) {
			c.content = visibleText(c.content);
		}
	}
});

// Links open through the extension (openExternal, which asks before opening an untrusted site):
// the page intercepts the click; the title shows where a link goes.
const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
	tokens[idx].attrSet('title', tokens[idx].attrGet('href') ?? '');
	return defaultLink(tokens, idx, options, env, self);
};

// A fenced code block: highlighted, with its actions above it.
md.renderer.rules.fence = (tokens, idx, options) => {
	const t = tokens[idx];
	const lang = t.info.trim().split(/\s+/)[0] ?? '';
	const body = options.highlight ? options.highlight(t.content, lang, '') : escapeHtml(t.content);
	return (
		`<div class="code-block"><div class="code-actions">` +
		(lang ? `<span class="lang">${visibleHtml(lang)}</span>` : '') +
		`<button class="icon-button" data-action="copy" title="Copy">${icon('copy')}</button>` +
		`<button class="icon-button" data-action="insert" title="Insert at the cursor">${icon('insert')}</button></div>` +
		`<pre><code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ''}">${body}</code></pre></div>\n`
	);
};

// `path/to/file.go:12` written as code is a link to that place.
const PATH_RE = /^(?:~?\/)?(?:[\w.@-]+\/)*[\w.@-]*\.[A-Za-z0-9]{1,8}(?::(\d+)(?::(\d+))?)?$|^(?:\/|\.{1,2}\/)(?:[\w.@-]+\/)*[\w.@-]+(?::(\d+)(?::(\d+))?)?$/;
md.renderer.rules.code_inline = (tokens, idx) => {
	const text = tokens[idx].content;
	const code = `<code>${escapeHtml(text)}</code>`;
	const ref = fileRef(text);
	return ref ? fileLink(ref.path, ref.line, code) : code;
};

/** A path with an optional :line[:column], when `text` looks like one (and not like a number or a URL). */
export function fileRef(text: string): { path: string; line?: number } | undefined {
	if (text.length > 300 || /\s|:\/\//.test(text) || !PATH_RE.test(text) || /^\d/.test(text)) {
		return undefined;
	}
	const m = /^(.*?)(?::(\d+)(?::\d+)?)?$/.exec(text)!;
	// A bare name (no folder) is a file only with an extension files have, not `fmt.Println`.
	const ext = /\.([A-Za-z0-9]+)$/.exec(m[1])?.[1] ?? '';
	if (!m[1].includes('/') && !FILE_EXTENSIONS.has(ext)) {
		return undefined;
	}
	return { path: m[1], line: m[2] ? Number(m[2]) : undefined };
}

const FILE_EXTENSIONS = new Set(
	'go mod sum ts tsx js jsx mjs cjs json jsonc md txt py rb rs java kt c h cc cpp hpp cs swift lua vim sh bash zsh yaml yml toml ini cfg conf xml html htm css scss less sql proto gradle lock env tf php pl r scala ex exs erl hs ml clj dart vue svelte'.split(' '),
);

export function fileLink(path: string, line: number | undefined, inner: string): string {
	return `<a class="file-link" href="#" data-path="${escapeHtml(path)}"${line ? ` data-line="${line}"` : ''} title="Open ${escapeHtml(path)}${line ? `:${line}` : ''}">${inner}</a>`;
}

export function renderMarkdown(text: string): string {
	return md.render(text);
}

const STATUS_LABEL: Record<string, string> = {
	pending: 'pending',
	awaiting_approval: 'waiting for approval',
	running: 'running',
	working: 'working',
	completed: 'completed',
	failed: 'failed',
	denied: 'denied',
	unknown: 'unknown outcome',
	output_limit: 'output cut at the limit',
};

const KIND_ICON: Record<string, string> = {
	read: 'file',
	edit: 'edit',
	execute: 'terminal',
	fetch: 'globe',
	other: 'tools',
};

export function renderEntry(e: Entry): string {
	switch (e.type) {
		case 'user':
			return `<div class="entry user" data-turn="${escapeHtml(e.turnId)}"><div class="who">You<span class="entry-actions">` +
				`<button class="icon-button" data-action="edit" title="Edit and send again">${icon('edit')}</button>` +
				`<button class="icon-button" data-action="retry" title="Ask again">${icon('debug-restart')}</button></span></div>` +
				`<div class="body">${escapeHtml(e.text).replace(/\n/g, '<br>')}</div>${e.parts?.length ? renderParts(e.parts) : ''}</div>`;
		case 'reasoning':
			// Folded: the person opens it when they want to see how kin got there.
			return `<div class="entry reasoning" data-turn="${escapeHtml(e.turnId)}"><details><summary>${icon('lightbulb')} Reasoning <span class="first-line">${visibleHtml(firstLine(e.text))}</span></summary><div class="body markdown">${renderMarkdown(e.text)}</div></details></div>`;
		case 'compaction':
			return `<div class="entry compaction"><details><summary>${icon('fold')} Earlier conversation summarised for the model <span class="reason">(${escapeHtml(
				e.reason,
			)})</span></summary><div class="body markdown">${renderMarkdown(e.text)}</div></details></div>`;
		case 'assistant':
			return `<div class="entry assistant"><div class="who">kin</div><div class="body markdown">${renderMarkdown(e.text)}</div></div>`;
		case 'tool':
			// The plan card shows what update_plan reported; its call says nothing more unless it failed.
			if (e.name === 'update_plan' && e.status !== 'failed') {
				return `<div class="entry plan-call" data-call="${escapeHtml(e.callId)}" hidden></div>`;
			}
			return renderTool(e);
		case 'waiting':
			return `<div class="entry waiting" data-request="${escapeHtml(e.requestId)}">${icon('bell-dot')} <span class="badge">${
				e.what === 'approval' ? 'approval needed' : 'input needed'
			}</span> <span class="title">${visibleHtml(e.title)}</span><div class="hint">${
				'Answer in the card below.'
			}</div></div>`;
		case 'decision':
			return `<div class="entry decision">${icon(e.decision === 'deny' || e.decision === 'decline' || e.decision === 'cancel' ? 'circle-slash' : 'pass')} ${inlineCode(
				e.label ?? decisionText(e.decision, e.approvalKind),
			)}: ${visibleHtml(e.title ?? e.requestId)}${e.reason && e.reason !== 'person' ? ` <span class="reason">(${escapeHtml(e.reason)})</span>` : ''}</div>`;
		case 'turnEnd': {
			const undo = e.changedFiles
				? e.undone
					? `<span class="undone">${icon('discard')} file changes undone</span>`
					: `<button class="secondary small" data-action="undo" data-turn="${escapeHtml(e.turnId)}" title="Put back the files kin changed in this turn">${icon('discard')} Undo file changes</button>`
				: '';
			const what = e.status === 'completed' ? '' : `Turn ${escapeHtml(e.status)}${e.error ? `: ${visibleHtml(e.error)}` : ''}`;
			const files = e.files?.length ? renderChangedFiles(e.turnId, e.files) : '';
			return `<div class="entry turn-end ${escapeHtml(e.status)}" data-turn="${escapeHtml(e.turnId)}">${what}${files}${undo ? `<div class="turn-actions">${undo}</div>` : ''}</div>`;
		}
		case 'plan':
			return renderPlan(e.entries);
		case 'undo':
			return renderUndo(e.result, e.question);
		case 'command':
			return `<div class="entry command"><div class="entry-head">${icon('terminal')} /${escapeHtml(e.name)}</div><pre>${visibleHtml(e.text)}</pre></div>`;
		case 'notice':
			return `<div class="entry notice ${escapeHtml(e.level)}">${icon(e.level === 'error' ? 'error' : e.level === 'warning' ? 'warning' : 'info')} ${visibleHtml(e.message)}</div>`;
	}
}

/** The first line of a reasoning summary without its markdown emphasis (its usual bold title). */
function firstLine(text: string): string {
	const line = text.trim().split('\n')[0] ?? '';
	return line.replace(/^\*\*(.*)\*\*$/, '$1').replace(/[*_`]/g, '').slice(0, 120);
}

const PART_ICON: Record<string, string> = { file: 'file', selection: 'selection', diagnostics: 'warning', resource: 'note', image: 'file-media', text: 'comment' };

/** What one attachment of a question is, in a few words (`main.go:3-5`, `2 problems in main.go`). */
export function partLabel(p: InputPart): string {
	const where = p.path ?? p.uri ?? '';
	const lines = p.range ? (p.range.start.line === lineEnd(p.range) ? `:${p.range.start.line + 1}` : `:${p.range.start.line + 1}-${lineEnd(p.range) + 1}`) : '';
	switch (p.type) {
		case 'file':
			return `${where}${lines}`;
		case 'selection':
			return `selection in ${where}${lines}`;
		case 'diagnostics': {
			const n = p.items?.length;
			return n === undefined ? `problems in ${where}` : `${n} problem${n === 1 ? '' : 's'} in ${where}`;
		}
		case 'image':
			return `image (${p.mimeType ?? 'image'})`;
		case 'resource':
			return where || 'text';
		default:
			return 'text';
	}
}

/** The last line a range takes (an end at character 0 of a later line does not take that line). */
function lineEnd(r: PartRange): number {
	return r.end.line > r.start.line && r.end.character === 0 ? r.end.line - 1 : r.end.line;
}

/** A question's attachments as chips; a file's chip opens it at its place. */
export function renderParts(parts: InputPart[], removable = false): string {
	const chips = parts
		.filter((p) => p.type !== 'text')
		.map((p, i) => {
			const label = escapeHtml(partLabel(p));
			const inner = `${icon(PART_ICON[p.type] ?? 'file')} ${label}`;
			const body = p.path && !removable ? fileLink(p.path, p.range ? p.range.start.line + 1 : undefined, inner) : `<span>${inner}</span>`;
			const remove = removable ? `<button class="icon-button" data-action="detach" data-index="${i}" title="Remove ${label}" aria-label="Remove ${label}">${icon('close')}</button>` : '';
			return `<span class="chip part-${escapeHtml(p.type)}">${body}${remove}</span>`;
		});
	return chips.length ? `<div class="parts">${chips.join('')}</div>` : '';
}

/** How full the model's window is: a bar and "12% of 400k". */
export function renderGauge(u: ({ contextTokens: number; contextWindow: number; inputTokens: number; outputTokens: number } & SpendUsage) | undefined): string {
	if (!u || !u.contextWindow) {
		return '';
	}
	const cost = sessionCostText(u);
	const costSpan = cost ? ` <span class="cost" title="${escapeHtml('What this session cost so far, at the prices in settings.json (limits.prices).')}">${escapeHtml(cost)}</span>` : '';
	const pct = Math.min(100, Math.round((u.contextTokens / u.contextWindow) * 100));
	const level = pct >= 80 ? 'high' : pct >= 60 ? 'mid' : 'low';
	const title = `Context: ${u.contextTokens.toLocaleString('en-US')} of ${u.contextWindow.toLocaleString('en-US')} tokens (${pct}%). kin summarises the earlier conversation when it gets full. Last turn: ${u.inputTokens.toLocaleString('en-US')} in, ${u.outputTokens.toLocaleString('en-US')} out.`;
	return `<span class="gauge ${level}" role="meter" aria-label="Context used" aria-valuemin="0" aria-valuemax="100" aria-valuenow="${pct}" title="${escapeHtml(title)}"><span class="bar"><span class="fill"></span></span> <span class="pct">${pct}% of ${escapeHtml(shortTokens(u.contextWindow))}</span></span>${costSpan}`;
}

function shortTokens(n: number): string {
	return n >= 1_000_000 ? `${+(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n);
}

const STEP_ICON: Record<string, string> = { completed: 'pass-filled', in_progress: 'arrow-right', pending: 'circle-large-outline' };
const STEP_LABEL: Record<string, string> = { completed: 'done', in_progress: 'in progress', pending: 'to do' };

/** The plan as a checklist: done, in progress, to do, with the priority where the model gave one. */
export function renderPlan(steps: PlanEntry[]): string {
	const done = steps.filter((x) => x.status === 'completed').length;
	const items = steps
		.map(
			(x) =>
				`<li class="step ${escapeHtml(x.status)}" aria-label="${escapeHtml(`${STEP_LABEL[x.status] ?? x.status}: ${x.content}`)}">${icon(STEP_ICON[x.status] ?? 'circle-large-outline')}<span class="content">${visibleHtml(x.content)}</span>${x.priority ? ` <span class="priority ${escapeHtml(x.priority)}">${escapeHtml(x.priority)}</span>` : ''}</li>`,
		)
		.join('');
	return `<div class="entry plan"><div class="entry-head">${icon('checklist')} Plan <span class="progress">${done}/${steps.length}</span></div><ul class="checklist">${items}</ul></div>`;
}

/** What an undo put back, what it left (with the diff of the change since) and what it could not undo. */
export function renderUndo(r: TurnUndoResult, question = r.question): string {
	const which = question ? `“${escapeHtml(question)}”` : `turn ${escapeHtml(r.turnId)}`;
	const parts = r.error
		? // An undo kin was stopped in: which files went back is not known.
			[`<div class="entry-head" title="turn ${escapeHtml(r.turnId)}">${icon('discard')} Undo of ${which} unfinished</div>`, `<div class="conflict">${icon('warning')} ${visibleHtml(r.error)}</div>`]
		: [`<div class="entry-head" title="turn ${escapeHtml(r.turnId)}">${icon('discard')} Undid ${which}: restored ${r.restored.length} file${r.restored.length === 1 ? '' : 's'}</div>`];
	if (r.restored.length) {
		parts.push(`<ul class="files">${r.restored.map((p) => `<li>${fileLink(p, undefined, escapeHtml(p))}</li>`).join('')}</ul>`);
	}
	for (const c of r.conflicts ?? []) {
		parts.push(`<div class="conflict">${icon('warning')} ${fileLink(c.path, undefined, escapeHtml(c.path))}: ${escapeHtml(c.reason)}</div>${c.diff ? renderDiff(c.diff) : ''}`);
	}
	for (const n of r.notUndoable ?? []) {
		parts.push(`<div class="not-undoable">${icon('circle-slash')} ${visibleHtml(n.title || n.name)}: ${visibleHtml(n.reason)}</div>`);
	}
	return `<div class="entry undo">${parts.join('')}</div>`;
}

/** The files a turn changed, each opening a diff from before the turn to the file now. */
export function renderChangedFiles(turnId: string, files: ChangedFile[]): string {
	const items = files
		.map(
			(f) =>
				`<li><a href="#" class="changed-file" data-action="turnDiff" data-turn="${escapeHtml(turnId)}" data-path="${escapeHtml(f.path)}" title="Open the diff of ${escapeHtml(
					f.path,
				)}: before this turn, and now">${icon('diff')} ${escapeHtml(baseName(f.path))}</a> <span class="counts"><span class="add">+${f.added}</span> <span class="del">−${f.removed}</span></span></li>`,
		)
		.join('');
	return `<div class="changed-files"><div class="label">${icon('files')} Changed ${files.length} file${files.length === 1 ? '' : 's'}</div><ul>${items}</ul></div>`;
}

function baseName(p: string): string {
	return p.split(/[\\/]/).pop() || p;
}

function renderTool(e: ToolEntry): string {
	const args = prettyArgs(e.arguments);
	const diffs = (e.content ?? []).filter((c) => c.type === 'diff');
	const parts: string[] = [];
	if (args) {
		parts.push(`<div class="label">Arguments</div><pre>${visibleHtml(args)}</pre>`);
	}
	for (const c of diffs) {
		if (c.type === 'diff') {
			parts.push(`<div class="label">${fileLink(c.diff.path, undefined, escapeHtml(c.diff.path))}</div>${renderDiff(c.diff.unified ?? c.diff.newText)}`);
		}
	}
	if (showsSubagent(e.subagent)) {
		parts.push(renderSubagent(e.subagent));
	}
	if (e.output) {
		parts.push(`<div class="label">Output</div><pre>${visibleHtml(e.output)}</pre>`);
	}
	const open = e.status === 'running' || e.status === 'working' || e.status === 'failed' ? ' open' : '';
	// An MCP task: where it stands, next to the status.
	const standing = e.status === 'working' && e.statusMessage ? `: ${e.statusMessage.replace(/[\r\n]+/g, ' ')}` : '';
	// A command's output can be followed in a terminal view, while it runs and after.
	const terminal =
		e.kind === 'execute' && e.name === 'bash'
			? `<button class="icon-button" data-action="terminal" data-call="${escapeHtml(e.callId)}" title="Show the output in a terminal" aria-label="Show the output in a terminal">${icon('terminal')}</button>`
			: '';
	// A refusal says why (kin's words, such as ask mode's) without opening the card.
	const why = e.status === 'denied' && e.output ? `<div class="why">${icon('info')} ${visibleHtml(e.output.trim().split('\n')[0])}</div>` : '';
	return `<div class="entry tool status-${escapeHtml(e.status)}" data-call="${escapeHtml(e.callId)}">
<details${open}><summary>${icon(KIND_ICON[e.kind ?? 'other'] ?? 'tools', 'kind')} <span class="title">${visibleHtml(e.title)}</span>${terminal} <span class="status">${visibleHtml((STATUS_LABEL[e.status] ?? e.status) + standing)}</span></summary>
<div class="tool-body">${parts.join('')}</div></details>${e.links?.length ? renderResourceLinks(e.links) : ''}${showsSubagent(e.subagent) ? renderSubagentLine(e.subagent) : e.waitingSlot ? renderSlotLine() : ''}${why}</div>`;
}

/**
 * An MCP result's resource links, under its call (also when the card is folded): each opens the
 * resource read-only in an editor (its title or name, and `server:uri`), and can be attached to
 * the next question as `@server:uri` can.
 */
export function renderResourceLinks(links: ResourceLink[]): string {
	const li = links.map((l) => {
		const { name, where } = linkLabel(l);
		const data = `data-server="${escapeHtml(l.server)}" data-uri="${escapeHtml(l.uri)}"`;
		const more = `${l.name ? ` data-name="${escapeHtml(l.name)}"` : ''}${l.title ? ` data-title="${escapeHtml(l.title)}"` : ''}${l.mimeType ? ` data-mime="${escapeHtml(l.mimeType)}"` : ''}`;
		return (
			`<li><a href="#" class="resource-link" data-action="openResource" ${data}${more} title="Open ${escapeHtml(where)} (read-only)">${icon('link')} <span class="link-name">${escapeHtml(
				name,
			)}</span> <code class="link-where">${escapeHtml(where)}</code></a>` +
			`<button class="icon-button" data-action="attachResource" ${data} title="Attach ${escapeHtml(where)} to the next question" aria-label="Attach ${escapeHtml(where)} to the next question">${icon('attach')}</button></li>`
		);
	});
	return `<ul class="resource-links" aria-label="Resources the call linked">${li.join('')}</ul>`;
}

/** A unified diff, one element per line, so the person can scroll it to its last line. */
export function renderDiff(unified: string): string {
	const lines = unified.replace(/\n$/, '').split('\n');
	const body = lines
		.map((l) => {
			const cls = l.startsWith('+++') || l.startsWith('---') ? 'file' : l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : 'ctx';
			return `<span class="line ${cls}">${visibleHtml(l) || ' '}</span>`;
		})
		.join('');
	return `<pre class="diff" tabindex="0" aria-label="diff, ${lines.length} lines">${body}</pre>`;
}

/** A question waiting in the dock: what would happen, and kin's options with deny first. */
export function renderCard(c: WaitingCard & { answering?: boolean }, sessionTitle?: string): string {
	const parts: string[] = [];
	parts.push(
		`<div class="card-head">${icon(c.what === 'link' ? 'link-external' : c.what === 'form' ? 'question' : c.unconfined ? 'unlock' : 'shield')} <span class="heading">${escapeHtml(c.heading)}</span>${
			sessionTitle ? ` <span class="session">in ${visibleHtml(sessionTitle)}</span>` : ''
		}</div>`,
	);
	if (c.title) {
		parts.push(`<div class="card-title">${escapeHtml(c.title)}</div>`);
	}
	if (c.command !== undefined) {
		parts.push(`<pre class="command" tabindex="0">${escapeHtml(c.command)}</pre>`);
	}
	if (c.url) {
		parts.push(`<div class="url">${escapeHtml(c.url)}</div>`);
	}
	if (c.facts.length) {
		parts.push(`<dl class="facts">${c.facts.map((f) => `<dt>${escapeHtml(f.label)}</dt><dd>${escapeHtml(f.value)}</dd>`).join('')}</dl>`);
	}
	if (c.sandbox) {
		parts.push(`<div class="sandbox${c.unconfined ? ' unconfined' : ''}">${icon(c.unconfined ? 'unlock' : 'lock')} ${escapeHtml(c.sandbox)}</div>`);
	}
	if (c.arguments) {
		parts.push(`<div class="label">Arguments</div><pre class="arguments" tabindex="0">${escapeHtml(c.arguments)}</pre>`);
	}
	for (const [i, d] of (c.diffs ?? []).entries()) {
		parts.push(
			`<div class="diff-file"><div class="diff-head">${fileLink(d.path, undefined, escapeHtml(d.path))} <span class="counts"><span class="add">+${d.added}</span> <span class="del">−${d.removed}</span></span>` +
				`<button class="secondary small" data-action="openDiff" data-index="${i}" title="Open the diff in an editor beside the chat">${icon('diff')} Open diff</button></div>${renderDiff(d.unified)}</div>`,
		);
	}
	if (c.items?.length) {
		parts.push(renderTrustItems(c.items));
	}
	if (c.warning) {
		parts.push(`<div class="card-warning">${icon('warning')} ${escapeHtml(c.warning)}</div>`);
	}
	const disabled = c.answering ? ' disabled' : '';
	parts.push(
		`<div class="buttons">${c.buttons
			.map((b) => `<button class="${b.deny ? 'deny' : b.quiet ? 'secondary' : 'allow'}" data-option="${escapeHtml(b.optionId)}"${b.deny ? ' data-default="true"' : ''}${disabled}>${inlineCode(b.label)}</button>`)
			.join('')}</div>`,
	);
	parts.push(`<div class="hint">${c.answering ? escapeHtml(c.answeringHint ?? 'Sending your answer…') : `Enter or Escape: ${inlineCode(c.buttons[0].label)}. Tab moves between the choices.`}</div>`);
	return `<section class="card ${c.what} kind-${escapeHtml(c.kind)}" data-request="${escapeHtml(c.requestId)}" data-revision="${Number(c.revision) || 0}" tabindex="0" role="group" aria-label="${escapeHtml(
		`${c.heading}: ${c.title}`,
	)}">${parts.join('')}</section>`;
}

/**
 * What a project_trust or mcp_skill card asks about, every item: its kind, name and place, a
 * hook's whole command (monospace, wrapped, never cut: the person must see what it would run)
 * and whether it changed since it was trusted. The digest is in the tooltip.
 */
export function renderTrustItems(items: CardItem[]): string {
	const li = items.map((it) => {
		const changed = it.changed ? ` <span class="item-changed">${icon('warning')} changed since you trusted it</span>` : '';
		const name = it.name ? ` <span class="item-name">${escapeHtml(it.name)}</span>` : '';
		const body =
			it.command !== undefined
				? `<div class="label">Runs</div><pre class="command" tabindex="0">${escapeHtml(it.command)}</pre>`
				: it.detail
					? `<div class="item-detail">${escapeHtml(it.detail)}</div>`
					: '';
		return `<li class="trust-item kind-${escapeHtml(it.kind)}${it.changed ? ' changed' : ''}" title="${escapeHtml(it.digest)}"><div class="item-head"><span class="item-kind">${escapeHtml(
			it.what,
		)}</span>${name}${changed}</div><div class="item-path"><code>${escapeHtml(it.path)}</code></div>${body}</li>`;
	});
	return `<ul class="trust-items" aria-label="${items.length} item${items.length === 1 ? '' : 's'} to trust">${li.join('')}</ul>`;
}

function prettyArgs(a: string | undefined): string {
	if (!a) {
		return '';
	}
	try {
		return JSON.stringify(JSON.parse(a), null, 2);
	} catch {
		return a;
	}
}

export function decisionText(d: string, kind?: string): string {
	if (kind === 'acknowledge_unknown') {
		// The person acknowledged an unknown outcome (or not yet): nothing was allowed.
		return d === 'deny' ? 'Not acknowledged' : 'Acknowledged';
	}
	switch (d) {
		case 'allow_once':
			return 'Allowed once';
		case 'allow_always':
			return 'Always allowed in this session';
		case 'allow_always_permanent':
			return 'Always allowed in every session';
		case 'accept':
			return 'Answered';
		case 'decline':
			return 'Declined';
		case 'cancel':
			return 'Cancelled';
		case 'trust':
			return 'Trusted';
		case 'deny':
			return 'Denied';
		default:
			return d;
	}
}

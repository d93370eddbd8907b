// Turns transcript entries into HTML strings. Markdown goes through markdown-it with raw HTML
// disabled (so any HTML the model writes is shown as text); everything else is escaped here.
// No DOM access, so it can be unit-tested under node.

import MarkdownIt from 'markdown-it';
import type { Entry, ToolEntry } from '../chat/transcript';

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

// Links open through VS Code (the webview forbids navigation anyway); mark them for the page.
const defaultLink = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
	tokens[idx].attrSet('title', tokens[idx].attrGet('href') ?? '');
	return defaultLink(tokens, idx, options, env, self);
};

export function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderMarkdown(text: string): string {
	return md.render(text);
}

const STATUS_LABEL: Record<string, string> = {
	pending: 'pending',
	awaiting_approval: 'waiting for approval',
	running: 'running',
	completed: 'completed',
	failed: 'failed',
	denied: 'denied',
	unknown: 'unknown outcome',
	output_limit: 'output cut at the limit',
};

const KIND_ICON: Record<string, string> = {
	read: '📄',
	edit: '✏️',
	execute: '▶',
	fetch: '🌐',
	other: '🔧',
};

export function renderEntry(e: Entry): string {
	switch (e.type) {
		case 'user':
			return `<div class="entry user"><div class="who">You</div><div class="body">${escapeHtml(e.text).replace(/\n/g, '<br>')}</div></div>`;
		case 'assistant':
			return `<div class="entry assistant"><div class="who">kin</div><div class="body markdown">${renderMarkdown(e.text)}</div></div>`;
		case 'tool':
			return renderTool(e);
		case 'waiting':
			return `<div class="entry waiting" data-request="${escapeHtml(e.requestId)}"><span class="badge">${
				e.what === 'approval' ? 'approval needed' : 'input needed'
			}</span> <span class="title">${escapeHtml(e.title)}</span>${
				e.detail ? `<pre class="detail">${escapeHtml(e.detail)}</pre>` : ''
			}<div class="hint">Answer in the dialog.</div></div>`;
		case 'decision':
			return `<div class="entry decision">${escapeHtml(decisionText(e.decision))}: ${escapeHtml(e.title ?? e.requestId)}${
				e.reason && e.reason !== 'person' ? ` <span class="reason">(${escapeHtml(e.reason)})</span>` : ''
			}</div>`;
		case 'turnEnd':
			if (e.status === 'completed') {
				return '<div class="entry turn-end"></div>';
			}
			return `<div class="entry turn-end ${escapeHtml(e.status)}">Turn ${escapeHtml(e.status)}${e.error ? `: ${escapeHtml(e.error)}` : ''}</div>`;
		case 'notice':
			return `<div class="entry notice ${escapeHtml(e.level)}">${escapeHtml(e.message)}</div>`;
	}
}

function renderTool(e: ToolEntry): string {
	const args = prettyArgs(e.arguments);
	const diffs = (e.content ?? []).filter((c) => c.type === 'diff');
	const parts: string[] = [];
	if (args) {
		parts.push(`<div class="label">Arguments</div><pre>${escapeHtml(args)}</pre>`);
	}
	for (const c of diffs) {
		if (c.type === 'diff') {
			parts.push(`<div class="label">${escapeHtml(c.diff.path)}</div><pre class="diff">${escapeHtml(c.diff.unified ?? c.diff.newText)}</pre>`);
		}
	}
	if (e.output) {
		parts.push(`<div class="label">Output</div><pre>${escapeHtml(e.output)}</pre>`);
	}
	const open = e.status === 'running' || e.status === 'failed' ? ' open' : '';
	return `<div class="entry tool status-${escapeHtml(e.status)}" data-call="${escapeHtml(e.callId)}">
<details${open}><summary><span class="icon">${KIND_ICON[e.kind ?? 'other'] ?? '🔧'}</span> <span class="title">${escapeHtml(
		e.title,
	)}</span> <span class="status">${escapeHtml(STATUS_LABEL[e.status] ?? e.status)}</span></summary>
<div class="tool-body">${parts.join('')}</div></details></div>`;
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

function decisionText(d: string): string {
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

// The chat page inside the webview: renders the state the extension posts, sends what the person
// does. It keeps nothing but a draft of the input (webview state) across reloads; the session
// itself is restored by the extension (workspaceState + session/resume).
//
// Waiting cards (approvals, forms, links) sit in the dock between the transcript and the input. A card
// never takes focus by itself (typing elsewhere must never answer it); inside a card, Escape and
// Enter (anywhere but on another button) choose its deny option, and Tab reaches every choice.

import type { Card, HostMessage, PageMessage, StateMessage } from '../chat/chatView';
import type { Entry } from '../chat/transcript';
import type { CommandInfo } from '../protocol/types';
import { CompletionItem, mentionAt, placeFilled, slashCompletions, type TemplatePending } from './completion';
import { nestSessions, subagentLabel, type SubagentMap } from '../chat/subagents';
import { escapeHtml, renderCard, renderEntry, renderGauge, renderParts, visibleHtml } from './render';

declare function acquireVsCodeApi(): {
	postMessage(m: PageMessage): void;
	getState(): { draft?: string } | undefined;
	setState(s: { draft?: string }): void;
};

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLElement>('transcript');
const dock = $<HTMLElement>('dock');
const input = $<HTMLTextAreaElement>('input');
/** The composer's own placeholder, put back when a read-only session's reason no longer shows. */
const defaultPlaceholder = input.placeholder;
const sendBtn = $<HTMLButtonElement>('send');
const stopBtn = $<HTMLButtonElement>('stop');
const select = $<HTMLSelectElement>('session');
const status = $<HTMLElement>('status');
const composerError = $<HTMLElement>('composer-error');
const modeSelect = $<HTMLSelectElement>('mode');
const completions = $<HTMLElement>('completions');
const modelSelect = $<HTMLSelectElement>('model');
const effortSelect = $<HTMLSelectElement>('effort');
const gauge = $<HTMLElement>('gauge');
const attachments = $<HTMLElement>('attachments');
const jump = $<HTMLButtonElement>('jump');
const composerNote = $<HTMLElement>('composer-note');

// rendered holds, per entry key, its element and the JSON it was drawn from; cards likewise.
const rendered = new Map<string, { el: HTMLElement; json: string }>();
const cardsDrawn = new Map<string, { el: HTMLElement; json: string }>();
let running = false;
let current: string | undefined;
let sessionTitles = new Map<string, string>();
/** The open session's subagents, to name their questions' cards. */
let subagentsShown: SubagentMap | undefined;
// sending is the question on its way (seq and text) until the extension says it was accepted.
let sending: { seq: number; text: string } | undefined;
let seq = 0;
let commands: CommandInfo[] = [];
// shown holds the completions offered now, and which one is selected.
let shown: { items: CompletionItem[]; selected: number } | undefined;
// The `@` mention being completed: the extension answers mentionQuery with matching files.
let mentionSeq = 0;
let mention: { seq: number; start: number } | undefined;
// A resource template picked from the `@` list, while the extension asks for its values.
let templateSeq = 0;
let templatePending: TemplatePending | undefined;

// The draft: the webview's own state, else what the extension kept (the page drew it into the
// textarea), which survives a window reload.
input.value = vscode.getState()?.draft || input.value;
let draftTimer: ReturnType<typeof setTimeout> | undefined;
/** Keeps what the input holds: in the webview's state at once, and with the extension soon. */
function keepDraft(): void {
	vscode.setState({ draft: input.value });
	clearTimeout(draftTimer);
	draftTimer = setTimeout(() => vscode.postMessage({ type: 'saveDraft', text: input.value }), 200);
}

// The transcript follows the newest message (as Copilot Chat and Claude Code do) until the person
// scrolls up to read; then "Jump to newest" says there is more below. Answering a card follows
// again: what the answer lets happen (the tool's output, the answer) comes into view.
let follow = true;
const nearBottom = () => transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
function toNewest(): void {
	follow = true;
	transcript.scrollTop = transcript.scrollHeight;
	jump.hidden = true;
}
function stayAtNewest(): void {
	if (follow) {
		transcript.scrollTop = transcript.scrollHeight;
	}
	jump.hidden = follow || nearBottom();
}
// Only the person scrolls up (a wheel, keys, the scroll bar); a layout change (a card appearing
// in the dock) never stops the following.
transcript.addEventListener('wheel', (e) => {
	if (e.deltaY < 0) {
		follow = false;
	}
});
transcript.addEventListener('keydown', (e) => {
	if (['ArrowUp', 'PageUp', 'Home'].includes(e.key)) {
		follow = false;
	}
});
transcript.addEventListener('mousedown', (e) => {
	if (e.target === transcript) {
		follow = false; // on the scroll bar
	}
});
transcript.addEventListener('scroll', () => {
	if (nearBottom()) {
		follow = true;
	}
	jump.hidden = follow || nearBottom();
});
new ResizeObserver(stayAtNewest).observe(transcript);
jump.addEventListener('click', toNewest);

function send(): void {
	const text = input.value.trim();
	if (!text || running || sending) {
		return;
	}
	sending = { seq: ++seq, text };
	composerError.textContent = '';
	composerNote.textContent = '';
	sendBtn.disabled = true;
	vscode.postMessage({ type: 'send', text, seq: sending.seq });
}

/** The question was accepted (clear it, unless the person typed on) or refused (keep it, say why). */
function sent(m: Extract<HostMessage, { type: 'sent' }>): void {
	if (!sending || sending.seq !== m.seq) {
		return;
	}
	if (m.ok) {
		if (input.value.trim() === sending.text) {
			input.value = '';
			keepDraft();
		}
	} else {
		composerError.textContent = m.error ?? 'kin: the question was not sent';
	}
	sending = undefined;
	sendBtn.disabled = running;
}

sendBtn.addEventListener('click', send);
stopBtn.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
$('delete').addEventListener('click', () => current && vscode.postMessage({ type: 'deleteSession', sessionId: current }));
/** The session picker's last option when kin has more sessions than it sent (not a session id: those start with s_). */
const MORE_SESSIONS = '__more__';
select.addEventListener('change', () => {
	if (select.value === MORE_SESSIONS) {
		select.value = current ?? '';
		vscode.postMessage({ type: 'moreSessions' });
		return;
	}
	if (select.value && select.value !== current) {
		vscode.postMessage({ type: 'selectSession', sessionId: select.value });
	}
});
modeSelect.addEventListener('change', () => vscode.postMessage({ type: 'configure', mode: modeSelect.value as 'ask' | 'agent' | 'auto-edit' }));
modelSelect.addEventListener('change', () => modelSelect.value && vscode.postMessage({ type: 'configureModel', model: modelSelect.value }));
effortSelect.addEventListener('change', () => effortSelect.value && vscode.postMessage({ type: 'configureModel', effort: effortSelect.value }));
$('attach-file').addEventListener('click', () => vscode.postMessage({ type: 'attach', what: 'file' }));
$('attach-selection').addEventListener('click', () => vscode.postMessage({ type: 'attach', what: 'selection' }));
$('attach-problems').addEventListener('click', () => vscode.postMessage({ type: 'attach', what: 'problems' }));
input.addEventListener('keydown', (e) => {
	if (shown && !e.isComposing) {
		if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
			e.preventDefault();
			const n = shown.items.length;
			shown.selected = (shown.selected + (e.key === 'ArrowDown' ? 1 : n - 1)) % n;
			drawCompletions();
			return;
		}
		if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey)) {
			e.preventDefault();
			accept(shown.items[shown.selected]);
			return;
		}
		if (e.key === 'Escape') {
			e.preventDefault();
			closeCompletions();
			return;
		}
	}
	if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
		e.preventDefault();
		send();
	}
});
input.addEventListener('input', () => {
	keepDraft();
	updateCompletions();
});
input.addEventListener('blur', () => setTimeout(closeCompletions, 150));
// An image pasted into the input is attached to the next question (kin takes image parts).
input.addEventListener('paste', (e) => {
	const files = [...(e.clipboardData?.items ?? [])].filter((i) => i.kind === 'file' && i.type.startsWith('image/')).map((i) => i.getAsFile()).filter((f): f is File => !!f);
	if (!files.length) {
		return;
	}
	e.preventDefault();
	for (const f of files) {
		if (!IMAGE_TYPES.includes(f.type)) {
			composerError.textContent = `kin takes PNG, JPEG, GIF and WebP images, not ${f.type}.`;
			continue;
		}
		if (f.size > IMAGE_MAX) {
			composerError.textContent = `The image is ${Math.round(f.size / 1024 / 1024)} MB; a question takes at most 5 MB of images.`;
			continue;
		}
		const r = new FileReader();
		r.onload = () => {
			const data = String(r.result).replace(/^data:[^,]*,/, '');
			vscode.postMessage({ type: 'attachImage', mimeType: f.type, data });
		};
		r.readAsDataURL(f);
	}
});
completions.addEventListener('mousedown', (e) => {
	const row = (e.target as HTMLElement).closest<HTMLElement>('[data-index]');
	if (row && shown) {
		e.preventDefault();
		accept(shown.items[Number(row.dataset.index)]);
	}
});

/** Offers the commands matching what is typed (`/na…` at the start), or files for `@pa…`. */
function updateCompletions(): void {
	const caret = input.selectionStart ?? input.value.length;
	const at = mentionAt(input.value, caret);
	if (at) {
		mention = { seq: ++mentionSeq, start: at.start };
		vscode.postMessage({ type: 'mentionQuery', query: at.query, seq: mention.seq });
		return;
	}
	mention = undefined;
	const items = slashCompletions(input.value, caret, commands);
	// A command typed out in full, with nothing more to choose, needs no list.
	const exact = items.length === 1 && input.value.slice(0, input.selectionStart ?? 0) === items[0].insert.trimEnd();
	if (items.length === 0 || exact) {
		closeCompletions();
		return;
	}
	shown = { items, selected: Math.min(shown?.selected ?? 0, items.length - 1) };
	drawCompletions();
}

/** The files matching the `@` mention being typed (if it is still the one typed). */
function mentionsFound(m: Extract<HostMessage, { type: 'mentions' }>): void {
	if (!mention || mention.seq !== m.seq) {
		return;
	}
	const caret = input.selectionStart ?? input.value.length;
	const templates = new Set(m.templates ?? []);
	const items: CompletionItem[] = m.paths.map((p) =>
		templates.has(p)
			? { label: `@${p}`, detail: 'template: pick to fill in its values', insert: `@${p} `, start: mention!.start, end: caret, template: p }
			: { label: `@${p}`, insert: `@${p} `, start: mention!.start, end: caret },
	);
	if (items.length === 0) {
		closeCompletions();
		return;
	}
	shown = { items, selected: 0 };
	drawCompletions();
}

function drawCompletions(): void {
	if (!shown) {
		return;
	}
	completions.innerHTML = shown.items
		.map(
			(c, i) =>
				`<div class="completion${i === shown!.selected ? ' selected' : ''}" role="option" aria-selected="${i === shown!.selected}" data-index="${i}"><span class="label">${escapeHtml(
					c.label,
				)}</span>${c.detail ? ` <span class="detail">${escapeHtml(c.detail)}</span>` : ''}</div>`,
		)
		.join('');
	completions.hidden = false;
	completions.querySelector('.selected')?.scrollIntoView({ block: 'nearest' });
}

function accept(c: CompletionItem): void {
	if (c.template) {
		// The extension asks for the template's values (QuickPicks) and answers templateFilled.
		templatePending = { seq: ++templateSeq, start: c.start, end: c.end, input: input.value };
		vscode.postMessage({ type: 'fillTemplate', word: c.template, seq: templatePending.seq });
		closeCompletions();
		return;
	}
	input.value = input.value.slice(0, c.start) + c.insert + input.value.slice(c.end);
	const at = c.start + c.insert.length;
	input.setSelectionRange(at, at);
	keepDraft();
	closeCompletions();
	input.focus();
}

function closeCompletions(): void {
	shown = undefined;
	mention = undefined;
	completions.hidden = true;
	completions.innerHTML = '';
}

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
// What kin takes per question is 5 MiB of base64; the file is 3/4 of that.
const IMAGE_MAX = (5 * 1024 * 1024 * 3) / 4;

// Clicks anywhere: card choices, links, code actions, question actions.
document.addEventListener('click', (e) => {
	const t = e.target as HTMLElement;
	const option = t.closest<HTMLButtonElement>('.card [data-option]');
	if (option) {
		answer(option.closest<HTMLElement>('.card')!, option.dataset.option!);
		return;
	}
	const action = t.closest<HTMLElement>('[data-action]');
	if (action) {
		e.preventDefault();
		doAction(action);
		return;
	}
	const link = t.closest<HTMLAnchorElement>('a');
	if (link) {
		// The extension opens it (VS Code asks before an untrusted site); VS Code's own handler of
		// webview link clicks must not open it a second time.
		e.preventDefault();
		e.stopPropagation();
		if (link.classList.contains('file-link')) {
			vscode.postMessage({ type: 'openFile', path: link.dataset.path ?? '', line: link.dataset.line ? Number(link.dataset.line) : undefined });
		} else if (link.getAttribute('href')) {
			vscode.postMessage({ type: 'openLink', href: link.getAttribute('href')! });
		}
	}
});

// Keys inside a card: Escape, and Enter anywhere but on a button or link, choose deny.
document.addEventListener('keydown', (e) => {
	const card = (e.target as HTMLElement).closest?.<HTMLElement>('.card');
	if (!card || e.isComposing) {
		return;
	}
	const onControl = (e.target as HTMLElement).closest('button, a');
	if (e.key === 'Escape' || (e.key === 'Enter' && !onControl)) {
		e.preventDefault();
		e.stopPropagation();
		const deny = card.querySelector<HTMLButtonElement>('[data-default]');
		if (deny) {
			answer(card, deny.dataset.option!);
		}
	}
});

function answer(card: HTMLElement, optionId: string): void {
	const requestId = card.dataset.request!;
	// The revision of the card answered: kin refuses an answer to one it has replaced since.
	const revision = Number(card.dataset.revision) || 0;
	for (const b of card.querySelectorAll<HTMLButtonElement>('[data-option]')) {
		b.disabled = true;
	}
	vscode.postMessage({ type: 'answer', requestId, optionId, revision });
	// Focus goes back to the input, not to whatever comes next (another card must not get keys).
	input.focus();
	// What the answer lets happen comes into view.
	toNewest();
}

function doAction(el: HTMLElement): void {
	switch (el.dataset.action) {
		case 'copy':
		case 'insert': {
			const code = el.closest('.code-block')?.querySelector('code')?.textContent ?? '';
			vscode.postMessage({ type: el.dataset.action, text: code });
			return;
		}
		case 'openDiff': {
			const card = el.closest<HTMLElement>('.card');
			if (card) {
				vscode.postMessage({ type: 'openDiff', requestId: card.dataset.request! });
			}
			return;
		}
		case 'undo': {
			const turnId = el.dataset.turn;
			if (turnId && !running) {
				(el as HTMLButtonElement).disabled = true;
				vscode.postMessage({ type: 'undo', turnId });
			}
			return;
		}
		case 'retry': {
			const turnId = el.closest<HTMLElement>('.entry.user')?.dataset.turn;
			if (turnId && !running) {
				vscode.postMessage({ type: 'retry', turnId });
			}
			return;
		}
		case 'detach':
			vscode.postMessage({ type: 'detach', index: Number(el.dataset.index) });
			return;
		case 'terminal':
			vscode.postMessage({ type: 'terminal', callId: el.dataset.call ?? '' });
			return;
		case 'turnDiff':
			vscode.postMessage({ type: 'turnDiff', turnId: el.dataset.turn ?? '', path: el.dataset.path ?? '' });
			return;
		case 'openResource': {
			const d = el.dataset;
			if (d.server && d.uri) {
				vscode.postMessage({ type: 'openResource', link: { server: d.server, uri: d.uri, name: d.name, title: d.title, mimeType: d.mime } });
			}
			return;
		}
		case 'attachResource':
			if (el.dataset.server && el.dataset.uri) {
				vscode.postMessage({ type: 'attachResource', server: el.dataset.server, uri: el.dataset.uri });
			}
			return;
		case 'edit': {
			const text = el.closest<HTMLElement>('.entry.user')?.querySelector('.body')?.textContent ?? '';
			setInput(text);
			return;
		}
	}
}

function setInput(text: string): void {
	input.value = text;
	keepDraft();
	input.focus();
	input.setSelectionRange(text.length, text.length);
}

window.addEventListener('message', (ev: MessageEvent<HostMessage>) => {
	const m = ev.data;
	switch (m?.type) {
		case 'state':
			draw(m);
			return;
		case 'sent':
			sent(m);
			return;
		case 'mentions':
			mentionsFound(m);
			return;
		case 'templateFilled': {
			const p = templatePending;
			if (!p || p.seq !== m.seq) {
				return;
			}
			templatePending = undefined;
			if (m.text) {
				const f = placeFilled(input.value, p, m.text);
				input.value = f.value;
				input.setSelectionRange(f.caret, f.caret);
				keepDraft();
			}
			input.focus();
			return;
		}
		case 'focusCard': {
			const card = dock.querySelector<HTMLElement>(`.card[data-request="${CSS.escape(m.requestId)}"]`);
			card?.scrollIntoView({ block: 'nearest' });
			(card?.querySelector<HTMLButtonElement>('[data-default]') ?? card)?.focus();
			return;
		}
		case 'focusInput':
			if (m.text !== undefined) {
				setInput(m.text);
			} else {
				input.focus();
			}
			return;
		case 'draft': {
			// A question kin never took comes back, before whatever was typed since.
			const typed = input.value.trim();
			input.value = typed && typed !== m.text ? `${m.text}\n\n${typed}` : m.text;
			keepDraft();
			composerNote.textContent = m.note ?? '';
			return;
		}
	}
});

function draw(m: StateMessage): void {
	const t = m.transcript;
	document.body.classList.toggle('loading', m.loading);
	// Another session shown: it opens at its newest message.
	const switched = t.session?.sessionId !== current;
	current = t.session?.sessionId;
	running = !!t.runningTurn;
	document.body.classList.toggle('running', running);
	sendBtn.disabled = running || !!sending || !!t.readOnly;
	sendBtn.title = t.readOnly ? `Read-only: ${t.readOnly}` : '';
	input.placeholder = t.readOnly ? `Read-only: ${t.readOnly}` : defaultPlaceholder;
	stopBtn.disabled = !running;
	$<HTMLButtonElement>('delete').disabled = !current;

	// Session picker: the current one first if the list does not know it yet.
	const sessions = [...m.sessions];
	if (t.session && !sessions.some((s) => s.sessionId === t.session!.sessionId)) {
		sessions.unshift(t.session);
	}
	sessionTitles = new Map(sessions.map((s) => [s.sessionId, s.title || s.sessionId]));
	const options = [
		`<option value="">${current ? '' : '(new session)'}</option>`,
		// A subagent's session under its parent's, indented (it opens read-only).
		...nestSessions(sessions).map(
			({ session: s, depth }) =>
				`<option value="${escapeHtml(s.sessionId)}"${s.sessionId === current ? ' selected' : ''}>${'\u00a0\u00a0'.repeat(depth)}${depth ? '↳ subagent: ' : ''}${visibleHtml(s.title || s.sessionId)}${s.turns !== undefined ? ` (${s.turns})` : ''}</option>`,
		),
		...(m.moreSessions ? [`<option value="${MORE_SESSIONS}">Load more sessions…</option>`] : []),
	].join('');
	setHtml(select, options);
	if (select.value !== (current ?? '')) {
		select.value = current ?? ''; // a pick kin did not follow (a failed resume) shows the session there is
	}

	const st = m.status;
	const parts = [st.service === 'ready' ? 'connected' : st.service];
	if (st.model) {
		parts.push(st.model);
	}
	if (running) {
		parts.push('working…');
	}
	const waiting = st.waiting + st.asking;
	if (waiting) {
		parts.push(`${waiting} waiting for you`);
	}
	if (m.loading) {
		parts.push('resuming the session…');
	}
	status.textContent = parts.join(' · ');
	status.classList.toggle('warn', waiting > 0 || st.service === 'failed' || !!st.modelMissing);
	if (st.modelMissing) {
		status.textContent += ` — model not configured: ${st.modelMissing}`;
	}

	if (modeSelect.value !== m.mode) {
		modeSelect.value = m.mode;
	}
	commands = m.commands;
	document.body.dataset.mode = m.mode;
	drawModels(m);
	// The share of the session's model's window: after a switch, the new model's, not the window
	// the last turn reported.
	const window = m.models.find((x) => x.id === m.model)?.contextWindow;
	const g = renderGauge(t.usage && window ? { ...t.usage, contextWindow: window } : t.usage);
	if (setHtml(gauge, g)) {
		// The bar's width is set here: the page's CSP allows no inline style attributes.
		const fill = gauge.querySelector<HTMLElement>('.fill');
		const meter = gauge.querySelector<HTMLElement>('[aria-valuenow]');
		if (fill && meter) {
			fill.style.width = `${meter.getAttribute('aria-valuenow')}%`;
		}
	}
	const a = renderParts(m.attachments, true);
	setHtml(attachments, a);

	if (switched) {
		follow = true;
	}
	drawEntries(t.entries);
	subagentsShown = m.transcript.subagents;
	drawCards(m.cards);
}

// drawnHtml is the markup each control was last drawn from. Reading innerHTML back is no test of
// a change: the browser serialises it its own way (`selected=""`, the gauge's style width), so
// the controls were rebuilt on every post, an open picker with them.
const drawnHtml = new WeakMap<HTMLElement, string>();

/** Sets an element's markup when it differs from what it was last drawn from; true when it did. */
function setHtml(el: HTMLElement, html: string): boolean {
	if (drawnHtml.get(el) === html) {
		return false;
	}
	drawnHtml.set(el, html);
	el.innerHTML = html;
	return true;
}

/** The model and effort pickers: kin's models (a model without its key says so), its efforts. */
function drawModels(m: StateMessage): void {
	const models = [...m.models];
	if (m.model && !models.some((x) => x.id === m.model)) {
		models.unshift({ id: m.model, name: m.model, efforts: [], configured: true, apiKeyEnv: '' });
	}
	const opts = models
		.map((x) => `<option value="${escapeHtml(x.id)}"${x.id === m.model ? ' selected' : ''}${x.configured ? '' : ` title="${escapeHtml(x.missingHint ?? x.missing ?? 'not configured')}"`}>${escapeHtml(x.name)}${x.configured ? '' : ' (not configured)'}</option>`)
		.join('');
	setHtml(modelSelect, opts);
	if (m.model && modelSelect.value !== m.model) {
		modelSelect.value = m.model;
	}
	modelSelect.disabled = running || models.length < 2;
	const efforts = models.find((x) => x.id === m.model)?.efforts ?? [];
	const eopts = [...(m.effort && efforts.includes(m.effort) ? [] : ['<option value="">default</option>']), ...efforts.map((e) => `<option value="${escapeHtml(e)}">${escapeHtml(e)}</option>`)].join('');
	setHtml(effortSelect, eopts);
	effortSelect.value = m.effort && efforts.includes(m.effort) ? m.effort : '';
	effortSelect.disabled = running;
	$('effort-picker').hidden = efforts.length === 0;
}

function drawEntries(entries: Entry[]): void {
	const keep = new Set(entries.map((e) => e.key));
	for (const [k, r] of rendered) {
		if (!keep.has(k)) {
			r.el.remove();
			rendered.delete(k);
		}
	}
	let prev: HTMLElement | null = null;
	for (const e of entries) {
		const json = JSON.stringify(e);
		let r = rendered.get(e.key);
		if (!r || r.json !== json) {
			const el = fromHtml(renderEntry(e));
			// Keep a tool card open or closed as the person left it.
			const wasOpen = r?.el.querySelector('details')?.open;
			if (wasOpen !== undefined && el.querySelector('details')) {
				(el.querySelector('details') as HTMLDetailsElement).open = wasOpen || (e.type === 'tool' && e.status === 'running');
			}
			if (r) {
				r.el.replaceWith(el);
			}
			r = { el, json };
			rendered.set(e.key, r);
		}
		const want: ChildNode | null = prev ? prev.nextSibling : transcript.firstChild;
		if (want !== r.el) {
			transcript.insertBefore(r.el, want);
		}
		prev = r.el;
	}
	if (entries.length === 0) {
		transcript.innerHTML = '<div class="empty">Ask kin something to start a session.</div>';
		rendered.clear();
	} else {
		transcript.querySelector(':scope > .empty')?.remove();
	}
	stayAtNewest();
}

/** Draws the dock; a card that did not change keeps its element (and so its focus and scroll). */
function drawCards(cards: Card[]): void {
	const keep = new Set(cards.map((c) => c.requestId));
	for (const [k, r] of cardsDrawn) {
		if (!keep.has(k)) {
			const hadFocus = r.el.contains(document.activeElement);
			r.el.remove();
			cardsDrawn.delete(k);
			if (hadFocus) {
				input.focus();
			}
		}
	}
	let prev: HTMLElement | null = null;
	for (const c of cards) {
		// A subagent's question is named as the subagent's (its session has no row of its own).
		const title =
			c.sessionId && c.sessionId !== current
				? subagentsShown?.[c.sessionId]
					? subagentLabel(subagentsShown, c.sessionId)
					: (sessionTitles.get(c.sessionId) ?? c.sessionId)
				: undefined;
		const json = JSON.stringify([c, title]);
		let r = cardsDrawn.get(c.requestId);
		if (!r || r.json !== json) {
			const el = fromHtml(renderCard(c, title));
			if (r) {
				const focused = document.activeElement instanceof HTMLElement && r.el.contains(document.activeElement) ? (document.activeElement.dataset.option ?? '') : undefined;
				const scrolls = [...r.el.querySelectorAll<HTMLElement>('pre')].map((p) => p.scrollTop);
				r.el.replaceWith(el);
				[...el.querySelectorAll<HTMLElement>('pre')].forEach((p, i) => (p.scrollTop = scrolls[i] ?? 0));
				if (focused !== undefined) {
					(el.querySelector<HTMLElement>(focused ? `[data-option="${CSS.escape(focused)}"]` : '[data-default]') ?? el).focus();
				}
			}
			r = { el, json };
			cardsDrawn.set(c.requestId, r);
		}
		const want: ChildNode | null = prev ? prev.nextSibling : dock.firstChild;
		if (want !== r.el) {
			dock.insertBefore(r.el, want);
		}
		prev = r.el;
	}
	document.body.classList.toggle('waiting', cards.length > 0);
	stayAtNewest(); // the dock took or gave back room
}

function fromHtml(html: string): HTMLElement {
	const tpl = document.createElement('template');
	tpl.innerHTML = html.trim();
	return tpl.content.firstElementChild as HTMLElement;
}

vscode.postMessage({ type: 'ready' });

// The chat page inside the webview: renders the state the extension posts, sends what the person
// does. It keeps nothing but a draft of the input (webview state) across reloads; the session
// itself is restored by the extension (workspaceState + session/resume).

import type { PageMessage, StateMessage } from '../chat/chatView';
import type { Entry } from '../chat/transcript';
import { escapeHtml, renderEntry } from './render';

declare function acquireVsCodeApi(): {
	postMessage(m: PageMessage): void;
	getState(): { draft?: string } | undefined;
	setState(s: { draft?: string }): void;
};

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLElement>('transcript');
const input = $<HTMLTextAreaElement>('input');
const sendBtn = $<HTMLButtonElement>('send');
const stopBtn = $<HTMLButtonElement>('stop');
const select = $<HTMLSelectElement>('session');
const status = $<HTMLElement>('status');

// rendered holds, per entry key, its element and the JSON it was drawn from.
const rendered = new Map<string, { el: HTMLElement; json: string }>();
let running = false;
let current: string | undefined;

input.value = vscode.getState()?.draft ?? '';

function send(): void {
	const text = input.value.trim();
	if (!text || running) {
		return;
	}
	vscode.postMessage({ type: 'send', text });
	input.value = '';
	vscode.setState({ draft: '' });
}

sendBtn.addEventListener('click', send);
stopBtn.addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
$('new').addEventListener('click', () => vscode.postMessage({ type: 'newSession' }));
$('delete').addEventListener('click', () => current && vscode.postMessage({ type: 'deleteSession', sessionId: current }));
select.addEventListener('change', () => {
	if (select.value && select.value !== current) {
		vscode.postMessage({ type: 'selectSession', sessionId: select.value });
	}
});
input.addEventListener('keydown', (e) => {
	if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
		e.preventDefault();
		send();
	}
});
input.addEventListener('input', () => vscode.setState({ draft: input.value }));

window.addEventListener('message', (ev: MessageEvent<StateMessage>) => {
	if (ev.data?.type === 'state') {
		draw(ev.data);
	}
});

function draw(m: StateMessage): void {
	const t = m.transcript;
	current = t.session?.sessionId;
	running = !!t.runningTurn;
	document.body.classList.toggle('running', running);
	sendBtn.disabled = running;
	stopBtn.disabled = !running;
	$<HTMLButtonElement>('delete').disabled = !current;

	// Session picker: the current one first if the list does not know it yet.
	const sessions = [...m.sessions];
	if (t.session && !sessions.some((s) => s.sessionId === t.session!.sessionId)) {
		sessions.unshift(t.session);
	}
	const options = [
		`<option value="">${current ? '' : '(new session)'}</option>`,
		...sessions.map(
			(s) =>
				`<option value="${escapeHtml(s.sessionId)}"${s.sessionId === current ? ' selected' : ''}>${escapeHtml(
					s.title || s.sessionId,
				)}${s.turns !== undefined ? ` (${s.turns})` : ''}</option>`,
		),
	].join('');
	if (select.innerHTML !== options) {
		select.innerHTML = options;
	}

	const st = m.status;
	const parts = [st.service === 'ready' ? 'connected' : st.service];
	if (st.model) {
		parts.push(st.model);
	}
	if (running) {
		parts.push('working…');
	}
	if (st.waiting) {
		parts.push(`${st.waiting} waiting for you`);
	}
	status.textContent = parts.join(' · ');
	status.classList.toggle('warn', st.waiting > 0 || st.service === 'failed' || !!st.modelMissing);
	if (st.modelMissing) {
		status.textContent += ` — model not configured: ${st.modelMissing}`;
	}

	drawEntries(t.entries);
}

function drawEntries(entries: Entry[]): void {
	const stick = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
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
			const tpl = document.createElement('template');
			tpl.innerHTML = renderEntry(e).trim();
			const el = tpl.content.firstElementChild as HTMLElement;
			// Keep a tool card open or closed as the person left it.
			const wasOpen = r?.el.querySelector('details')?.open;
			if (wasOpen !== undefined && el.querySelector('details')) {
				(el.querySelector('details') as HTMLDetailsElement).open = wasOpen || e.type === 'tool' && e.status === 'running';
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
	if (stick) {
		transcript.scrollTop = transcript.scrollHeight;
	}
}

vscode.postMessage({ type: 'ready' });

// The sidebar chat view (a webview view). It posts the controller's state and the waiting cards
// to the page and turns the page's messages into actions; the page itself (src/webview/main.ts)
// only renders and reports clicks and keys.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { WaitingCard } from '../approvalText';
import { errorText } from '../errorText';
import { RpcError } from '../protocol/connection';
import { ErrorCodes, type CommandInfo, type InputPart, type ResourceLink, type SessionInfo, type SessionMode } from '../protocol/types';
import { mentionsIn } from '../webview/completion';
import { escapeHtml } from '../webview/escape';
import { diagnosticsPart, fileMentionPart, filePart, selectionPart } from './attachments';
import type { ChatController } from './chatController';
import { resourcePart, resourceWords, templateOf, templateWords, type ResourceRow } from './resources';
import type { TranscriptState } from './transcript';
import { showError, showInfo, showWarning } from '../notify';

export const CHAT_VIEW_ID = 'kin.chat';

export interface ViewStatus {
	service: string;
	busy: boolean;
	/** Approvals waiting for the person. */
	waiting: number;
	/** Forms and links (elicitations) waiting for the person. */
	asking: number;
	/** The shown session's model, by name. */
	model?: string;
	modelMissing?: string;
	unconfined?: string;
}

export type Card = WaitingCard & { answering: boolean };

/** What the page receives. */
export type HostMessage =
	| {
			type: 'state';
			transcript: TranscriptState;
			sessions: SessionInfo[];
			/** More sessions can be loaded (session/list's next page). */
			moreSessions?: boolean;
			status: ViewStatus;
			cards: Card[];
			/** The shown session's mode (or the next session's). */
			mode: SessionMode;
			/** What the input box offers as /name. */
			commands: CommandInfo[];
			/** What the model picker offers, and the shown session's model and effort. */
			models: PickerModel[];
			model?: string;
			effort?: string;
			/** What the next question attaches (the chips above the input); an image without its data. */
			attachments: InputPart[];
			/** The session shown last is being resumed (after a reload or a restart). */
			loading: boolean;
	  }
	/** The workspace files matching an `@` mention being typed. */
	| {
			type: 'mentions';
			seq: number;
			paths: string[];
			/** Those of `paths` that are MCP resource templates (`server:uriTemplate`), filled in when picked. */
			templates?: string[];
	  }
	/** A picked template, filled in: the `@server:uri ` text to put in its place; none when cancelled. */
	| { type: 'templateFilled'; seq: number; text?: string }
	/** The answer to a `send`: ok, or why the question was not sent (the page keeps the text). */
	| { type: 'sent'; seq: number; ok: boolean; error?: string }
	| { type: 'focusCard'; requestId: string }
	| { type: 'focusInput'; text?: string }
	/** A question kin never took, back into the input box (without taking the focus), and why. */
	| { type: 'draft'; text: string; note?: string };

/** A model as the picker offers it. */
export interface PickerModel {
	id: string;
	name: string;
	efforts: string[];
	/** Its window in tokens (the gauge's share is of the session's model's window). */
	contextWindow?: number;
	configured: boolean;
	apiKeyEnv: string;
	missing?: string;
	/** `missing` with how to set the key in VS Code. */
	missingHint?: string;
}

export type StateMessage = Extract<HostMessage, { type: 'state' }>;

/** What the page sends. */
export type PageMessage =
	| { type: 'ready' }
	| { type: 'send'; text: string; seq: number }
	| { type: 'cancel' }
	| { type: 'newSession' }
	| { type: 'selectSession'; sessionId: string }
	| { type: 'moreSessions' }
	| { type: 'deleteSession'; sessionId: string }
	| { type: 'answer'; requestId: string; optionId: string; revision?: number }
	| { type: 'openDiff'; requestId: string }
	| { type: 'openLink'; href: string }
	| { type: 'openFile'; path: string; line?: number }
	| { type: 'copy'; text: string }
	| { type: 'insert'; text: string }
	| { type: 'retry'; turnId: string }
	| { type: 'configure'; mode: SessionMode }
	| { type: 'configureModel'; model?: string; effort?: string }
	| { type: 'attach'; what: 'file' | 'selection' | 'problems' }
	| { type: 'detach'; index: number }
	| { type: 'mentionQuery'; query: string; seq: number }
	/** A resource template picked from the `@` list (`server:uriTemplate`): ask for its variables. */
	| { type: 'fillTemplate'; word: string; seq: number }
	| { type: 'undo'; turnId: string }
	| { type: 'terminal'; callId: string }
	| { type: 'turnDiff'; turnId: string; path: string }
	| { type: 'attachImage'; mimeType: string; data: string }
	/** A tool call's resource link: open it read-only, or attach it to the next question. */
	| { type: 'openResource'; link: ResourceLink }
	| { type: 'attachResource'; server: string; uri: string }
	/** What the input box holds, to keep across a window reload. */
	| { type: 'saveDraft'; text: string };

/** What the view needs from the rest of the extension, beside the chat controller. */
export interface ViewDeps {
	status(): ViewStatus;
	cards(): Card[];
	answer(requestId: string, optionId: string, revision?: number): Promise<void>;
	openDiff(requestId: string): Promise<void>;
	/** Shows a command's output in a terminal view. */
	terminal(callId: string): void;
	/** Opens the diff of a file a turn changed. */
	turnDiff(turnId: string, path: string): Promise<void>;
	/** How to set a model's key in VS Code, for a message that says it is missing. */
	keyHint(apiKeyEnv: string | undefined): string;
	/** The connected MCP servers' resources, for `@server:uri` (modelSaw.ts). */
	resources?(): Promise<ResourceRow[]>;
	/** Opens a resource link's text read-only (resourceDocuments.ts). */
	openResource?(link: ResourceLink): Promise<void>;
	/** Asks the person for a resource template's variables: the URI, or undefined when cancelled (resourceTemplatePicker.ts). */
	fillTemplate?(server: string, template: string): Promise<string | undefined>;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
	private view: vscode.WebviewView | undefined;
	private timer: NodeJS.Timeout | undefined;
	private ready = false;
	private readonly queued: HostMessage[] = [];
	/** What the next question attaches. */
	private attachments: InputPart[] = [];
	/** The text editor the person used last (the chat has the focus while they click Attach). */
	private lastEditor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
	private readonly subs: vscode.Disposable[] = [];
	private readonly readyEmitter = new vscode.EventEmitter<void>();
	/** Fires when the page has loaded and asked for its first state. */
	readonly onDidBecomeReady = this.readyEmitter.event;

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly chat: ChatController,
		private readonly deps: ViewDeps,
	) {
		this.subs.push(
			chat.onDidChange(() => this.schedule()),
			chat.onDidGiveBack((q) => this.postOrQueue({ type: 'draft', text: q.text, note: q.note })),
			vscode.window.onDidChangeActiveTextEditor((e) => {
				if (e && isWorkspaceDoc(e.document)) {
					this.lastEditor = e;
				}
			}),
		);
	}

	/** Whether a person can see the chat now. */
	get visible(): boolean {
		return !!this.view?.visible;
	}

	resolveWebviewView(view: vscode.WebviewView): void {
		this.view = view;
		this.ready = false;
		const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
		view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [dist] };
		view.webview.html = this.html(view.webview, dist);
		this.subs.push(
			view.webview.onDidReceiveMessage((m: PageMessage) => void this.receive(m)),
			view.onDidDispose(() => {
				if (this.view === view) {
					this.view = undefined;
					this.ready = false;
				}
			}),
			view.onDidChangeVisibility(() => this.schedule()),
		);
	}

	/** Shows the chat with a waiting card focused (its default, deny, button). */
	async reveal(requestId: string): Promise<void> {
		await this.show();
		this.postOrQueue({ type: 'focusCard', requestId });
	}

	/** Shows the chat with its input focused (optionally filled). */
	async focusInput(text?: string): Promise<void> {
		await this.show();
		this.postOrQueue({ type: 'focusInput', text });
	}

	private async show(): Promise<void> {
		await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
		this.post();
	}

	/** Posts the state soon (streamed deltas are batched). */
	schedule(): void {
		if (this.timer) {
			return;
		}
		this.timer = setTimeout(() => {
			this.timer = undefined;
			this.post();
		}, 30);
	}

	private post(): void {
		this.postOrQueue({
			type: 'state',
			transcript: this.chat.state,
			sessions: this.chat.sessions,
			moreSessions: !!this.chat.sessionsCursor,
			status: this.deps.status(),
			cards: this.deps.cards(),
			mode: this.chat.mode,
			commands: this.chat.commands,
			models: (this.chat.models?.models ?? []).map((m) => ({
				id: m.id,
				name: m.name || m.id,
				efforts: m.efforts ?? [],
				contextWindow: m.contextWindow,
				configured: m.configured,
				apiKeyEnv: m.apiKeyEnv,
				missing: m.missing,
				missingHint: m.configured ? undefined : `${m.missing ?? 'not configured'}. ${this.deps.keyHint(m.apiKeyEnv)}`,
			})),
			model: this.chat.model,
			effort: this.chat.effort,
			// An image's data stays here (the state is posted on every streamed delta).
			attachments: this.attachments.map((a) => (a.type === 'image' && a.data ? { type: a.type, mimeType: a.mimeType, bytes: a.data.length } : a)),
			loading: this.chat.loading,
		});
	}

	private postOrQueue(m: HostMessage): void {
		if (!this.view || !this.ready) {
			if (m.type !== 'state') {
				this.queued.push(m);
			}
			return;
		}
		void this.view.webview.postMessage(m);
	}

	private async receive(m: PageMessage): Promise<void> {
		try {
			switch (m.type) {
				case 'ready':
					this.ready = true;
					this.post();
					for (const q of this.queued.splice(0)) {
						this.postOrQueue(q);
					}
					this.readyEmitter.fire();
					return;
				case 'send':
					try {
						// A /command runs as text; the attachments wait for the next question.
						const command = /^\/[^/\s]/.test(m.text.trim());
						const parts = command ? [] : [...this.attachments, ...(await this.mentionParts(m.text))];
						await this.chat.send(m.text, parts);
						if (!command) {
							this.attachments = [];
						}
						this.postOrQueue({ type: 'sent', seq: m.seq, ok: true });
					} catch (err) {
						// The question stays in the input box; the page says why it was not sent (and,
						// when the model's key is missing, how to set it here).
						const hint = err instanceof RpcError && err.code === ErrorCodes.ModelNotConfigured ? ` ${this.deps.keyHint(this.chat.modelEntry?.apiKeyEnv)}` : '';
						this.postOrQueue({ type: 'sent', seq: m.seq, ok: false, error: errorText(err) + hint });
					}
					return;
				case 'retry': {
					const q = this.chat.questionOf(m.turnId);
					if (q !== undefined) {
						await this.chat.send(q.text, q.parts);
					}
					return;
				}
				case 'configureModel':
					await this.chat.configureModel({ model: m.model, effort: m.effort });
					return;
				case 'attach':
					await this.attach(m.what);
					return;
				case 'detach':
					this.attachments = this.attachments.filter((_, i) => i !== m.index);
					this.post();
					return;
				case 'mentionQuery': {
					const rows = (await this.deps.resources?.()) ?? [];
					const words = resourceWords(rows, m.query);
					this.postOrQueue({ type: 'mentions', seq: m.seq, paths: [...(await findFiles(m.query)), ...words], templates: templateWords(rows, words) });
					return;
				}
				case 'fillTemplate': {
					// The page waits for the answer to put `@server:uri ` where the template was picked;
					// cancelling (or a template no longer listed) puts nothing.
					const row = templateOf((await this.deps.resources?.()) ?? [], m.word);
					let text: string | undefined;
					try {
						const uri = row && (await this.deps.fillTemplate?.(row.server, row.uri));
						text = uri ? `@${row.server}:${uri} ` : undefined;
					} finally {
						this.postOrQueue({ type: 'templateFilled', seq: m.seq, ...(text ? { text } : {}) });
					}
					return;
				}
				case 'cancel':
					await this.chat.cancel();
					return;
				case 'configure':
					try {
						await this.chat.configure(m.mode);
					} finally {
						this.post(); // the picker shows what kin has, also after a refusal
					}
					return;
				case 'undo':
					await this.chat.undo(m.turnId);
					return;
				case 'terminal':
					this.deps.terminal(m.callId);
					return;
				case 'turnDiff':
					await this.deps.turnDiff(m.turnId, m.path);
					return;
				case 'saveDraft':
					await this.chat.keepDraft(m.text);
					return;
				case 'openResource':
					await this.deps.openResource?.(m.link);
					return;
				case 'attachResource':
					// The same resource part an `@server:uri` mention sends; kin reads it when the question goes.
					if (!this.attachments.some((a) => a.type === 'resource' && a.server === m.server && a.uri === m.uri)) {
						this.attachments = [...this.attachments, { type: 'resource', server: m.server, uri: m.uri }];
						this.post();
					}
					return;
				case 'attachImage':
					this.attachments = [...this.attachments, { type: 'image', mimeType: m.mimeType, data: m.data }];
					this.post();
					return;
				case 'newSession':
					await this.chat.newSession();
					return;
				case 'selectSession':
					await this.chat.resume(m.sessionId);
					return;
				case 'moreSessions':
					await this.chat.loadMoreSessions();
					return;
				case 'deleteSession': {
					const s = this.chat.sessions.find((x) => x.sessionId === m.sessionId);
					const ok = await vscode.window.showWarningMessage(
						`Delete the session "${s?.title || m.sessionId}"?`,
						{ modal: true, detail: 'Its log is removed from KIN_HOME/sessions.' },
						'Delete',
					);
					if (ok === 'Delete') {
						await this.chat.deleteSession(m.sessionId);
					}
					return;
				}
				case 'answer':
					await this.deps.answer(m.requestId, m.optionId, m.revision);
					return;
				case 'openDiff':
					await this.deps.openDiff(m.requestId);
					return;
				case 'openLink':
					await openLink(m.href);
					return;
				case 'openFile':
					await openFile(m.path, m.line, this.chat.state.session?.cwd);
					return;
				case 'copy':
					await vscode.env.clipboard.writeText(m.text);
					void vscode.window.setStatusBarMessage('kin: copied', 2000);
					return;
				case 'insert':
					await insertAtCursor(m.text);
					return;
			}
		} catch (err) {
			void showError(errorText(err));
		}
	}

	/** Attaches the current file, the selection or the file's problems (from the editor used last). */
	async attach(what: 'file' | 'selection' | 'problems'): Promise<void> {
		const ed = vscode.window.activeTextEditor && isWorkspaceDoc(vscode.window.activeTextEditor.document) ? vscode.window.activeTextEditor : this.lastEditor;
		if (!ed || ed.document.isClosed) {
			void showWarning('Open a file of the workspace in an editor first.');
			return;
		}
		const base = this.chat.state.session?.cwd;
		let part: InputPart | undefined;
		if (what === 'file') {
			part = filePart(ed.document.uri, base);
		} else if (what === 'selection') {
			part = selectionPart(ed.document, ed.selection, base);
			if (!part) {
				void showWarning('Select some text in the editor first.');
				return;
			}
		} else {
			part = diagnosticsPart(ed.document.uri, vscode.languages.getDiagnostics(ed.document.uri), base);
			if (!part) {
				void showInfo(`${vscode.workspace.asRelativePath(ed.document.uri)} has no problems.`);
				return;
			}
		}
		const key = JSON.stringify(part);
		if (!this.attachments.some((a) => JSON.stringify(a) === key)) {
			this.attachments = [...this.attachments, part];
		}
		this.post();
	}

	/** File parts for the `@path` mentions of a question that name workspace files (not yet attached). */
	private async mentionParts(text: string): Promise<InputPart[]> {
		const out: InputPart[] = [];
		const servers = new Set(((await this.deps.resources?.()) ?? []).map((r) => r.server));
		for (const m of mentionsIn(text)) {
			const res = resourcePart(m, servers); // @server:uri
			if (res) {
				out.push(res);
				continue;
			}
			const part = await fileMentionPart(m, this.chat.state.session?.cwd);
			if (part && !this.attachments.some((a) => a.type === 'file' && a.path === part.path && !a.range)) {
				out.push(part);
			}
		}
		return out;
	}

	/**
	 * The page, drawn with what is known now (the session's mode and model, remembered across a
	 * reload), so that it never shows a wrong mode or empty pickers while the session resumes; the
	 * codicon font is preloaded, so the icons are there at the first paint.
	 */
	private html(webview: vscode.Webview, dist: vscode.Uri): string {
		const nonce = [...Array(32)].map(() => Math.floor(Math.random() * 36).toString(36)).join('');
		const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
		const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
		const font = codiconFont(dist.fsPath);
		const preload = font ? `<link rel="preload" href="${webview.asWebviewUri(vscode.Uri.joinPath(dist, font))}" as="font" type="font/ttf" crossorigin>` : '';
		const mode = this.chat.mode;
		const modeOption = (value: SessionMode, label: string) => `<option value="${value}"${value === mode ? ' selected' : ''}>${label}</option>`;
		const model = this.chat.modelEntry;
		const modelName = model?.name || this.chat.model;
		return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} data:; font-src ${webview.cspSource}; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${preload}
<link href="${style}" rel="stylesheet">
<title>kin</title>
</head>
<body data-mode="${escapeHtml(mode)}"${this.chat.loading ? ' class="loading"' : ''}>
<div id="kin-chat">
  <header class="sessions">
    <select id="session" title="Session" aria-label="Session"></select>
    <button id="new" class="icon-button" title="New session" aria-label="New session"><i class="codicon codicon-add"></i></button>
    <button id="delete" class="icon-button" title="Delete this session" aria-label="Delete this session"><i class="codicon codicon-trash"></i></button>
  </header>
  <div class="toolbar">
    <label class="picker" title="How much kin does without asking"><i class="codicon codicon-shield"></i>
      <select id="mode" aria-label="Mode">
        ${modeOption('ask', 'Ask: read only')}
        ${modeOption('agent', 'Agent: asks for every change')}
        ${modeOption('auto-edit', 'Auto-edit: edits the workspace unasked')}
      </select></label>
    <label class="picker" title="The model this session asks (between turns)"><i class="codicon codicon-sparkle"></i>
      <select id="model" aria-label="Model">${modelName ? `<option value="${escapeHtml(this.chat.model ?? '')}" selected>${escapeHtml(modelName)}</option>` : ''}</select></label>
    <label class="picker" id="effort-picker" title="How hard the model reasons"${model?.efforts?.length ? '' : ' hidden'}><i class="codicon codicon-lightbulb"></i>
      <select id="effort" aria-label="Reasoning effort"></select></label>
    <span id="gauge"></span>
  </div>
  <div id="status" class="status">${this.chat.loading ? 'resuming the session…' : ''}</div>
  <div class="transcript-wrap">
    <main id="transcript" aria-live="polite" tabindex="-1"></main>
    <button id="jump" class="jump" hidden title="Scroll to the newest message"><i class="codicon codicon-arrow-down"></i> Jump to newest</button>
  </div>
  <div id="dock" aria-live="assertive"></div>
  <footer class="composer">
    <div id="completions" class="completions" role="listbox" aria-label="Completions" hidden></div>
    <div id="attachments"></div>
    <textarea id="input" rows="3" aria-label="Question for kin" aria-autocomplete="list" aria-controls="completions" placeholder="Ask kin… (Enter sends, Shift+Enter for a new line, / for commands, @ for files; paste an image to attach it)">${escapeHtml(this.chat.draft)}</textarea>
    <div id="composer-error" class="composer-error" role="alert"></div>
    <div id="composer-note" class="composer-note" role="status"></div>
    <div class="actions">
      <span class="attach">
        <button class="icon-button" id="attach-file" title="Attach the current file" aria-label="Attach the current file"><i class="codicon codicon-file-add"></i></button>
        <button class="icon-button" id="attach-selection" title="Attach the selection" aria-label="Attach the selection"><i class="codicon codicon-selection"></i></button>
        <button class="icon-button" id="attach-problems" title="Attach the current file's problems" aria-label="Attach the current file's problems"><i class="codicon codicon-warning"></i></button>
      </span>
      <button id="stop" class="secondary" title="Stop the running turn"><i class="codicon codicon-debug-stop"></i> Stop</button>
      <button id="send" title="Send"><i class="codicon codicon-send"></i> Send</button>
    </div>
  </footer>
</div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
	}

	dispose(): void {
		if (this.timer) {
			clearTimeout(this.timer);
		}
		this.subs.forEach((d) => d.dispose());
		this.readyEmitter.dispose();
	}
}

/** The codicon font esbuild put beside the css (dist/codicon-HASH.ttf), to preload it. */
function codiconFont(dist: string): string | undefined {
	try {
		return fs.readdirSync(dist).find((f) => /^codicon.*\.ttf$/.test(f));
	} catch {
		return undefined;
	}
}

function isWorkspaceDoc(d: vscode.TextDocument): boolean {
	return d.uri.scheme === 'file' && !!vscode.workspace.getWorkspaceFolder(d.uri);
}

/** Workspace files whose path contains `query` (for `@` completion), shortest first. */
async function findFiles(query: string): Promise<string[]> {
	const q = query.replace(/[[\]{}*?!\\]/g, '');
	const uris = await vscode.workspace.findFiles(q ? `**/*${q}*` : '**/*', '**/{node_modules,.git}/**', 200);
	const rel = uris.map((u) => vscode.workspace.asRelativePath(u, false));
	const lq = q.toLowerCase();
	return rel
		.filter((p) => p.toLowerCase().includes(lq))
		.sort((a, b) => Number(!path.basename(a).toLowerCase().startsWith(lq)) - Number(!path.basename(b).toLowerCase().startsWith(lq)) || a.length - b.length || a.localeCompare(b))
		.slice(0, 30);
}

/** Links in answers: only web and mail links, through VS Code (which asks before an untrusted site). */
async function openLink(href: string): Promise<void> {
	let uri: vscode.Uri;
	try {
		uri = vscode.Uri.parse(href, true);
	} catch {
		return;
	}
	if (!['http', 'https', 'mailto'].includes(uri.scheme)) {
		void showWarning(`kin: not opening a ${uri.scheme}: link from an answer (${href}).`);
		return;
	}
	await vscode.env.openExternal(uri);
}

/** A path from an answer or a card: relative to the session's folder (or the first workspace folder). */
async function openFile(p: string, line: number | undefined, cwd: string | undefined): Promise<void> {
	const base = cwd ?? vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
	const abs = p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(2)) : path.isAbsolute(p) || !base ? p : path.join(base, p);
	const uri = vscode.Uri.file(abs);
	try {
		await vscode.workspace.fs.stat(uri);
	} catch {
		void showWarning(`kin: there is no file ${abs}.`);
		return;
	}
	const pos = line && line > 0 ? new vscode.Position(line - 1, 0) : undefined;
	await vscode.window.showTextDocument(uri, { preview: true, selection: pos ? new vscode.Range(pos, pos) : undefined });
}

async function insertAtCursor(text: string): Promise<void> {
	const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'file');
	if (!ed) {
		void showWarning('kin: open an editor to insert the code into.');
		return;
	}
	await ed.edit((b) => {
		for (const sel of ed.selections) {
			b.replace(sel, text);
		}
	});
	await vscode.window.showTextDocument(ed.document, { viewColumn: ed.viewColumn, preserveFocus: false });
}

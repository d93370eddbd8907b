// The sidebar chat view (a webview view). It posts the controller's state and the waiting cards
// to the page and turns the page's messages into actions; the page itself (src/webview/main.ts)
// only renders and reports clicks and keys.

import * as path from 'path';
import * as vscode from 'vscode';
import type { WaitingCard } from '../approvalText';
import { errorText } from '../errorText';
import type { CommandInfo, InputPart, SessionInfo, SessionMode } from '../protocol/types';
import { mentionsIn } from '../webview/completion';
import { diagnosticsPart, fileMentionPart, filePart, selectionPart } from './attachments';
import type { ChatController } from './chatController';
import type { TranscriptState } from './transcript';

export const CHAT_VIEW_ID = 'kin.chat';

export interface ViewStatus {
	service: string;
	busy: boolean;
	waiting: number;
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
			status: ViewStatus;
			cards: Card[];
			/** The shown session's mode (or the next session's). */
			mode: SessionMode;
			/** What the input box offers as /name. */
			commands: CommandInfo[];
			/** What the model picker offers, and the shown session's model and effort. */
			models: { id: string; name: string; efforts: string[]; configured: boolean; missing?: string }[];
			model?: string;
			effort?: string;
			/** What the next question attaches (the chips above the input). */
			attachments: InputPart[];
	  }
	/** The workspace files matching an `@` mention being typed. */
	| { type: 'mentions'; seq: number; paths: string[] }
	/** The answer to a `send`: ok, or why the question was not sent (the page keeps the text). */
	| { type: 'sent'; seq: number; ok: boolean; error?: string }
	| { type: 'focusCard'; requestId: string }
	| { type: 'focusInput'; text?: string };

export type StateMessage = Extract<HostMessage, { type: 'state' }>;

/** What the page sends. */
export type PageMessage =
	| { type: 'ready' }
	| { type: 'send'; text: string; seq: number }
	| { type: 'cancel' }
	| { type: 'newSession' }
	| { type: 'selectSession'; sessionId: string }
	| { type: 'deleteSession'; sessionId: string }
	| { type: 'answer'; requestId: string; optionId: string }
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
	| { type: 'undo'; turnId: string };

/** What the view needs from the rest of the extension, beside the chat controller. */
export interface ViewDeps {
	status(): ViewStatus;
	cards(): Card[];
	answer(requestId: string, optionId: string): Promise<void>;
	openDiff(requestId: string): Promise<void>;
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
			status: this.deps.status(),
			cards: this.deps.cards(),
			mode: this.chat.mode,
			commands: this.chat.commands,
			models: (this.chat.models?.models ?? []).map((m) => ({ id: m.id, name: m.name || m.id, efforts: m.efforts ?? [], configured: m.configured, missing: m.missing })),
			model: this.chat.model,
			effort: this.chat.effort,
			attachments: this.attachments,
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
						// The question stays in the input box; the page says why it was not sent.
						this.postOrQueue({ type: 'sent', seq: m.seq, ok: false, error: errorText(err) });
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
				case 'mentionQuery':
					this.postOrQueue({ type: 'mentions', seq: m.seq, paths: await findFiles(m.query) });
					return;
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
				case 'newSession':
					await this.chat.newSession();
					return;
				case 'selectSession':
					await this.chat.resume(m.sessionId);
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
					await this.deps.answer(m.requestId, m.optionId);
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
			void vscode.window.showErrorMessage(errorText(err));
		}
	}

	/** Attaches the current file, the selection or the file's problems (from the editor used last). */
	async attach(what: 'file' | 'selection' | 'problems'): Promise<void> {
		const ed = vscode.window.activeTextEditor && isWorkspaceDoc(vscode.window.activeTextEditor.document) ? vscode.window.activeTextEditor : this.lastEditor;
		if (!ed || ed.document.isClosed) {
			void vscode.window.showWarningMessage('Open a file of the workspace in an editor first.');
			return;
		}
		const base = this.chat.state.session?.cwd;
		let part: InputPart | undefined;
		if (what === 'file') {
			part = filePart(ed.document.uri, base);
		} else if (what === 'selection') {
			part = selectionPart(ed.document, ed.selection, base);
			if (!part) {
				void vscode.window.showWarningMessage('Select some text in the editor first.');
				return;
			}
		} else {
			part = diagnosticsPart(ed.document.uri, vscode.languages.getDiagnostics(ed.document.uri), base);
			if (!part) {
				void vscode.window.showInformationMessage(`${vscode.workspace.asRelativePath(ed.document.uri)} has no problems.`);
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
		for (const m of mentionsIn(text)) {
			const part = await fileMentionPart(m, this.chat.state.session?.cwd);
			if (part && !this.attachments.some((a) => a.type === 'file' && a.path === part.path && !a.range)) {
				out.push(part);
			}
		}
		return out;
	}

	private html(webview: vscode.Webview, dist: vscode.Uri): string {
		const nonce = [...Array(32)].map(() => Math.floor(Math.random() * 36).toString(36)).join('');
		const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
		const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
		return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} data:; font-src ${webview.cspSource}; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet">
<title>kin</title>
</head>
<body>
<div id="kin-chat">
  <header class="sessions">
    <select id="session" title="Session" aria-label="Session"></select>
    <button id="new" class="icon-button" title="New session" aria-label="New session"><i class="codicon codicon-add"></i></button>
    <button id="delete" class="icon-button" title="Delete this session" aria-label="Delete this session"><i class="codicon codicon-trash"></i></button>
  </header>
  <div class="toolbar">
    <label class="picker" title="How much kin does without asking"><i class="codicon codicon-shield"></i>
      <select id="mode" aria-label="Mode">
        <option value="ask">Ask: read only</option>
        <option value="agent">Agent: asks for every change</option>
        <option value="auto-edit">Auto-edit: edits the workspace unasked</option>
      </select></label>
    <label class="picker" title="The model this session asks (between turns)"><i class="codicon codicon-sparkle"></i>
      <select id="model" aria-label="Model"></select></label>
    <label class="picker" id="effort-picker" title="How hard the model reasons"><i class="codicon codicon-lightbulb"></i>
      <select id="effort" aria-label="Reasoning effort"></select></label>
    <span id="gauge"></span>
  </div>
  <div id="status" class="status"></div>
  <main id="transcript" aria-live="polite"></main>
  <div id="dock" aria-live="assertive"></div>
  <footer class="composer">
    <div id="completions" class="completions" role="listbox" aria-label="Completions" hidden></div>
    <div id="attachments"></div>
    <textarea id="input" rows="3" aria-label="Question for kin" aria-autocomplete="list" aria-controls="completions" placeholder="Ask kin… (Enter sends, Shift+Enter for a new line, / for commands, @ for files)"></textarea>
    <div id="composer-error" class="composer-error" role="alert"></div>
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
		void vscode.window.showWarningMessage(`kin: not opening a ${uri.scheme}: link from an answer (${href}).`);
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
		void vscode.window.showWarningMessage(`kin: there is no file ${abs}.`);
		return;
	}
	const pos = line && line > 0 ? new vscode.Position(line - 1, 0) : undefined;
	await vscode.window.showTextDocument(uri, { preview: true, selection: pos ? new vscode.Range(pos, pos) : undefined });
}

async function insertAtCursor(text: string): Promise<void> {
	const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'file');
	if (!ed) {
		void vscode.window.showWarningMessage('kin: open an editor to insert the code into.');
		return;
	}
	await ed.edit((b) => {
		for (const sel of ed.selections) {
			b.replace(sel, text);
		}
	});
	await vscode.window.showTextDocument(ed.document, { viewColumn: ed.viewColumn, preserveFocus: false });
}

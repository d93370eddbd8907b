// The sidebar chat view (a webview view). It posts the controller's state and the waiting cards
// to the page and turns the page's messages into actions; the page itself (src/webview/main.ts)
// only renders and reports clicks and keys.

import * as path from 'path';
import * as vscode from 'vscode';
import type { WaitingCard } from '../approvalText';
import { errorText } from '../errorText';
import type { CommandInfo, SessionInfo, SessionMode } from '../protocol/types';
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
	  }
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
	private readonly subs: vscode.Disposable[] = [];
	private readonly readyEmitter = new vscode.EventEmitter<void>();
	/** Fires when the page has loaded and asked for its first state. */
	readonly onDidBecomeReady = this.readyEmitter.event;

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly chat: ChatController,
		private readonly deps: ViewDeps,
	) {
		this.subs.push(chat.onDidChange(() => this.schedule()));
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
						await this.chat.send(m.text);
						this.postOrQueue({ type: 'sent', seq: m.seq, ok: true });
					} catch (err) {
						// The question stays in the input box; the page says why it was not sent.
						this.postOrQueue({ type: 'sent', seq: m.seq, ok: false, error: errorText(err) });
					}
					return;
				case 'retry': {
					const text = this.chat.questionOf(m.turnId);
					if (text !== undefined) {
						await this.chat.send(text);
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
  </div>
  <div id="status" class="status"></div>
  <main id="transcript" aria-live="polite"></main>
  <div id="dock" aria-live="assertive"></div>
  <footer class="composer">
    <div id="completions" class="completions" role="listbox" aria-label="Commands" hidden></div>
    <textarea id="input" rows="3" aria-label="Question for kin" aria-autocomplete="list" aria-controls="completions" placeholder="Ask kin… (Enter sends, Shift+Enter for a new line, / for commands)"></textarea>
    <div id="composer-error" class="composer-error" role="alert"></div>
    <div class="actions">
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

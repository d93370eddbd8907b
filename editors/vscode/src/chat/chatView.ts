// The sidebar chat view (a webview view). It posts the controller's state to the page and turns
// the page's messages into controller actions; the page itself (src/webview/main.ts) only renders.

import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import type { TranscriptState } from './transcript';
import type { SessionInfo } from '../protocol/types';

export const CHAT_VIEW_ID = 'kin.chat';

export interface ViewStatus {
	service: string;
	busy: boolean;
	waiting: number;
	model?: string;
	modelMissing?: string;
	unconfined?: string;
}

/** What the page receives. */
export interface StateMessage {
	type: 'state';
	transcript: TranscriptState;
	sessions: SessionInfo[];
	status: ViewStatus;
}

/** What the page sends. */
export type PageMessage =
	| { type: 'ready' }
	| { type: 'send'; text: string }
	| { type: 'cancel' }
	| { type: 'newSession' }
	| { type: 'selectSession'; sessionId: string }
	| { type: 'deleteSession'; sessionId: string };

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
	private view: vscode.WebviewView | undefined;
	private timer: NodeJS.Timeout | undefined;
	private readonly subs: vscode.Disposable[] = [];
	private readonly visible = new vscode.EventEmitter<void>();
	/** Fires when the page has loaded and asked for its first state. */
	readonly onDidBecomeReady = this.visible.event;

	constructor(
		private readonly extensionUri: vscode.Uri,
		private readonly chat: ChatController,
		private readonly status: () => ViewStatus,
	) {
		this.subs.push(chat.onDidChange(() => this.schedule()));
	}

	resolveWebviewView(view: vscode.WebviewView): void {
		this.view = view;
		const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
		view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
		view.webview.html = this.html(view.webview, dist);
		this.subs.push(
			view.webview.onDidReceiveMessage((m: PageMessage) => void this.receive(m)),
			view.onDidDispose(() => {
				if (this.view === view) {
					this.view = undefined;
				}
			}),
			view.onDidChangeVisibility(() => this.schedule()),
		);
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
		if (!this.view) {
			return;
		}
		const msg: StateMessage = {
			type: 'state',
			transcript: this.chat.state,
			sessions: this.chat.sessions,
			status: this.status(),
		};
		void this.view.webview.postMessage(msg);
	}

	private async receive(m: PageMessage): Promise<void> {
		try {
			switch (m.type) {
				case 'ready':
					this.post();
					this.visible.fire();
					return;
				case 'send':
					await this.chat.send(m.text);
					return;
				case 'cancel':
					await this.chat.cancel();
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
			}
		} catch (err) {
			void vscode.window.showErrorMessage(`kin: ${(err as Error).message}`);
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
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${webview.cspSource} data:; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style}" rel="stylesheet">
<title>kin</title>
</head>
<body>
<div id="kin-chat">
  <header class="sessions">
    <select id="session" title="Session"></select>
    <button id="new" title="New session">New</button>
    <button id="delete" title="Delete this session">Delete</button>
  </header>
  <div id="status" class="status"></div>
  <main id="transcript" aria-live="polite"></main>
  <footer class="composer">
    <textarea id="input" rows="3" placeholder="Ask kin… (Enter sends, Shift+Enter for a new line)"></textarea>
    <div class="actions">
      <button id="stop" class="secondary" title="Stop the running turn">Stop</button>
      <button id="send" title="Send">Send</button>
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
		this.visible.dispose();
	}
}

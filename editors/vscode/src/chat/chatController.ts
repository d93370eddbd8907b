// The chat's state on the extension side: which session the view shows, its transcript (fed by
// kin's notifications through the reducer), the list of sessions, and the actions the view (and
// the commands) can take. The webview only renders what this posts.

import * as vscode from 'vscode';
import type { KinService } from '../service';
import type { ResumeResult, SessionInfo, TurnStartResult } from '../protocol/types';
import { Action, TranscriptState, initialState, reduce } from './transcript';

const SESSION_KEY = 'kin.chat.sessionId';

export class ChatController implements vscode.Disposable {
	private stateValue: TranscriptState = initialState();
	sessions: SessionInfo[] = [];
	private readonly changed = new vscode.EventEmitter<void>();
	private readonly subs: vscode.Disposable[] = [];
	private readonly resumed = new vscode.EventEmitter<ResumeResult>();
	/** Fires after every change of the transcript or of the session list. */
	readonly onDidChange = this.changed.event;
	/** Fires after a session was resumed, so what still waits for the person is asked again. */
	readonly onDidResume = this.resumed.event;

	constructor(
		private readonly service: KinService,
		private readonly memento: vscode.Memento,
		private readonly output: vscode.OutputChannel,
	) {
		const on = (method: string, make: (p: any) => Action) =>
			this.subs.push(service.onNotification(method, (p) => this.dispatch(make(p))));
		on('turn/started', (params) => ({ type: 'turnStarted', params }));
		on('turn/delta', (params) => ({ type: 'delta', params }));
		on('turn/toolCall', (params) => ({ type: 'toolCall', params }));
		on('turn/completed', (params) => ({ type: 'turnCompleted', params }));
		on('approval/request', (params) => ({ type: 'approvalRequest', params }));
		on('approval/resolved', (params) => ({ type: 'approvalResolved', params }));
		on('elicitation/request', (params) => ({ type: 'elicitationRequest', params }));
		on('elicitation/resolved', (params) => ({ type: 'elicitationResolved', params }));
		on('notice', (params) => ({ type: 'notice', params }));
		this.subs.push(
			service.onNotification('turn/completed', () => void this.refreshSessions()),
			// After a (re)start, redraw the session the view showed: kin keeps it on disk.
			service.onDidBecomeReady(() => void this.restore()),
		);
	}

	get state(): TranscriptState {
		return this.stateValue;
	}

	get sessionId(): string | undefined {
		return this.stateValue.session?.sessionId;
	}

	dispatch(action: Action): void {
		const next = reduce(this.stateValue, action);
		if (next !== this.stateValue) {
			this.stateValue = next;
			this.changed.fire();
		}
	}

	/** Resumes the session remembered for this workspace, if any. */
	async restore(): Promise<void> {
		await this.refreshSessions();
		const id = this.sessionId ?? this.memento.get<string>(SESSION_KEY);
		if (!id) {
			return;
		}
		try {
			await this.resume(id);
		} catch (err) {
			this.output.appendLine(`[kin] could not resume ${id}: ${(err as Error).message}`);
			await this.memento.update(SESSION_KEY, undefined);
			this.dispatch({ type: 'reset' });
		}
	}

	async refreshSessions(): Promise<void> {
		try {
			const r = await this.service.request<{ sessions: SessionInfo[] }>('session/list', {});
			this.sessions = r.sessions ?? [];
			const cur = this.sessions.find((s) => s.sessionId === this.sessionId);
			if (cur) {
				this.dispatch({ type: 'sessionUpdated', session: cur });
			}
			this.changed.fire();
		} catch (err) {
			this.output.appendLine(`[kin] session/list: ${(err as Error).message}`);
		}
	}

	async newSession(title?: string): Promise<SessionInfo> {
		const r = await this.service.request<{ session: SessionInfo }>('session/new', title ? { title } : {});
		await this.show(r.session);
		this.dispatch({ type: 'reset', session: r.session });
		await this.refreshSessions();
		return r.session;
	}

	async resume(sessionId: string): Promise<ResumeResult> {
		const r = await this.service.request<ResumeResult>('session/resume', { sessionId });
		await this.show(r.session);
		this.dispatch({ type: 'resumed', result: r });
		this.resumed.fire(r);
		return r;
	}

	async deleteSession(sessionId: string): Promise<void> {
		await this.service.request('session/delete', { sessionId });
		if (sessionId === this.sessionId) {
			await this.show(undefined);
			this.dispatch({ type: 'reset' });
		}
		await this.refreshSessions();
	}

	/** Sends a question, making a session first when the view has none. */
	async send(input: string): Promise<string> {
		const text = input.trim();
		if (!text) {
			throw new Error('kin: nothing to send');
		}
		const id = this.sessionId ?? (await this.newSession()).sessionId;
		const r = await this.service.request<TurnStartResult>('turn/start', { sessionId: id, input: text });
		if (r.command && !r.turnId) {
			// One of kin's own commands (/undo, /plan, /mode…): no turn, just what it did.
			this.dispatch({ type: 'notice', params: { level: 'info', message: r.command.text, sessionId: id } });
		}
		return r.turnId ?? '';
	}

	async cancel(): Promise<boolean> {
		if (!this.sessionId) {
			return false;
		}
		const r = await this.service.request<{ cancelled: boolean }>('turn/cancel', { sessionId: this.sessionId });
		return r.cancelled;
	}

	private async show(session: SessionInfo | undefined): Promise<void> {
		await this.memento.update(SESSION_KEY, session?.sessionId);
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		this.changed.dispose();
		this.resumed.dispose();
	}
}

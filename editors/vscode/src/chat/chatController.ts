// The chat's state on the extension side: which session the view shows, its transcript (fed by
// kin's notifications through the reducer), the list of sessions, and the actions the view (and
// the commands) can take. The webview only renders what this posts.

import * as vscode from 'vscode';
import type { KinService } from '../service';
import type {
	CommandInfo,
	CommandsListResult,
	InputPart,
	ModelsListResult,
	ResumeResult,
	SessionCompactResult,
	SessionConfigureParams,
	SessionConfigureResult,
	SessionInfo,
	SessionListResult,
	SessionMode,
	SessionNewParams,
	SessionResult,
	TurnCancelResult,
	TurnStartParams,
	TurnStartResult,
	TurnUndoParams,
	TurnUndoResult,
} from '../protocol/types';
import { Action, TranscriptState, initialState, reduce } from './transcript';

const SESSION_KEY = 'kin.chat.sessionId';

export class ChatController implements vscode.Disposable {
	private stateValue: TranscriptState = initialState();
	sessions: SessionInfo[] = [];
	/** What the input box can offer as /name (commands/list of the shown session). */
	commands: CommandInfo[] = [];
	/** models/list: what the model picker offers. */
	models: ModelsListResult | undefined;
	/** The mode, model and effort picked while no session is shown: the next session/new gets them. */
	private pendingMode: SessionMode | undefined;
	private pendingModel: { model?: string; effort?: string } = {};
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
		on('turn/plan', (params) => ({ type: 'plan', params }));
		on('turn/reasoning', (params) => ({ type: 'reasoning', params }));
		on('turn/usage', (params) => ({ type: 'usage', params }));
		this.subs.push(
			service.onNotification('commands/changed', () => void this.refreshCommands()),
			service.onNotification('turn/completed', () => void this.refreshSessions()),
			// After a (re)start, redraw the session the view showed: kin keeps it on disk.
			service.onDidBecomeReady(() => void this.restore()),
			service.onDidBecomeReady(() => void this.refreshModels()),
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
			const r = await this.service.request<SessionListResult>('session/list', {});
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
		const params: SessionNewParams = {};
		if (title) {
			params.title = title;
		}
		if (this.pendingMode) {
			params.mode = this.pendingMode;
		}
		if (this.pendingModel.model) {
			params.model = this.pendingModel.model;
		}
		if (this.pendingModel.effort) {
			params.effort = this.pendingModel.effort;
		}
		const r = await this.service.request<SessionResult>('session/new', params);
		this.pendingMode = undefined;
		this.pendingModel = {};
		await this.show(r.session);
		this.dispatch({ type: 'reset', session: r.session, setup: { model: r.model, effort: r.effort, instructions: r.instructions } });
		await this.refreshSessions();
		void this.refreshCommands();
		return r.session;
	}

	async resume(sessionId: string): Promise<ResumeResult> {
		const r = await this.service.request<ResumeResult>('session/resume', { sessionId });
		await this.show(r.session);
		this.dispatch({ type: 'resumed', result: r });
		this.resumed.fire(r);
		void this.refreshCommands();
		return r;
	}

	/** The mode of the shown session (or the one the next session gets). */
	get mode(): SessionMode {
		return (this.sessionId ? this.stateValue.mode : this.pendingMode) ?? 'agent';
	}

	/** Sets the shown session's mode (session/configure), or the next session's when none is shown. */
	async configure(mode: SessionMode): Promise<void> {
		if (!this.sessionId) {
			this.pendingMode = mode;
			this.changed.fire();
			return;
		}
		const params: SessionConfigureParams = { sessionId: this.sessionId, mode };
		const r = await this.service.request<SessionConfigureResult>('session/configure', params);
		this.dispatch({ type: 'configured', result: r });
		this.changed.fire(); // the page's picker goes back to what kin has, even when nothing changed
	}

	/** The shown session's model (or the one the next session gets): what kin said, else the default. */
	get model(): string | undefined {
		return (this.sessionId ? this.stateValue.setup?.model : this.pendingModel.model) ?? this.models?.default;
	}

	/** The shown session's effort (undefined: the service decides). */
	get effort(): string | undefined {
		return this.sessionId ? this.stateValue.setup?.effort : this.pendingModel.effort;
	}

	/** models/list; the picker offers these. */
	async refreshModels(): Promise<void> {
		try {
			this.models = await this.service.request<ModelsListResult>('models/list', {});
			this.changed.fire();
		} catch (err) {
			this.output.appendLine(`[kin] models/list: ${(err as Error).message}`);
		}
	}

	/**
	 * Sets the shown session's model or effort (session/configure, between turns), or the next
	 * session's when none is shown. A new model alone lets kin drop an effort it does not take.
	 */
	async configureModel(change: { model?: string; effort?: string }): Promise<void> {
		if (!this.sessionId) {
			this.pendingModel = change.model ? { model: change.model } : { ...this.pendingModel, effort: change.effort };
			this.changed.fire();
			return;
		}
		const params: SessionConfigureParams = { sessionId: this.sessionId, ...change };
		try {
			const r = await this.service.request<SessionConfigureResult>('session/configure', params);
			this.dispatch({ type: 'configured', result: r });
		} finally {
			this.changed.fire(); // the pickers go back to what kin has, also after a refusal
		}
	}

	/** Puts back the files kin's tools changed in a turn of the shown session (the last one that did). */
	async undo(turnId?: string): Promise<TurnUndoResult | undefined> {
		if (!this.sessionId) {
			return undefined;
		}
		const params: TurnUndoParams = { sessionId: this.sessionId, ...(turnId ? { turnId } : {}) };
		const r = await this.service.request<TurnUndoResult>('turn/undo', params);
		this.dispatch({ type: 'undone', result: r });
		return r;
	}

	/** commands/list for the shown session: kin's own commands and the MCP servers' prompts. */
	async refreshCommands(): Promise<void> {
		const id = this.sessionId;
		if (!id) {
			this.commands = [];
			return;
		}
		try {
			const r = await this.service.request<CommandsListResult>('commands/list', { sessionId: id });
			if (id === this.sessionId) {
				this.commands = r.commands ?? [];
				this.changed.fire();
			}
		} catch (err) {
			this.output.appendLine(`[kin] commands/list: ${(err as Error).message}`);
		}
	}

	async deleteSession(sessionId: string): Promise<void> {
		await this.service.request('session/delete', { sessionId });
		if (sessionId === this.sessionId) {
			await this.show(undefined);
			this.dispatch({ type: 'reset' });
		}
		await this.refreshSessions();
	}

	/**
	 * Sends a question with what it attaches (files, a selection, problems), making a session first
	 * when the view has none. A question that runs one of kin's commands is sent as text only.
	 */
	async send(input: string, parts: InputPart[] = []): Promise<string> {
		const text = input.trim();
		if (!text && parts.length === 0) {
			throw new Error('nothing to send');
		}
		const id = this.sessionId ?? (await this.newSession()).sessionId;
		const params: TurnStartParams = { sessionId: id, input: parts.length ? [...(text ? [{ type: 'text' as const, text }] : []), ...parts] : text };
		const r = await this.service.request<TurnStartResult>('turn/start', params);
		if (r.command && !r.turnId) {
			// One of kin's own commands (/undo, /plan, /mode…): no turn, just what it did.
			if (r.command.name === 'compact' && (r.command.result as SessionCompactResult | undefined)?.compacted && id === this.sessionId) {
				// The summary is on record: redraw, so it shows (folded) where it was made.
				await this.resume(id);
			}
			this.dispatch({ type: 'command', sessionId: id, command: r.command });
		}
		return r.turnId ?? '';
	}

	/**
	 * The question a turn of the shown session asked, to ask it again: its text, and what it
	 * attached that can be sent again (history keeps no contents: a file is read again, a selection
	 * becomes its lines of the file, problems go with their items).
	 */
	questionOf(turnId: string): { text: string; parts: InputPart[] } | undefined {
		const e = this.stateValue.entries.find((x) => x.type === 'user' && x.turnId === turnId);
		if (e?.type !== 'user') {
			return undefined;
		}
		const parts: InputPart[] = [];
		for (const p of e.parts ?? []) {
			if ((p.type === 'file' || p.type === 'selection') && p.path) {
				parts.push({ type: 'file', path: p.path, ...(p.range ? { range: p.range } : {}) });
			} else if (p.type === 'diagnostics' && p.path && p.items?.length) {
				parts.push({ type: 'diagnostics', path: p.path, items: p.items });
			}
		}
		return { text: e.text, parts };
	}

	async cancel(): Promise<boolean> {
		if (!this.sessionId) {
			return false;
		}
		const r = await this.service.request<TurnCancelResult>('turn/cancel', { sessionId: this.sessionId });
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

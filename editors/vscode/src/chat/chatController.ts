// The chat's state on the extension side: which session the view shows, its transcript (fed by
// kin's notifications through the reducer), the list of sessions, and the actions the view (and
// the commands) can take. The webview only renders what this posts.

import * as vscode from 'vscode';
import type { KinService } from '../service';
import { listSessions } from './sessionList';
import type {
	ApprovalRequest,
	CommandInfo,
	ModelEntry,
	TurnCompleted,
	CommandsListResult,
	InputPart,
	ModelsListResult,
	ResumeResult,
	SessionCompactResult,
	SessionConfigureParams,
	SessionConfigureResult,
	SessionInfo,
	SessionMode,
	SessionNewParams,
	SessionResult,
	TurnCancelResult,
	TurnStartParams,
	TurnStartResult,
	TurnUndoParams,
	TurnSteerParams,
	TurnSteerResult,
	TurnRollbackParams,
	TurnRollbackResult,
	SessionForkParams,
	SessionForkResult,
	TurnUndoResult,
} from '../protocol/types';
import { RpcError } from '../protocol/connection';
import { ErrorCodes } from '../protocol/types';
import { Action, TranscriptState, initialState, reduce } from './transcript';

const SESSION_KEY = 'kin.chat.sessionId';
// SHOWN_KEY remembers the shown session's mode and model, so the page shows them (not defaults)
// while the session resumes after a reload.
const SHOWN_KEY = 'kin.chat.shown';
// HELD_KEY is a question kin has not taken yet: its turn waits for the acknowledgement of an
// unknown outcome before recording it. A reload (which ends that kin) must not lose it.
const HELD_KEY = 'kin.chat.held';
// DRAFT_KEY is what the input box holds (the webview's own state does not survive a reload).
const DRAFT_KEY = 'kin.chat.draft';

interface Shown {
	sessionId: string;
	mode?: SessionMode;
	model?: string;
	effort?: string;
}

interface Held {
	sessionId: string;
	turnId: string;
	text: string;
}

export class ChatController implements vscode.Disposable {
	private stateValue: TranscriptState = initialState();
	sessions: SessionInfo[] = [];
	/** session/list's cursor for the page after the rows loaded (undefined: all loaded). */
	sessionsCursor: string | undefined;
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
	private readonly giveBack = new vscode.EventEmitter<{ text: string; note: string }>();
	/** Fires with a question kin never took, to put back into the input box. */
	readonly onDidGiveBack = this.giveBack.event;
	/** The session shown before a reload is being resumed (true until restore ends). */
	private restoring: boolean;
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
		on('turn/steered', (params) => ({ type: 'steered', params }));
		this.restoring = !!memento.get<string>(SESSION_KEY);
		this.subs.push(
			service.onNotification('approval/request', (p) => this.holdQuestion(p)),
			service.onNotification('turn/completed', (p) => this.releaseQuestion(p)),
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
			this.remember();
			this.changed.fire();
		}
	}

	/** What the chat's input box holds (kept across a window reload). */
	get draft(): string {
		return this.memento.get<string>(DRAFT_KEY) ?? '';
	}

	async keepDraft(text: string): Promise<void> {
		if (text !== this.draft) {
			await this.memento.update(DRAFT_KEY, text || undefined);
		}
	}

	/** Whether the session shown before a reload is still being resumed. */
	get loading(): boolean {
		return this.restoring && !this.sessionId;
	}

	/** Keeps the shown session's mode and model for the next reload's first paint. */
	private remember(): void {
		const s = this.stateValue;
		if (!s.session) {
			return;
		}
		const shown: Shown = { sessionId: s.session.sessionId, mode: s.mode, model: s.setup?.model, effort: s.setup?.effort };
		const had = this.memento.get<Shown>(SHOWN_KEY);
		if (JSON.stringify(had) !== JSON.stringify(shown)) {
			void this.memento.update(SHOWN_KEY, shown);
		}
	}

	/** What was remembered of the session being resumed. */
	private get shownBefore(): Shown | undefined {
		const s = this.memento.get<Shown>(SHOWN_KEY);
		return this.loading && s && s.sessionId === this.memento.get<string>(SESSION_KEY) ? s : undefined;
	}

	/** A question waiting behind an acknowledgement is kept until kin takes it (or says it did not). */
	private holdQuestion(p: ApprovalRequest): void {
		if (p.kind !== 'acknowledge_unknown' || !p.sessionId || !p.turnId) {
			return;
		}
		const q = this.stateValue.entries.find((e) => e.type === 'user' && e.turnId === p.turnId);
		if (q?.type === 'user' && q.text) {
			void this.memento.update(HELD_KEY, { sessionId: p.sessionId, turnId: p.turnId, text: q.text } satisfies Held);
		}
	}

	/**
	 * The held question's turn ended: kin took it (it is in the conversation) or refused it
	 * unacknowledged, and then it goes back into the input box.
	 */
	private releaseQuestion(p: TurnCompleted): void {
		const held = this.memento.get<Held>(HELD_KEY);
		if (!held || held.turnId !== p.turnId || held.sessionId !== p.sessionId) {
			return;
		}
		void this.memento.update(HELD_KEY, undefined);
		if (p.status !== 'completed' && /not sent/.test(p.error ?? '')) {
			this.giveBack.fire({ text: held.text, note: 'kin did not send this question (the acknowledgement was not given); it is back here.' });
		}
	}

	/**
	 * After a resume: a held question the session's history does not have (kin ended while the
	 * acknowledgement waited, such as on a window reload) goes back into the input box.
	 */
	private giveBackHeld(r: ResumeResult): void {
		const held = this.memento.get<Held>(HELD_KEY);
		if (!held || held.sessionId !== r.session.sessionId) {
			return;
		}
		const pending = (r.pending ?? []).some((p) => !('mode' in p) && (p as ApprovalRequest).turnId === held.turnId);
		if (pending || r.runningTurnId === held.turnId) {
			return; // still waiting in this kin: the card is back
		}
		void this.memento.update(HELD_KEY, undefined);
		if (!r.history.some((h) => h.type === 'user' && h.turnId === held.turnId)) {
			this.giveBack.fire({ text: held.text, note: 'This question was not sent: kin stopped while the "may already have run" card waited. Send it again when you are ready.' });
		}
	}

	/**
	 * Resumes the session remembered for this workspace, if any. A question sent meanwhile waits
	 * for it (see send): a resume answered after the question's turn started would redraw the
	 * transcript without it.
	 */
	restore(): Promise<void> {
		const done = this.doRestore();
		this.restoring$ = done.catch(() => undefined);
		return done;
	}

	// restoring$ settles when the latest restore has redrawn the transcript.
	private restoring$: Promise<void> = Promise.resolve();

	private async doRestore(): Promise<void> {
		try {
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
		} finally {
			if (this.restoring) {
				this.restoring = false;
				this.changed.fire();
			}
		}
	}

	async refreshSessions(): Promise<void> {
		try {
			// kin answers a page (50 rows); loadMoreSessions asks for the next on demand. The person's
			// sessions and their subagents' (sessionList.ts), not one-shot kin chat runs.
			const r = await listSessions(this.service);
			this.sessions = r.sessions ?? [];
			this.sessionsCursor = r.nextCursor;
			const cur = this.sessions.find((s) => s.sessionId === this.sessionId);
			if (cur) {
				this.dispatch({ type: 'sessionUpdated', session: cur });
			}
			this.changed.fire();
		} catch (err) {
			this.output.appendLine(`[kin] session/list: ${(err as Error).message}`);
		}
	}

	/** Appends session/list's next page to the sessions loaded, when there is one. */
	async loadMoreSessions(): Promise<void> {
		if (!this.sessionsCursor) {
			return;
		}
		try {
			const r = await listSessions(this.service, this.sessionsCursor);
			const known = new Set(this.sessions.map((s) => s.sessionId));
			this.sessions = [...this.sessions, ...(r.sessions ?? []).filter((s) => !known.has(s.sessionId))];
			this.sessionsCursor = r.nextCursor;
			this.changed.fire();
		} catch (err) {
			this.output.appendLine(`[kin] session/list: ${(err as Error).message}`);
		}
	}

	async newSession(title?: string, worktree?: SessionNewParams['worktree']): Promise<SessionInfo> {
		const params: SessionNewParams = {};
		if (title) {
			params.title = title;
		}
		if (worktree) {
			params.worktree = worktree;
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
		const configuredBefore = this.configuredSeq;
		const r = await this.service.request<ResumeResult>('session/resume', { sessionId });
		await this.show(r.session);
		this.dispatch({ type: 'resumed', result: r });
		// A model or mode the person chose while the resume was on its way (right after a restart,
		// the picker is live) is newer than what the resume says: kin has it, so the pickers keep it.
		if (this.configuredSeq !== configuredBefore && this.lastConfigured?.sessionId === r.session.sessionId) {
			this.dispatch({ type: 'configured', result: this.lastConfigured });
		}
		this.resumed.fire(r);
		this.giveBackHeld(r);
		void this.refreshCommands();
		return r;
	}

	/** The mode of the shown session (or the one the next session gets). */
	get mode(): SessionMode {
		return (this.sessionId ? this.stateValue.mode : (this.pendingMode ?? this.shownBefore?.mode)) ?? 'agent';
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
		this.noteConfigured(r);
		this.dispatch({ type: 'configured', result: r });
		this.changed.fire(); // the page's picker goes back to what kin has, even when nothing changed
	}

	/** The shown session's model (or the one the next session gets): what kin said, else the default. */
	get model(): string | undefined {
		return (this.sessionId ? this.stateValue.setup?.model : (this.pendingModel.model ?? this.shownBefore?.model)) ?? this.models?.default;
	}

	/** The shown session's model as models/list has it (its name, efforts, key variable). */
	get modelEntry(): ModelEntry | undefined {
		const id = this.model;
		return this.models?.models.find((m) => m.id === id);
	}

	/** The shown session's effort (undefined: the service decides). */
	get effort(): string | undefined {
		return this.sessionId ? this.stateValue.setup?.effort : (this.pendingModel.effort ?? this.shownBefore?.effort);
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
			this.noteConfigured(r);
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

	/** Takes back the shown session's last n turns (turn/rollback): the model forgets them, files are put back. */
	async rollback(n = 1): Promise<TurnRollbackResult | undefined> {
		const id = this.sessionId;
		if (!id) {
			return undefined;
		}
		const params: TurnRollbackParams = { sessionId: id, turns: n };
		const r = await this.service.request<TurnRollbackResult>('turn/rollback', params);
		this.dispatch({ type: 'rolledBack', sessionId: id, result: r });
		return r;
	}

	/** Forks the shown session (up to turnId, else every ended turn) and shows the fork. */
	async fork(turnId?: string): Promise<SessionForkResult | undefined> {
		const id = this.sessionId;
		if (!id) {
			return undefined;
		}
		const params: SessionForkParams = { sessionId: id, ...(turnId ? { turnId } : {}) };
		const r = await this.service.request<SessionForkResult>('session/fork', params);
		await this.resume(r.session.sessionId);
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
		await this.restoring$;
		const id = this.sessionId ?? (await this.newSession()).sessionId;
		const sent = parts.length ? [...(text ? [{ type: 'text' as const, text }] : []), ...parts] : text;
		const running = this.stateValue.runningTurn;
		if (running && id === this.sessionId) {
			// A turn runs here: the words join it at its next step (turn/steered shows them).
			const steer: TurnSteerParams = { sessionId: id, turnId: running, input: sent };
			try {
				await this.service.request<TurnSteerResult>('turn/steer', steer);
				return running;
			} catch (err) {
				if (!(err instanceof RpcError && err.code === ErrorCodes.TurnEnded)) {
					throw err;
				}
				// The turn ended meanwhile: the words are a question of their own.
			}
		}
		const params: TurnStartParams = { sessionId: id, input: sent };
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

	/** What kin said to the last session/configure, and how many there were: see resume. */
	private configuredSeq = 0;
	private lastConfigured: SessionConfigureResult | undefined;

	private noteConfigured(r: SessionConfigureResult): void {
		this.configuredSeq++;
		this.lastConfigured = r;
	}

	private async show(session: SessionInfo | undefined): Promise<void> {
		await this.memento.update(SESSION_KEY, session?.sessionId);
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		this.changed.dispose();
		this.resumed.dispose();
		this.giveBack.dispose();
	}
}

// kin for VS Code: a thin shim over `kin serve` (rpc/PROTOCOL.md). All state lives in one explicit
// context object; commands are registered through one factory; the output channel is created
// once; the service restarts after a crash within a budget and is stopped with a timeout.

import * as vscode from 'vscode';
import { KeyStore, droppedKeysText, keyChoices, notConfiguredText, setKeyHint } from './apiKeys';
import { Approvals } from './approvals';
import { CommandTerminals } from './commandTerminals';
import { ChatController } from './chat/chatController';
import { CHAT_VIEW_ID, ChatViewProvider, ViewStatus } from './chat/chatView';
import { DIFF_SCHEME, DiffDocuments } from './diffDocuments';
import { Documents, TEXT_DOCUMENTS } from './documents';
import { Elicitations } from './elicitation';
import { errorText } from './errorText';
import { McpManager } from './mcpManager';
import { ReviewFindings } from './review';
import { ModelSaw } from './modelSaw';
import type { ApprovalRequest, ElicitationRequest, GrantsListResult, LogMessage, McpStatus, Notice, SandboxInfo, UsageSummaryResult } from './protocol/types';
import { usageLines } from './spend';
import { grantItem } from './mcpText';
import { ResourceDocuments } from './resourceDocuments';
import { pickTemplateUri } from './resourceTemplatePicker';
import { KinService } from './service';
import { StatusBar } from './statusBar';
import { TurnEdits } from './turnEdits';
import * as worktree from './worktree';
import { showError, showInfo, showWarning } from './notify';

/** Everything the extension holds, in one place. */
export interface KinContext {
	extension: vscode.ExtensionContext;
	output: vscode.OutputChannel;
	service: KinService;
	chat: ChatController;
	view: ChatViewProvider;
	approvals: Approvals;
	elicitations: Elicitations;
	diffs: DiffDocuments;
	documents: Documents;
	mcp: McpManager;
	status: StatusBar;
	/** The keys stored with "kin: Set API Key", by variable name. */
	keys: KeyStore;
	/** Command output in terminal views. */
	terminals: CommandTerminals;
	/** Resources for `@server:uri` and the "what the model saw" view (modelSaw.ts). */
	saw: ModelSaw;
	/** Keep / Undo of a turn's changes in the editor, and their diffs. */
	edits: TurnEdits;
	/** Turns running in any session: `sessionId/turnId`. */
	running: Set<string>;
	/** Elicitations (forms and links) waiting for the person: their requestIds. */
	asking: Set<string>;
	/** Last mcp/status per server. */
	mcpStatus: Map<string, McpStatus>;
}

/** What activate returns: the tests (and other extensions) use it. */
export interface KinApi {
	ctx: KinContext;
}

let current: KinContext | undefined;

export async function activate(extension: vscode.ExtensionContext): Promise<KinApi> {
	const output = vscode.window.createOutputChannel('kin');
	const keys = new KeyStore(extension.secrets, extension.globalState);
	const service = new KinService({
		output,
		keys,
		version: String(extension.extension.packageJSON.version ?? '0.0.0'),
		extensionPath: extension.extensionUri.scheme === 'file' ? extension.extensionUri.fsPath : undefined,
		textDocuments: TEXT_DOCUMENTS,
	});
	// Documents first: a new connection hears of the open buffers before anything else is sent.
	const documents = new Documents(service, output);
	const diffs = new DiffDocuments();
	const chat = new ChatController(service, extension.workspaceState, output);
	const approvals = new Approvals(service, diffs, output);
	const elicitations = new Elicitations(service, output);
	const status = new StatusBar();
	// A review's findings as diagnostics; "kin: Review Changes" starts one in the chat's session.
	const review = new ReviewFindings(vscode, service, () => chat.sessionId);
	extension.subscriptions.push(
		review,
		vscode.commands.registerCommand('kin.review', () =>
			review.start().catch((err) => void showError(errorText(err), 'Show Logs').then((c) => c && output.show(true))),
		),
		vscode.commands.registerCommand('kin.clearReview', () => review.clear()),
	);
	const running = new Set<string>();
	const asking = new Set<string>();
	const ctx: KinContext = {
		extension,
		output,
		service,
		chat,
		view: undefined as unknown as ChatViewProvider,
		approvals,
		elicitations,
		diffs,
		documents,
		mcp: new McpManager(service),
		status,
		keys,
		terminals: new CommandTerminals(service, () => chat.cancel()),
		saw: new ModelSaw(service),
		edits: new TurnEdits(service, chat, diffs),
		running,
		asking,
		mcpStatus: new Map(),
	};
	const viewStatus = (): ViewStatus => {
		// The shown session's model (what the pickers show), not the default kin started with.
		const m = chat.modelEntry;
		const init = service.initializeResult?.model;
		return {
			service: service.state,
			busy: running.size > 0,
			waiting: approvals.waiting,
			asking: asking.size,
			model: m?.name || chat.model || init?.model,
			modelMissing: m ? (m.configured ? undefined : `${m.missing ?? 'not configured'}. ${setKeyHint(m.apiKeyEnv)}`) : init?.configured === false ? init.missing : undefined,
			unconfined: unconfinedText(service.initializeResult?.sandbox),
		};
	};
	const saw = ctx.saw;
	const resourceDocs = new ResourceDocuments(service);
	extension.subscriptions.push(saw, resourceDocs);
	ctx.view = new ChatViewProvider(extension.extensionUri, chat, {
		status: viewStatus,
		cards: () => [...approvals.cards(), ...elicitations.cards()],
		answer: (requestId, optionId, revision) =>
			approvals.has(requestId) ? approvals.answer(requestId, optionId, revision) : elicitations.answer(requestId, optionId),
		openDiff: (requestId) => approvals.openDiff(requestId),
		terminal: (callId) => {
			const call = chat.state.entries.find((e) => e.type === 'tool' && e.callId === callId);
			if (call?.type === 'tool') {
				ctx.terminals.show(call);
			}
		},
		turnDiff: (turnId, file) => ctx.edits.openTurnDiff(turnId, file),
		keyHint: setKeyHint,
		resources: () => saw.resources(),
		openResource: (link) => resourceDocs.open(link),
		fillTemplate: (server, template) => pickTemplateUri(service, server, template),
	});
	approvals.host = ctx.view;
	elicitations.host = ctx.view;
	current = ctx;
	const refresh = () => {
		status.update(viewStatus());
		ctx.view.schedule();
		void vscode.commands.executeCommand('setContext', 'kin.waiting', approvals.waiting + elicitations.cards().length > 0);
	};
	const ask = (requestId: string, waiting: boolean) => {
		if (waiting ? !asking.has(requestId) : asking.has(requestId)) {
			waiting ? asking.add(requestId) : asking.delete(requestId);
			refresh();
		}
	};

	extension.subscriptions.push(
		output,
		service,
		documents,
		diffs,
		ctx.terminals,
		ctx.edits,
		chat,
		approvals,
		elicitations,
		status,
		ctx.view,
		vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, ctx.view, { webviewOptions: { retainContextWhenHidden: true } }),
		vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs),
		service.onDidChangeState((s) => {
			if (s !== 'ready') {
				running.clear();
				asking.clear(); // the service declined what waited
			}
			refresh();
		}),
		service.onNotification('elicitation/request', (p: ElicitationRequest) => ask(p.requestId, true)),
		service.onNotification('elicitation/resolved', (p: { requestId: string }) => ask(p.requestId, false)),
		// The status bar names what the shown session waits for (the view redraws itself).
		chat.onDidChange(() => status.update(viewStatus())),
		approvals.onDidChangeWaiting(refresh),
		elicitations.onDidChangeCards(refresh),
		service.onNotification('turn/started', (p) => {
			running.add(`${p.sessionId}/${p.turnId}`);
			refresh();
		}),
		service.onNotification('turn/completed', (p) => {
			running.delete(`${p.sessionId}/${p.turnId}`);
			refresh();
		}),
		service.onNotification('notice', (p: Notice) => showNotice(p, output)),
		service.onNotification('log/message', (p: LogMessage) => {
			if (levelRank(p.level) <= levelRank(vscode.workspace.getConfiguration('kin').get<string>('logLevel') ?? 'info')) {
				output.appendLine(`[${p.level}] ${p.message}`);
			}
		}),
		service.onNotification('mcp/status', (p: McpStatus) => {
			ctx.mcpStatus.set(p.server, p);
			output.appendLine(`[mcp] ${p.server}: ${p.state}${p.tools ? ` (${p.tools} tools)` : ''}${p.error ? ` — ${p.error}` : ''}`);
		}),
		chat.onDidResume((r) => review.resumed(r)),
		chat.onDidResume((r) => {
			for (const p of r.pending ?? []) {
				if ('mode' in p) {
					ask(p.requestId, true);
					elicitations.request(p as ElicitationRequest);
				} else {
					approvals.request(p as ApprovalRequest);
				}
			}
		}),
		service.onDidBecomeReady((r) => {
			const dropped = service.launch?.droppedKeys ?? [];
			if (dropped.length) {
				void showWarning(droppedKeysText(dropped), 'Set API Key').then((c) => {
					if (c) {
						void vscode.commands.executeCommand('kin.setApiKey', dropped[0]);
					}
				});
			}
			if (r.model && !r.model.configured) {
				// The first run: the key (Set API Key) and the service (kin.env) are set here, in VS Code.
				void showWarning(notConfiguredText(r.model.missing), 'Set API Key', 'Open kin.env', 'Show Logs').then((c) => {
					if (c === 'Set API Key') {
						void vscode.commands.executeCommand('kin.setApiKey');
					} else if (c === 'Open kin.env') {
						void vscode.commands.executeCommand('workbench.action.openSettings', 'kin.env');
					} else if (c === 'Show Logs') {
						output.show(true);
					}
				});
			}
		}),
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('kin.path') || e.affectsConfiguration('kin.args') || e.affectsConfiguration('kin.env') || e.affectsConfiguration('kin.trace')) {
				void showInfo('kin: restart the service to use the new settings.', 'Restart Service').then((c) => {
					if (c) {
						void vscode.commands.executeCommand('kin.restartService');
					}
				});
			}
		}),
	);
	registerCommands(ctx);
	refresh();

	service.start().catch((err) => {
		void showError(errorText(err), 'Show Logs').then((c) => c && output.show(true));
	});
	return { ctx };
}

export async function deactivate(): Promise<void> {
	await current?.service.stop();
	current = undefined;
}

type CommandFactory = (ctx: KinContext) => (...args: any[]) => unknown;

/** Every command, by id; registered in one place. */
const COMMANDS: Record<string, CommandFactory> = {
	'kin.openChat': (ctx) => () => ctx.view.focusInput(),
	'kin.focusApproval': (ctx) => async () => {
		const first = [...ctx.approvals.cards(), ...ctx.elicitations.cards()][0];
		if (!first) {
			void showInfo('kin: nothing waits for your answer.');
			return;
		}
		await ctx.view.reveal(first.requestId);
	},
	'kin.newSession': (ctx) => async () => {
		await ctx.chat.newSession();
		await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
	},
	'kin.newSessionInWorktree': (ctx) => () => worktree.newInWorktree(worktreeHost(ctx)),
	'kin.worktreeStatus': (ctx) => () => worktree.showStatus(worktreeHost(ctx)),
	'kin.usage': (ctx) => async () => {
		// usage/summary for the shown session and for the day, with the spend limits.
		const sid = ctx.chat.sessionId;
		const day = await ctx.service.request<UsageSummaryResult>('usage/summary', { scope: 'day' });
		const session = sid ? await ctx.service.request<UsageSummaryResult>('usage/summary', { scope: 'session', sessionId: sid }) : undefined;
		const lines = [...(session ? usageLines(session) : []), ...usageLines(day)];
		await vscode.window.showQuickPick(lines, { title: 'kin: usage and spend limits', placeHolder: 'settings.json "limits" sets the limits; prices per model give the cost' });
	},
	'kin.worktreeApply': (ctx) => () => worktree.apply(worktreeHost(ctx)),
	'kin.worktreeRemove': (ctx) => () => worktree.remove(worktreeHost(ctx)),
	'kin.cancelTurn': (ctx) => async () => {
		const cancelled = await ctx.chat.cancel();
		if (!cancelled) {
			void showInfo('kin: no turn is running in this session.');
		}
	},
	'kin.rollback': (ctx) => async () => {
		const n = await vscode.window.showInputBox({
			title: 'kin: take back the last N turns',
			prompt: 'The model forgets them and their file changes are undone (as Undo does).',
			value: '1',
			validateInput: (v) => (/^[1-9][0-9]*$/.test(v.trim()) ? undefined : 'a number, 1 or more'),
		});
		if (n === undefined) {
			return;
		}
		try {
			const r = await ctx.chat.rollback(Number(n.trim()));
			if (!r) {
				void showInfo('kin: no session is shown.');
			}
		} catch (err) {
			void showError(`kin: rollback: ${(err as Error).message}`);
		}
	},
	'kin.fork': (ctx) => async (turnId?: unknown) => {
		try {
			const r = await ctx.chat.fork(typeof turnId === 'string' ? turnId : undefined);
			if (!r) {
				void showInfo('kin: no session is shown.');
			}
		} catch (err) {
			void showError(`kin: fork: ${(err as Error).message}`);
		}
	},
	'kin.mcpList': (ctx) => () => ctx.mcp.list(),
	'kin.mcpAdd': (ctx) => () => ctx.mcp.add(),
	'kin.mcpSignIn': (ctx) => (name?: string) => ctx.mcp.login(typeof name === 'string' ? name : undefined),
	'kin.revokeGrants': (ctx) => () => revokeGrants(ctx),
	'kin.showModelSaw': (ctx) => (callId?: unknown) => ctx.saw.show(typeof callId === 'string' ? callId : undefined),
	'kin.restartService': (ctx) => () => ctx.service.restart(),
	'kin.showLogs': (ctx) => () => ctx.output.show(true),
	'kin.setApiKey': (ctx) => (name?: unknown) => setApiKey(ctx, typeof name === 'string' ? name : undefined),
};

/** The worktree commands' view of the extension (src/worktree.ts). */
function worktreeHost(ctx: KinContext): worktree.WorktreeHost {
	return {
		request: (method, params) => ctx.service.request(method, params),
		sessionId: () => ctx.chat.sessionId,
		newSession: async (wt) => {
			const s = await ctx.chat.newSession(undefined, wt);
			await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
			return s;
		},
	};
}

/**
 * Stores the key of the model that needs it (VS Code's secret storage) under the variable kin
 * reads it from (models/list's apiKeyEnv; the default model's first), then restarts kin with it.
 * `preset` names the variable (from a message that said which one is missing).
 */
async function setApiKey(ctx: KinContext, preset?: string): Promise<void> {
	if (!ctx.chat.models && ctx.service.state === 'ready') {
		await ctx.chat.refreshModels();
	}
	const models = ctx.chat.models;
	const choices = keyChoices(models?.models ?? [], models?.default, [...(ctx.service.launch?.droppedKeys ?? []), ...(preset ? [preset] : [])]);
	let name = preset;
	if (!name) {
		if (choices.length === 1) {
			name = choices[0].name;
		} else {
			const stored = await Promise.all(choices.map((c) => ctx.keys.has(c.name)));
			const pick = await vscode.window.showQuickPick(
				choices.map((c, i) => ({
					label: c.name,
					description: c.models.length ? `the key of ${c.models.join(', ')}` : 'named in kin.env',
					detail: `${c.configured ? 'kin has it' : 'not set: its models cannot run'}${stored[i] ? ' · stored here' : ''}`,
					name: c.name,
				})),
				{ title: 'kin: set the API key of which model?', placeHolder: "Pick the key to store (the default model's first)", ignoreFocusOut: true },
			);
			if (!pick) {
				return;
			}
			name = pick.name;
		}
	}
	const c = choices.find((x) => x.name === name);
	const key = await vscode.window.showInputBox({
		title: `kin: API key ${name}${c?.models.length ? ` (${c.models.join(', ')})` : ''}`,
		prompt: `Kept in VS Code's secret storage and given to kin as ${name}, never written to settings. Empty removes it.`,
		password: true,
		ignoreFocusOut: true,
	});
	if (key === undefined) {
		return;
	}
	await ctx.keys.set(name, key.trim());
	if (process.env[name]) {
		void showWarning(`kin: ${name} is set in the environment VS Code was started with, and that one is used.`);
	}
	await ctx.service.restart();
	void vscode.window.setStatusBarMessage(`kin: ${name} ${key.trim() ? 'stored' : 'removed'}; kin restarted`, 5000);
}

function registerCommands(ctx: KinContext): void {
	for (const [id, make] of Object.entries(COMMANDS)) {
		const run = make(ctx);
		ctx.extension.subscriptions.push(
			vscode.commands.registerCommand(id, async (...args: unknown[]) => {
				try {
					return await run(...args);
				} catch (err) {
					void showError(errorText(err), 'Show Logs').then((c) => c && ctx.output.show(true));
				}
			}),
		);
	}
}

async function revokeGrants(ctx: KinContext): Promise<void> {
	const r = await ctx.service.request<GrantsListResult>('grants/list', {});
	if (!r.grants?.length) {
		void showInfo('kin: there are no grants.');
		return;
	}
	const picks = await vscode.window.showQuickPick(
		r.grants.map((g) => ({ ...grantItem(g), id: g.id })),
		{ title: 'kin: revoke grants', canPickMany: true, placeHolder: 'Pick the grants to revoke' },
	);
	if (!picks?.length) {
		return;
	}
	for (const p of picks) {
		await ctx.service.request('grants/revoke', { id: p.id });
	}
	void showInfo(`kin: revoked ${picks.length} grant${picks.length > 1 ? 's' : ''}.`);
}

function showNotice(p: Notice, output: vscode.OutputChannel): void {
	output.appendLine(`[notice ${p.level}] ${p.message}`);
	const show = p.level === 'error' ? showError : p.level === 'warning' ? showWarning : showInfo;
	void show(errorText(p.message));
}

function levelRank(l: string): number {
	return { error: 0, warning: 1, warn: 1, info: 2, debug: 3 }[l] ?? 2;
}

/** What the status bar says about a sandbox that does not confine commands. */
function unconfinedText(sb: SandboxInfo | undefined): string | undefined {
	if (!sb || sb.confined) {
		return undefined;
	}
	const why = sb.reason ?? 'no sandbox';
	return sb.mode === 'required' ? `commands will not run: settings.json requires a sandbox, and ${why}` : `commands run unconfined: ${why}`;
}

// kin for VS Code: a thin shim over `kin serve` (rpc/PROTOCOL.md). All state lives in one explicit
// context object; commands are registered through one factory; the output channel is created
// once; the service restarts after a crash within a budget and is stopped with a timeout.

import * as vscode from 'vscode';
import { Approvals } from './approvals';
import { ChatController } from './chat/chatController';
import { CHAT_VIEW_ID, ChatViewProvider, ViewStatus } from './chat/chatView';
import { DIFF_SCHEME, DiffDocuments } from './diffDocuments';
import { Documents, TEXT_DOCUMENTS } from './documents';
import { Elicitations } from './elicitation';
import { errorText } from './errorText';
import { McpManager } from './mcpManager';
import type { ApprovalRequest, ElicitationRequest, GrantsListResult, LogMessage, McpStatus, Notice, SandboxInfo } from './protocol/types';
import { grantItem } from './mcpText';
import { API_KEY_SECRET, KinService } from './service';
import { StatusBar } from './statusBar';

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
	/** Turns running in any session: `sessionId/turnId`. */
	running: Set<string>;
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
	const service = new KinService({
		output,
		secrets: extension.secrets,
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
	const running = new Set<string>();
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
		running,
		mcpStatus: new Map(),
	};
	const viewStatus = (): ViewStatus => ({
		service: service.state,
		busy: running.size > 0,
		waiting: approvals.waiting,
		model: service.initializeResult?.model?.model,
		modelMissing: service.initializeResult?.model?.configured === false ? service.initializeResult.model.missing : undefined,
		unconfined: unconfinedText(service.initializeResult?.sandbox),
	});
	ctx.view = new ChatViewProvider(extension.extensionUri, chat, {
		status: viewStatus,
		cards: () => [...approvals.cards(), ...elicitations.cards()],
		answer: (requestId, optionId) =>
			approvals.has(requestId) ? approvals.answer(requestId, optionId) : elicitations.answerLink(requestId, optionId),
		openDiff: (requestId) => approvals.openDiff(requestId),
	});
	approvals.host = ctx.view;
	elicitations.host = ctx.view;
	current = ctx;
	const refresh = () => {
		status.update(viewStatus());
		ctx.view.schedule();
		void vscode.commands.executeCommand('setContext', 'kin.waiting', approvals.waiting + elicitations.cards().length > 0);
	};

	extension.subscriptions.push(
		output,
		service,
		documents,
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
			}
			refresh();
		}),
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
		chat.onDidResume((r) => {
			for (const p of r.pending ?? []) {
				if ('mode' in p) {
					elicitations.request(p as ElicitationRequest);
				} else {
					approvals.request(p as ApprovalRequest);
				}
			}
		}),
		service.onDidBecomeReady((r) => {
			if (r.model && !r.model.configured) {
				void vscode.window
					.showWarningMessage(`kin: the model service is not configured: ${r.model.missing ?? ''}`, 'Set API Key', 'Show Logs')
					.then((c) => {
						if (c === 'Set API Key') {
							void vscode.commands.executeCommand('kin.setApiKey');
						} else if (c === 'Show Logs') {
							output.show(true);
						}
					});
			}
		}),
		vscode.workspace.onDidChangeConfiguration((e) => {
			if (e.affectsConfiguration('kin.path') || e.affectsConfiguration('kin.args') || e.affectsConfiguration('kin.env') || e.affectsConfiguration('kin.trace')) {
				void vscode.window.showInformationMessage('kin: restart the service to use the new settings.', 'Restart Service').then((c) => {
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
		void vscode.window.showErrorMessage(errorText(err), 'Show Logs').then((c) => c && output.show(true));
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
			void vscode.window.showInformationMessage('kin: nothing waits for your answer.');
			return;
		}
		await ctx.view.reveal(first.requestId);
	},
	'kin.newSession': (ctx) => async () => {
		await ctx.chat.newSession();
		await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
	},
	'kin.cancelTurn': (ctx) => async () => {
		const cancelled = await ctx.chat.cancel();
		if (!cancelled) {
			void vscode.window.showInformationMessage('kin: no turn is running in this session.');
		}
	},
	'kin.mcpList': (ctx) => () => ctx.mcp.list(),
	'kin.mcpAdd': (ctx) => () => ctx.mcp.add(),
	'kin.mcpSignIn': (ctx) => (name?: string) => ctx.mcp.login(typeof name === 'string' ? name : undefined),
	'kin.revokeGrants': (ctx) => () => revokeGrants(ctx),
	'kin.restartService': (ctx) => () => ctx.service.restart(),
	'kin.showLogs': (ctx) => () => ctx.output.show(true),
	'kin.setApiKey': (ctx) => async () => {
		const key = await vscode.window.showInputBox({
			title: 'kin: API key for the model service',
			prompt: 'Kept in VS Code\'s secret storage and given to kin as OPENAI_API_KEY. Empty removes it.',
			password: true,
			ignoreFocusOut: true,
		});
		if (key === undefined) {
			return;
		}
		if (key === '') {
			await ctx.extension.secrets.delete(API_KEY_SECRET);
		} else {
			await ctx.extension.secrets.store(API_KEY_SECRET, key);
		}
		if (process.env.OPENAI_API_KEY) {
			void vscode.window.showWarningMessage('kin: OPENAI_API_KEY is set in the environment and takes precedence over the stored key.');
		}
		await ctx.service.restart();
	},
};

function registerCommands(ctx: KinContext): void {
	for (const [id, make] of Object.entries(COMMANDS)) {
		const run = make(ctx);
		ctx.extension.subscriptions.push(
			vscode.commands.registerCommand(id, async (...args: unknown[]) => {
				try {
					return await run(...args);
				} catch (err) {
					void vscode.window.showErrorMessage(errorText(err), 'Show Logs').then((c) => c && ctx.output.show(true));
				}
			}),
		);
	}
}

async function revokeGrants(ctx: KinContext): Promise<void> {
	const r = await ctx.service.request<GrantsListResult>('grants/list', {});
	if (!r.grants?.length) {
		void vscode.window.showInformationMessage('kin: there are no grants.');
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
	void vscode.window.showInformationMessage(`kin: revoked ${picks.length} grant${picks.length > 1 ? 's' : ''}.`);
}

function showNotice(p: Notice, output: vscode.OutputChannel): void {
	output.appendLine(`[notice ${p.level}] ${p.message}`);
	const show = p.level === 'error' ? vscode.window.showErrorMessage : p.level === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
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

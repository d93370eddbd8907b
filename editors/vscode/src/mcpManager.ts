// The MCP server manager: a QuickPick over mcp/list (add, edit, enable/disable, remove, adopt a
// foreign row, check, apply, sign in) and the guided "Add Server" flow. kin does the work; this
// only asks and calls mcp/* (PROTOCOL.md, MCP server manager).

import * as vscode from 'vscode';
import type { KinService } from './service';
import type { McpAddParams, McpAdoptParams, McpCheckResult, McpListResult, McpLoginResult, McpScope, McpSetEnabledParams, McpServerConfig, McpServerRow, McpServersResult } from './protocol/types';
import { foreignItem, noteItems, serverItem, shadowedItem } from './mcpText';
import { maskedNames, splitArgs } from './shellWords';
import { showInstructions } from './mcpInstructions';
import { showError, showInfo } from './notify';

type Pick<T> = vscode.QuickPickItem & { value?: T };

export class McpManager {
	constructor(private readonly service: KinService) {}

	/** The manager: loops until the person closes it. */
	async list(): Promise<void> {
		for (;;) {
			const list = await this.service.request<McpListResult>('mcp/list', {});
			const items: Pick<() => Promise<boolean | void>>[] = [];
			for (const n of noteItems(list)) {
				items.push({ ...n, value: undefined });
			}
			if (list.servers.length) {
				items.push({ label: 'Servers', kind: vscode.QuickPickItemKind.Separator });
			}
			for (const s of list.servers) {
				items.push({ ...serverItem(s), value: () => this.serverActions(s) });
			}
			if (list.foreign?.length) {
				items.push({ label: 'Found in other files (not loaded)', kind: vscode.QuickPickItemKind.Separator });
				for (const s of list.foreign) {
					items.push({ ...foreignItem(s), value: () => this.adopt(s) });
				}
			}
			if (list.shadowed?.length) {
				items.push({ label: 'Hidden by a project entry', kind: vscode.QuickPickItemKind.Separator });
				for (const s of list.shadowed) {
					items.push({ ...shadowedItem(s), value: undefined });
				}
			}
			items.push({ label: 'Actions', kind: vscode.QuickPickItemKind.Separator });
			items.push({ label: '$(add) Add server…', value: () => this.add() });
			items.push({ label: '$(check-all) Check all servers', value: () => this.check() });
			items.push({ label: '$(sync) Apply changes (reconnect)', value: () => this.apply() });
			const pick = await vscode.window.showQuickPick(items, {
				title: 'kin: MCP servers',
				placeHolder: list.servers.length ? 'Pick a server to manage it, or an action' : 'No servers yet: add one',
				matchOnDescription: true,
				matchOnDetail: true,
			});
			if (!pick) {
				return;
			}
			if (pick.value) {
				try {
					await pick.value();
				} catch (err) {
					void showError(`kin: ${(err as Error).message}`);
				}
			}
		}
	}

	private async serverActions(s: McpServerRow): Promise<void> {
		const actions: Pick<() => Promise<unknown>>[] = [
			{ label: !s.enabled ? '$(play) Enable' : '$(debug-pause) Disable', value: () => this.setEnabled(s, !s.enabled) },
			{ label: '$(edit) Edit…', value: () => this.edit(s) },
			{ label: '$(pulse) Check', value: () => this.check(s.name) },
		];
		if (s.instructions) {
			actions.push({
				label: s.instructionsPending ? '$(warning) Instructions changed: review and accept…' : '$(book) Instructions',
				value: () => showInstructions(this.service, s),
			});
		}
		if (s.transport === 'http') {
			actions.push({ label: '$(sign-in) Sign in', value: () => this.login(s.name) });
		}
		actions.push({ label: '$(trash) Remove', value: () => this.remove(s) });
		const pick = await vscode.window.showQuickPick(actions, {
			title: `kin: MCP server ${s.name}`,
			placeHolder: [s.scope, s.transport, s.state, s.lastError].filter(Boolean).join(' · '),
		});
		await pick?.value?.();
	}

	private async setEnabled(s: McpServerRow, enabled: boolean): Promise<void> {
		await this.service.request('mcp/setEnabled', { name: s.name, enabled } satisfies McpSetEnabledParams);
		await this.offerApply(`${s.name} ${enabled ? 'enabled' : 'disabled'}.`);
	}

	private async remove(s: McpServerRow): Promise<void> {
		const ok = await vscode.window.showWarningMessage(`Remove MCP server ${s.name} from the ${s.scope} configuration?`, { modal: true }, 'Remove');
		if (ok !== 'Remove') {
			return;
		}
		await this.service.request('mcp/remove', { scope: s.scope, name: s.name });
		await this.offerApply(`${s.name} removed.`);
	}

	private async adopt(s: McpServerRow): Promise<void> {
		await this.service.request('mcp/adopt', { name: s.name } satisfies McpAdoptParams);
		await this.offerApply(`${s.name} copied into .kin/mcp.json (not trusted yet: kin asks before it starts).`);
	}

	async check(name?: string): Promise<void> {
		const r = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: `kin: checking ${name ?? 'MCP servers'}…`, cancellable: true },
			(_p, token) => this.service.request<McpCheckResult>('mcp/check', name ? { name } : {}, abortOn(token)),
		);
		const items: vscode.QuickPickItem[] = r.results.map((x) => ({
			label: `${x.ready ? '$(pass)' : '$(error)'} ${x.name}`,
			description: x.state,
			detail: x.explanation,
		}));
		await vscode.window.showQuickPick(items.length ? items : [{ label: 'No servers to check' }], { title: 'kin: MCP check' });
	}

	async apply(): Promise<void> {
		const r = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: 'kin: applying MCP configuration…', cancellable: true },
			(_p, token) =>
				this.service.request<McpServersResult>('mcp/apply', {}, abortOn(token)),
		);
		// Each server's state only: kin's own notice ("MCP server x: 15 tools from …") already says
		// what a server that connected brought, and saying it twice reads as two servers.
		const summary = (r.servers ?? []).map((s) => `${s.name} ${s.state}`).join(', ');
		void showInfo(`kin: MCP configuration applied${summary ? `: ${summary}` : '; no servers'}.`);
	}

	async login(name?: string): Promise<void> {
		if (!name) {
			const list = await this.service.request<McpListResult>('mcp/list', {});
			const http = list.servers.filter((s) => s.transport === 'http');
			if (!http.length) {
				void showInfo('kin: no http MCP server to sign in to.');
				return;
			}
			const pick = await vscode.window.showQuickPick(
				http.map((s) => ({ ...serverItem(s), value: s.name })),
				{ title: 'kin: sign in to an MCP server' },
			);
			if (!pick) {
				return;
			}
			name = pick.value;
		}
		const r = await vscode.window.withProgress(
			{ location: vscode.ProgressLocation.Notification, title: `kin: signing in to ${name}… (answer the sign-in link)`, cancellable: true },
			(_p, token) => this.service.request<McpLoginResult>('mcp/login', { name }, abortOn(token)),
		);
		void showInfo(`kin: ${name} is ${r.state}.`);
	}

	/** The guided Add Server flow; `existing` turns it into an edit of that row. */
	async add(existing?: McpServerRow): Promise<boolean> {
		const title = existing ? `kin: edit MCP server ${existing.name}` : 'kin: add an MCP server';
		const name =
			existing?.name ??
			(await vscode.window.showInputBox({
				title: `${title} (1/4): name`,
				prompt: 'A short name; the model sees its tools as mcp__<name>__<tool>',
				ignoreFocusOut: true,
				validateInput: (v) => (/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(v) ? undefined : 'Letters, digits, - and _ only'),
			}));
		if (!name) {
			return false;
		}
		let scope: McpScope | undefined = existing?.scope === 'foreign' ? undefined : existing?.scope;
		if (!scope) {
			const s = await vscode.window.showQuickPick(
				[
					{ label: 'project', description: '.kin/mcp.json in this workspace', value: 'project' as const },
					{ label: 'global', description: '$KIN_HOME/mcp.json, for every workspace', value: 'global' as const },
				],
				{ title: `${title} (2/4): scope`, ignoreFocusOut: true },
			);
			if (!s) {
				return false;
			}
			scope = s.value;
		}
		let transport: string | undefined = existing?.transport || undefined;
		if (!transport) {
			const t = await vscode.window.showQuickPick(
				[
					{ label: 'stdio', description: 'kin starts a local command', value: 'stdio' },
					{ label: 'http', description: 'a server at a URL (Streamable HTTP)', value: 'http' },
				],
				{ title: `${title} (3/4): transport`, ignoreFocusOut: true },
			);
			if (!t) {
				return false;
			}
			transport = t.value;
		}
		const config: McpServerConfig = {};
		if (transport === 'stdio') {
			const line = await vscode.window.showInputBox({
				title: `${title} (4/4): command and arguments`,
				prompt: 'e.g. npx -y @modelcontextprotocol/server-filesystem /data   (quote arguments with spaces)',
				value: existing?.launch,
				ignoreFocusOut: true,
				validateInput: (v) => (splitArgs(v).length ? undefined : 'Enter a command'),
			});
			if (line === undefined) {
				return false;
			}
			const [command, ...args] = splitArgs(line);
			config.command = command;
			if (args.length) {
				config.args = args;
			}
			const env = await askPairs(title, 'environment variable', existing?.env);
			if (env === undefined) {
				return false;
			}
			if (Object.keys(env).length) {
				config.env = env;
			}
		} else {
			const url = await vscode.window.showInputBox({
				title: `${title} (4/4): URL`,
				prompt: 'e.g. https://mcp.example.com/mcp',
				value: existing?.launch,
				ignoreFocusOut: true,
				validateInput: (v) => (/^https?:\/\/\S+$/.test(v) ? undefined : 'Enter an http(s) URL'),
			});
			if (url === undefined) {
				return false;
			}
			config.url = url;
			const headers = await askPairs(title, 'header', existing?.headers);
			if (headers === undefined) {
				return false;
			}
			if (Object.keys(headers).length) {
				config.headers = headers;
			}
		}
		await this.service.request(existing ? 'mcp/update' : 'mcp/add', { scope, name, config } satisfies McpAddParams);
		await this.offerApply(`${name} ${existing ? 'updated' : 'added'} (${scope}).`);
		return true;
	}

	private async edit(s: McpServerRow): Promise<void> {
		await this.add(s);
	}

	/** Ends a change with a choice to apply it to the running service (mcp/apply). */
	private async offerApply(what: string): Promise<void> {
		const pick = await vscode.window.showQuickPick(
			[
				{ label: 'Apply now', description: 'reconnect the running service to match the files (mcp/apply)', value: true },
				{ label: 'Later', description: 'the change waits in the file until the next apply or restart', value: false },
			],
			{ title: `kin: ${what}`, placeHolder: 'Apply the change to the running service?', ignoreFocusOut: true },
		);
		if (pick?.value) {
			await this.apply();
		}
	}
}

/**
 * Asks for name/value pairs (env or headers) one at a time; values are typed with password
 * input, since they are usually secrets. Existing values are masked by kin, so an edit asks for
 * each again (an empty value keeps a `${NAME}` reference to the environment).
 */
async function askPairs(title: string, what: string, existing?: Record<string, string> | string[]): Promise<Record<string, string> | undefined> {
	const out: Record<string, string> = {};
	const pending = maskedNames(existing);
	for (;;) {
		let key = pending.shift();
		if (key === undefined) {
			const more = await vscode.window.showQuickPick(
				[
					{ label: `Done`, value: false },
					{ label: `Add ${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}…`, value: true },
				],
				{ title: `${title}: ${what}s (${Object.keys(out).length} so far)`, ignoreFocusOut: true },
			);
			if (!more) {
				return undefined;
			}
			if (!more.value) {
				return out;
			}
			key = await vscode.window.showInputBox({
				title: `${title}: ${what} name`,
				ignoreFocusOut: true,
				validateInput: (v) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(v) ? undefined : 'Letters, digits, - and _ only'),
			});
			if (!key) {
				continue;
			}
		}
		const value = await vscode.window.showInputBox({
			title: `${title}: value of ${key}`,
			prompt: 'Typed hidden. Leave empty to use ${' + key + '} from the environment.',
			password: true,
			ignoreFocusOut: true,
		});
		if (value === undefined) {
			return undefined;
		}
		out[key] = value === '' ? '${' + key + '}' : value;
	}
}

function abortOn(token: vscode.CancellationToken): AbortSignal {
	const ac = new AbortController();
	token.onCancellationRequested(() => ac.abort());
	return ac.signal;
}

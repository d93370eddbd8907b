// Elicitation: an MCP server asks the person something (PROTOCOL.md, Elicitation). Form mode asks
// one field at a time (a QuickPick for enums and booleans, a multi-select QuickPick for
// multi_select, an InputBox with validation for text and numbers), naming the server in the
// title, with options titled as kin sent them and defaults preselected; Escape declines the whole
// request. URL mode (and
// OAuth sign-in links) shows the URL and opens it only after the person consents.

import * as vscode from 'vscode';
import { RpcError } from './protocol/connection';
import { ElicitationField, ElicitationRequest, ElicitationResolved, ElicitationRespondParams, ErrorCodes } from './protocol/types';
import type { KinService } from './service';
import { choiceItems, fieldPrompt, fieldTitle, parseFieldValue, validateChoices, validateField } from './elicitationFields';

export class Elicitations implements vscode.Disposable {
	// open holds the unresolved requests, each with the token that closes its inputs.
	private readonly open = new Map<string, vscode.CancellationTokenSource>();
	private queue: Promise<void> = Promise.resolve();
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		private readonly service: KinService,
		private readonly output: vscode.OutputChannel,
	) {
		this.subs.push(
			service.onNotification('elicitation/request', (p: ElicitationRequest) => this.request(p)),
			service.onNotification('elicitation/resolved', (p: ElicitationResolved) => this.resolved(p)),
		);
	}

	request(p: ElicitationRequest): void {
		if (this.open.has(p.requestId)) {
			return;
		}
		const cts = new vscode.CancellationTokenSource();
		this.open.set(p.requestId, cts);
		this.queue = this.queue
			.then(() => this.ask(p, cts.token))
			.catch((err) => this.output.appendLine(`[kin] elicitation ${p.requestId}: ${String(err)}`));
	}

	private resolved(p: ElicitationResolved): void {
		const cts = this.open.get(p.requestId);
		if (cts) {
			this.open.delete(p.requestId);
			cts.cancel(); // closes an input still open for it
			cts.dispose();
		}
	}

	private async ask(p: ElicitationRequest, token: vscode.CancellationToken): Promise<void> {
		if (token.isCancellationRequested) {
			return;
		}
		if (p.mode === 'url') {
			await this.askUrl(p, token);
			return;
		}
		const content: Record<string, unknown> = {};
		const fields = p.fields ?? [];
		for (const [i, f] of fields.entries()) {
			const value = await askField(p, f, i, fields.length, token);
			if (token.isCancellationRequested) {
				return;
			}
			if (value === CANCELLED) {
				await this.respond(p.requestId, { action: 'decline' });
				return;
			}
			if (value !== undefined) {
				content[f.name] = value;
			}
		}
		await this.respond(p.requestId, { action: 'accept', content });
	}

	private async askUrl(p: ElicitationRequest, token: vscode.CancellationToken): Promise<void> {
		const server = p.server ?? 'An MCP server';
		const what = p.purpose === 'oauth' ? `${server} needs you to sign in` : `${server} asks you to open a link`;
		const open: vscode.MessageItem = { title: 'Open link' };
		const decline: vscode.MessageItem = { title: 'Decline', isCloseAffordance: true };
		const detail = [p.message, '', p.url, '', 'kin never opens or fetches this link itself.'].filter((l) => l !== undefined).join('\n');
		const choice = await vscode.window.showInformationMessage(`kin: ${what}`, { modal: true, detail }, open, decline);
		if (token.isCancellationRequested) {
			return;
		}
		if (choice === open && p.url) {
			await vscode.env.openExternal(vscode.Uri.parse(p.url, true));
			await this.respond(p.requestId, { action: 'accept' });
			return;
		}
		await this.respond(p.requestId, { action: 'decline' });
	}

	private async respond(requestId: string, answer: Omit<ElicitationRespondParams, 'requestId'>): Promise<void> {
		const params: ElicitationRespondParams = { requestId, ...answer };
		try {
			await this.service.request('elicitation/respond', params);
		} catch (err) {
			if (err instanceof RpcError && err.code === ErrorCodes.NotFound) {
				return;
			}
			void vscode.window.showErrorMessage(`kin: ${(err as Error).message}`);
		}
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		for (const cts of this.open.values()) {
			cts.cancel();
			cts.dispose();
		}
	}
}

const CANCELLED = Symbol('cancelled');

async function askField(
	p: ElicitationRequest,
	f: ElicitationField,
	i: number,
	n: number,
	token: vscode.CancellationToken,
): Promise<unknown | typeof CANCELLED> {
	const title = fieldTitle(p, f, i, n);
	const placeHolder = fieldPrompt(p, f) || undefined;
	if (f.type === 'multi_select') {
		for (;;) {
			const picks = await vscode.window.showQuickPick(choiceItems(f), { title, placeHolder, canPickMany: true, ignoreFocusOut: true }, token);
			if (picks === undefined) {
				return CANCELLED;
			}
			const values = picks.map((x) => x.value);
			const problem = values.length === 0 && !f.required ? undefined : validateChoices(f, values);
			if (problem === undefined) {
				return values.length === 0 && !f.required ? undefined : values;
			}
			void vscode.window.showWarningMessage(`kin: ${f.title || f.name}: ${problem}`);
		}
	}
	if (f.type === 'enum') {
		const items: (vscode.QuickPickItem & { value?: string })[] = choiceItems(f);
		items.sort((a, b) => Number(!!(b as { picked?: boolean }).picked) - Number(!!(a as { picked?: boolean }).picked));
		if (!f.required) {
			items.push({ label: '(leave empty)', value: undefined });
		}
		const pick = await vscode.window.showQuickPick(items, { title, placeHolder, ignoreFocusOut: true }, token);
		return pick === undefined ? CANCELLED : pick.value;
	}
	if (f.type === 'boolean') {
		const items: (vscode.QuickPickItem & { value?: boolean })[] = [
			{ label: 'Yes', value: true },
			{ label: 'No', value: false },
		];
		if (f.default === true || f.default === false) {
			items.sort((a) => (a.value === f.default ? -1 : 1));
		}
		if (!f.required) {
			items.push({ label: '(leave empty)', value: undefined });
		}
		const pick = await vscode.window.showQuickPick(items, { title, placeHolder, ignoreFocusOut: true }, token);
		return pick === undefined ? CANCELLED : pick.value;
	}
	const text = await vscode.window.showInputBox(
		{
			title,
			prompt: placeHolder,
			value: f.default !== undefined ? String(f.default) : undefined,
			ignoreFocusOut: true,
			validateInput: (v) => validateField(f, v),
		},
		token,
	);
	if (text === undefined) {
		return CANCELLED;
	}
	return parseFieldValue(f, text);
}

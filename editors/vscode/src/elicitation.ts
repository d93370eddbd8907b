// Elicitation: an MCP server asks the person something (PROTOCOL.md, Elicitation). Form mode asks
// one field at a time (a QuickPick for enums and booleans, a multi-select QuickPick for
// multi_select, an InputBox with validation for text and numbers), naming the server in the
// title, with options titled as kin sent them and defaults preselected; Escape declines the whole
// request. URL mode (and OAuth sign-in links) is a card in the chat's dock showing the whole URL:
// Decline is its default (Enter, Escape); Open link hands the URL to VS Code, which asks before
// opening a site the person has not trusted, and only a link VS Code really opened is `accept`.

import * as vscode from 'vscode';
import { linkCard, notificationText, type WaitingCard } from './approvalText';
import type { CardHost } from './approvals';
import { errorText } from './errorText';
import { RpcError } from './protocol/connection';
import { ElicitationField, ElicitationRequest, ElicitationResolved, ElicitationRespondParams, ErrorCodes } from './protocol/types';
import type { KinService } from './service';
import { choiceItems, fieldPrompt, fieldTitle, parseFieldValue, validateChoices, validateField } from './elicitationFields';

export class Elicitations implements vscode.Disposable {
	// open holds the unresolved requests, each with the token that closes its inputs.
	private readonly open = new Map<string, vscode.CancellationTokenSource>();
	// links holds the URL requests shown as cards, by requestId, oldest first.
	private readonly links = new Map<string, ElicitationRequest>();
	private readonly answering = new Set<string>();
	private queue: Promise<void> = Promise.resolve();
	private readonly subs: vscode.Disposable[] = [];
	private readonly changed = new vscode.EventEmitter<void>();
	host: CardHost | undefined;
	/** Fires when the link cards change. */
	readonly onDidChangeCards = this.changed.event;

	constructor(
		private readonly service: KinService,
		private readonly output: vscode.OutputChannel,
	) {
		this.subs.push(
			service.onNotification('elicitation/request', (p: ElicitationRequest) => this.request(p)),
			service.onNotification('elicitation/resolved', (p: ElicitationResolved) => this.resolved(p)),
			service.onDidChangeState((s) => {
				if (s !== 'ready' && this.open.size) {
					// The service went away and declined everything that waited (PROTOCOL.md).
					for (const requestId of [...this.open.keys()]) {
						this.resolved({ requestId, action: 'cancel', reason: 'disconnected' });
					}
				}
			}),
		);
	}

	request(p: ElicitationRequest): void {
		if (this.open.has(p.requestId)) {
			return;
		}
		const cts = new vscode.CancellationTokenSource();
		this.open.set(p.requestId, cts);
		if (p.mode === 'url') {
			this.links.set(p.requestId, p);
			this.changed.fire();
			if (!this.host?.visible) {
				void vscode.window.showWarningMessage(notificationText(linkCard(p)), 'Review').then((c) => {
					if (c === 'Review' && this.links.has(p.requestId)) {
						void this.host?.reveal(p.requestId);
					}
				});
			}
			return;
		}
		this.queue = this.queue
			.then(() => this.ask(p, cts.token))
			.catch((err) => this.output.appendLine(`[kin] elicitation ${p.requestId}: ${String(err)}`));
	}

	/** The link cards to draw, oldest first. */
	cards(): (WaitingCard & { answering: boolean })[] {
		return [...this.links.values()].map((p) => ({ ...linkCard(p), answering: this.answering.has(p.requestId) }));
	}

	/**
	 * The person's choice on a link card. `open` hands the URL to VS Code; kin hears `accept` only
	 * when VS Code opened it (cancelling VS Code's own "open external website?" is a decline).
	 */
	async answerLink(requestId: string, choice: string): Promise<void> {
		const p = this.links.get(requestId);
		if (!p || this.answering.has(requestId)) {
			return;
		}
		this.answering.add(requestId);
		this.changed.fire();
		let action: 'accept' | 'decline' = 'decline';
		if (choice === 'open' && p.url) {
			let opened = false;
			try {
				// VS Code asks first for a site the person has not trusted; false: they cancelled.
				opened = await vscode.env.openExternal(vscode.Uri.parse(p.url, true));
			} catch (err) {
				this.output.appendLine(`[kin] opening ${p.url}: ${String(err)}`);
			}
			action = opened ? 'accept' : 'decline';
			this.output.appendLine(`[kin] ${p.server}: the link was ${opened ? 'opened' : 'not opened'}; answering ${action}`);
		}
		const ok = await this.respond(requestId, { action });
		if (!ok) {
			this.answering.delete(requestId);
			this.changed.fire();
		}
	}

	private resolved(p: ElicitationResolved): void {
		this.answering.delete(p.requestId);
		if (this.links.delete(p.requestId)) {
			this.changed.fire();
		}
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

	/** Sends the answer; false when it did not reach kin (the request stays open). */
	private async respond(requestId: string, answer: Omit<ElicitationRespondParams, 'requestId'>): Promise<boolean> {
		const params: ElicitationRespondParams = { requestId, ...answer };
		try {
			await this.service.request('elicitation/respond', params);
			return true;
		} catch (err) {
			if (err instanceof RpcError && err.code === ErrorCodes.NotFound) {
				return true;
			}
			void vscode.window.showErrorMessage(errorText(err));
			return false;
		}
	}

	dispose(): void {
		this.changed.dispose();
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
			void vscode.window.showWarningMessage(errorText(`${f.title || f.name}: ${problem}`));
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

// Elicitation: an MCP server asks the person something (PROTOCOL.md, Elicitation). Form mode asks
// one field at a time in kin's order (the server's), each in a quick input of its own naming the
// server and the field in its title, with the field's description and limits under it, options
// titled as kin sent them and defaults preselected: a QuickPick for enums and booleans, a
// multi-select QuickPick for multi_select, an InputBox checked as the person types (lengths,
// ranges, patterns, real dates, date-times, emails, URIs) for text and numbers. Every step has Back
// (to the previous field) and All fields (an overview of every field with its answer, where any
// field can be changed, then Send). Escape declines the whole request. When kin refuses some
// fields, only those are asked again, the rest kept; a form kin closes (its call ended, its turn
// was cancelled, its server went away) is closed here, saying why.
// Nothing opens by itself: every request is first a card in the chat's dock (a notification leads
// to it when the chat is hidden), because a quick input takes the keyboard, and whoever was typing
// in an editor would type into the form and send it with Enter. A form's card names who asks
// (the server, or kin's model through its ask tool): Decline is its default (Enter, Escape),
// Cancel dismisses it, Answer… opens the inputs above. URL mode (and OAuth sign-in links) is a
// card showing the whole URL: Decline is its default; Open link hands the URL to VS Code, which
// asks before opening a site the person has not trusted, and only a link VS Code really opened is
// `accept`.

import * as vscode from 'vscode';
import { formCard, linkCard, notificationText, type WaitingCard } from './approvalText';
import type { CardHost } from './approvals';
import { errorText } from './errorText';
import { RpcError } from './protocol/connection';
import { ElicitationAnswerError, ElicitationField, ElicitationRequest, ElicitationResolved, ElicitationRespondParams, ErrorCodes } from './protocol/types';
import type { KinService } from './service';
import { noLinks, showError, showWarning } from './notify';
import {
	asker,
	choiceItems,
	fieldPrompt,
	fieldTitle,
	overviewItems,
	parseFieldValue,
	reasonText,
	refusedFields,
	validateChoices,
	validateField,
	type OverviewItem,
} from './elicitationFields';

export class Elicitations implements vscode.Disposable {
	// open holds the unresolved requests, each with the token that closes its inputs.
	private readonly open = new Map<string, vscode.CancellationTokenSource>();
	// waiting holds the requests shown as cards (forms and links), by requestId, oldest first.
	private readonly waiting = new Map<string, ElicitationRequest>();
	// answering holds the cards being answered: an answer on its way, or a form's inputs open.
	private readonly answering = new Set<string>();
	private queue: Promise<void> = Promise.resolve();
	private readonly subs: vscode.Disposable[] = [];
	private readonly changed = new vscode.EventEmitter<void>();
	host: CardHost | undefined;
	/** Fires when the cards change. */
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
		this.waiting.set(p.requestId, p);
		this.changed.fire();
		if (!this.host?.visible) {
			const card = cardOf(p);
			this.output.appendLine(`[kin] the chat is hidden: a notification says ${p.requestId} waits`);
			void showWarning(notificationText(card), 'Review').then((c) => {
				if (c === 'Review' && this.waiting.has(p.requestId)) {
					void this.host?.reveal(p.requestId);
				}
			});
		}
	}

	/** The cards to draw (forms and links), oldest first. */
	cards(): (WaitingCard & { answering: boolean })[] {
		return [...this.waiting.values()].map((p) => ({ ...cardOf(p), answering: this.answering.has(p.requestId) }));
	}

	/**
	 * The person's choice on a card. A form's `answer` opens its inputs (one form at a time; the
	 * card waits, its buttons off, until they close); `decline` and `cancel` answer so. A link's
	 * `open` hands the URL to VS Code; kin hears `accept` only when VS Code opened it (cancelling
	 * VS Code's own "open external website?" is a decline).
	 */
	async answer(requestId: string, choice: string): Promise<void> {
		const p = this.waiting.get(requestId);
		if (!p || this.answering.has(requestId)) {
			return;
		}
		this.answering.add(requestId);
		this.changed.fire();
		if (p.mode !== 'url') {
			if (choice === 'answer') {
				const token = this.open.get(requestId)!.token;
				this.queue = this.queue
					.then(() => this.ask(p, token))
					.catch((err) => {
						this.output.appendLine(`[kin] elicitation ${p.requestId}: ${String(err)}`);
						return false;
					})
					.then((done) => {
						if (!done) {
							this.again(requestId);
						}
					});
				return this.queue;
			}
			const ok = await this.respond(requestId, { action: choice === 'cancel' ? 'cancel' : 'decline' });
			if (!ok) {
				this.again(requestId);
			}
			return;
		}
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
			this.again(requestId);
		}
	}

	/** A card whose answer did not reach kin (or whose form closed unsent) can be answered again. */
	private again(requestId: string): void {
		if (this.answering.delete(requestId) && this.waiting.has(requestId)) {
			this.changed.fire();
		}
	}

	private resolved(p: ElicitationResolved): void {
		this.answering.delete(p.requestId);
		// A form names who asked when kin closes it.
		const req = this.waiting.get(p.requestId);
		const form = req?.mode !== 'url' ? req : undefined;
		if (this.waiting.delete(p.requestId)) {
			this.changed.fire();
		}
		const cts = this.open.get(p.requestId);
		if (cts) {
			this.open.delete(p.requestId);
			cts.cancel(); // closes an input still open for it
			cts.dispose();
			if (form && p.reason !== 'person') {
				void showWarning(`kin closed the question from ${asker(form)}: ${reasonText(p.reason)}`);
			}
		}
	}

	/**
	 * Asks a form: each field in kin's order (one step each, with Back to the previous one and an
	 * overview of them all), then sends it. When kin refuses some fields (-32602 with data.fields),
	 * only those are asked again, starting from what was typed, and the rest is kept. Escape
	 * declines the whole request; a form kin resolves meanwhile closes (token). Returns whether
	 * the request is done with (false: kin did not take the answer, and its card is live again).
	 */
	private async ask(p: ElicitationRequest, token: vscode.CancellationToken): Promise<boolean> {
		const fields = p.fields ?? [];
		const content: Record<string, unknown> = {};
		let problems = new Map<string, string>();
		let todo = fields;
		for (;;) {
			const outcome = await this.fill(p, todo, content, problems, token);
			if (outcome === 'closed' || token.isCancellationRequested) {
				return true;
			}
			if (outcome === 'decline') {
				return this.respond(p.requestId, { action: 'decline' });
			}
			const sent = await this.send(p.requestId, { action: 'accept', content: answered(fields, content) });
			if (sent === true || token.isCancellationRequested) {
				return true;
			}
			const refused = refusedFields(p, sent);
			if (refused.redo.length === 0) {
				return false; // kin refused it otherwise (said already); the request stays open on kin's side: its card can be answered again
			}
			problems = refused.problems;
			todo = fields.filter((f) => problems.has(f.name));
			const lines = [...problems].map(([name, why]) => `${fields.find((f) => f.name === name)?.title || name} ${why}`);
			void showWarning(`kin refused part of your answer (the rest is kept): ${lines.join('; ')}`);
		}
	}

	/**
	 * Walks the fields of todo one by one into content (Back goes to the previous one), and the
	 * overview when the person asks for it; returns how the person left the form.
	 */
	private async fill(
		p: ElicitationRequest,
		todo: ElicitationField[],
		content: Record<string, unknown>,
		problems: Map<string, string>,
		token: vscode.CancellationToken,
	): Promise<'send' | 'decline' | 'closed'> {
		const fields = p.fields ?? [];
		let i = 0;
		while (i < todo.length) {
			const f = todo[i];
			const step = await askField(p, f, fields.indexOf(f), fields.length, content[f.name], problems.get(f.name), { back: i > 0, overview: fields.length > 1 }, token);
			switch (step.kind) {
				case 'closed':
					return 'closed';
				case 'cancel':
					return 'decline';
				case 'back':
					i--;
					continue;
				case 'overview':
					return this.overview(p, content, problems, token);
				case 'value':
					content[f.name] = step.value;
					problems.delete(f.name);
					i++;
			}
		}
		return 'send';
	}

	/** The overview of the form: pick a field to change it, Send, or Decline. */
	private async overview(p: ElicitationRequest, content: Record<string, unknown>, problems: Map<string, string>, token: vscode.CancellationToken): Promise<'send' | 'decline' | 'closed'> {
		const fields = p.fields ?? [];
		for (;;) {
			const pick = await pickOverview(p, overviewItems(p, answered(fields, content), problems), token);
			if (pick === 'closed') {
				return 'closed';
			}
			if (pick === undefined || pick.action === 'decline') {
				return 'decline';
			}
			if (pick.action === 'send') {
				const missing = fields.filter((f) => f.required && answered(fields, content)[f.name] === undefined);
				if (missing.length === 0) {
					return 'send';
				}
				void showWarning(`Still to answer: ${missing.map((f) => f.title || f.name).join(', ')}`);
				continue;
			}
			const f = fields.find((x) => x.name === pick.field);
			if (!f) {
				continue;
			}
			const step = await askField(p, f, fields.indexOf(f), fields.length, content[f.name], problems.get(f.name), { back: true, overview: false }, token);
			if (step.kind === 'closed') {
				return 'closed';
			}
			if (step.kind === 'value') {
				content[f.name] = step.value;
				problems.delete(f.name);
			}
		}
	}

	/** Sends the answer; false when it did not reach kin (the request stays open). */
	private async respond(requestId: string, answer: Omit<ElicitationRespondParams, 'requestId'>): Promise<boolean> {
		return (await this.send(requestId, answer)) === true;
	}

	/**
	 * Sends the answer: true when kin took it (or had resolved the request already), else the
	 * error's data when kin refused the content (-32602: which fields), else false (said already).
	 */
	private async send(requestId: string, answer: Omit<ElicitationRespondParams, 'requestId'>): Promise<true | false | ElicitationAnswerError> {
		const params: ElicitationRespondParams = { requestId, ...answer };
		try {
			await this.service.request('elicitation/respond', params);
			return true;
		} catch (err) {
			if (err instanceof RpcError && err.code === ErrorCodes.NotFound) {
				return true;
			}
			if (err instanceof RpcError && err.code === ErrorCodes.InvalidParams && err.data) {
				return err.data as ElicitationAnswerError;
			}
			void showError(errorText(err));
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

/** What the content holds to send: only answered fields (an empty answer leaves a field out). */
function answered(fields: ElicitationField[], content: Record<string, unknown>): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const f of fields) {
		if (content[f.name] !== undefined) {
			out[f.name] = content[f.name];
		}
	}
	return out;
}

/**
 * The end of a quick input that answers once: the first call disposes its listeners (subs),
 * hides and disposes the input, and resolves with r; later calls (the hide it causes, a late
 * cancellation) do nothing.
 */
function once<T>(subs: vscode.Disposable[], input: () => vscode.QuickInput, resolve: (r: T) => void): (r: T) => void {
	let done = false;
	return (r: T) => {
		if (done) {
			return;
		}
		done = true;
		subs.forEach((d) => d.dispose());
		input().hide();
		input().dispose();
		resolve(r);
	};
}

/** How one step of a form ended. */
type Step = { kind: 'value'; value: unknown } | { kind: 'back' } | { kind: 'overview' } | { kind: 'cancel' } | { kind: 'closed' };

const OVERVIEW: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('list-unordered'), tooltip: 'All fields' };

type FieldItem = vscode.QuickPickItem & { value?: unknown };

/**
 * Asks field f (field i of n) in a quick input of its own: a QuickPick for choices and booleans
 * (a multi-select one for multi_select), an InputBox checked as the person types for text and
 * numbers. It starts from start (what was answered before), else the field's default, and shows
 * problem (kin's refusal) until the answer changes. Back and All fields (nav) leave it without
 * an answer; Escape is 'cancel'; the token (kin resolved the request) closes it.
 */
function askField(
	p: ElicitationRequest,
	f: ElicitationField,
	i: number,
	n: number,
	start: unknown,
	problem: string | undefined,
	nav: { back: boolean; overview: boolean },
	token: vscode.CancellationToken,
): Promise<Step> {
	return new Promise<Step>((resolve) => {
		const subs: vscode.Disposable[] = [];
		let w: vscode.QuickPick<FieldItem> | vscode.InputBox;
		const finish = once(subs, () => w, resolve);
		const title = f.title || f.name;
		const prompt = fieldPrompt(p, f) || undefined;
		const initial = start !== undefined ? start : f.default;
		if (f.type === 'string' || f.type === 'integer' || f.type === 'number') {
			const box = vscode.window.createInputBox();
			w = box;
			box.value = initial !== undefined ? String(initial) : '';
			// VS Code makes links of `[label](command:…)` in both (notify.ts): the texts are the asker's.
			const check = (v: string) => {
				const m = validateField(f, v);
				return m === undefined ? undefined : noLinks(m);
			};
			box.prompt = prompt === undefined ? undefined : noLinks(prompt);
			box.validationMessage = problem ? noLinks(`${title} ${problem}`) : undefined;
			subs.push(
				box.onDidChangeValue((v) => (box.validationMessage = check(v))),
				box.onDidAccept(() => {
					const m = check(box.value);
					if (m) {
						box.validationMessage = m;
						return;
					}
					finish({ kind: 'value', value: parseFieldValue(f, box.value) });
				}),
			);
		} else {
			const qp = vscode.window.createQuickPick<FieldItem>();
			w = qp;
			qp.placeholder = problem ? `${title} ${problem}` : prompt;
			qp.matchOnDescription = true;
			let items: FieldItem[];
			if (f.type === 'boolean') {
				items = [
					{ label: 'Yes', value: true, description: f.default === true ? 'default' : undefined },
					{ label: 'No', value: false, description: f.default === false ? 'default' : undefined },
				];
			} else {
				items = choiceItems(f);
			}
			if (f.type !== 'multi_select' && !f.required) {
				items.push({ label: '(leave empty)', value: undefined });
			}
			qp.items = items;
			if (f.type === 'multi_select') {
				qp.canSelectMany = true;
				const chosen = new Set(Array.isArray(initial) ? initial.map(String) : []);
				qp.selectedItems = items.filter((x) => chosen.has(String(x.value)));
			} else {
				const current = items.find((x) => x.value === initial && initial !== undefined);
				if (current) {
					qp.activeItems = [current];
				}
			}
			subs.push(
				qp.onDidAccept(() => {
					if (f.type === 'multi_select') {
						const values = qp.selectedItems.map((x) => String(x.value));
						const bad = values.length === 0 && !f.required ? undefined : validateChoices(f, values);
						if (bad) {
							qp.placeholder = `${title}: ${bad}`;
							void showWarning(errorText(`${title}: ${bad}`));
							return;
						}
						finish({ kind: 'value', value: values.length === 0 && !f.required ? undefined : values });
						return;
					}
					const pick = qp.selectedItems[0] ?? qp.activeItems[0];
					if (pick) {
						finish({ kind: 'value', value: pick.value });
					}
				}),
			);
		}
		w.title = fieldTitle(p, f, i, n);
		w.ignoreFocusOut = true;
		w.buttons = [...(nav.back ? [vscode.QuickInputButtons.Back] : []), ...(nav.overview ? [OVERVIEW] : [])];
		subs.push(
			w.onDidTriggerButton((b) => finish(b === vscode.QuickInputButtons.Back ? { kind: 'back' } : { kind: 'overview' })),
			w.onDidHide(() => finish({ kind: token.isCancellationRequested ? 'closed' : 'cancel' })),
			token.onCancellationRequested(() => finish({ kind: 'closed' })),
		);
		if (token.isCancellationRequested) {
			finish({ kind: 'closed' });
			return;
		}
		w.show();
	});
}

/** The form's overview: a QuickPick of Send, every field with its answer, and Decline. */
function pickOverview(p: ElicitationRequest, items: OverviewItem[], token: vscode.CancellationToken): Promise<OverviewItem | undefined | 'closed'> {
	return new Promise((resolve) => {
		const qp = vscode.window.createQuickPick<OverviewItem & vscode.QuickPickItem>();
		const subs: vscode.Disposable[] = [];
		const finish = once(subs, () => qp, resolve);
		qp.title = `${asker(p)} asks: ${p.message || 'a form'} (all fields)`;
		qp.placeholder = 'Pick a field to change it, or Send';
		qp.items = items;
		qp.ignoreFocusOut = true;
		qp.matchOnDescription = true;
		qp.matchOnDetail = true;
		subs.push(
			qp.onDidAccept(() => finish(qp.selectedItems[0] ?? qp.activeItems[0])),
			qp.onDidHide(() => finish(token.isCancellationRequested ? 'closed' : undefined)),
			token.onCancellationRequested(() => finish('closed')),
		);
		qp.show();
	});
}

/** A request's card: a link's (URL mode, OAuth sign-in) or a form's. */
function cardOf(p: ElicitationRequest): WaitingCard {
	return p.mode === 'url' ? linkCard(p) : formCard(p);
}

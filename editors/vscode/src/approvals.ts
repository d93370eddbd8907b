// Approvals as cards in the chat view. Every approval/request kin sends is kept here until kin
// resolves it; the chat's dock shows each as a card (approvalText.ts) with kin's options, deny
// first and the default for Enter and Escape. Nothing here is modal: a file change's diff opens in
// a diff editor beside the chat, which the person can scroll to its last line before answering.
// When the chat is hidden a notification says something waits, and leads to the card.

import * as vscode from 'vscode';
import { approvalCard, notificationText, respondParams, type WaitingCard } from './approvalText';
import type { DiffDocuments } from './diffDocuments';
import { errorText } from './errorText';
import { RpcError } from './protocol/connection';
import { ApprovalRequest, ApprovalRespondParams, ApprovalResolved, ErrorCodes } from './protocol/types';
import type { KinService } from './service';
import { showError, showWarning } from './notify';

/** What the chat view offers the approvals: whether a person can see it, and a way to show a card. */
export interface CardHost {
	readonly visible: boolean;
	/** Shows the chat with the card focused (its deny button). */
	reveal(requestId: string): Promise<void>;
}

export class Approvals implements vscode.Disposable {
	// open holds the requests kin sent and has not resolved yet, by requestId, oldest first, each
	// with its card (a request never changes, so its card is made once, not on every redraw).
	private readonly open = new Map<string, { p: ApprovalRequest; card: WaitingCard }>();
	// answering holds the requests whose answer is on its way (their buttons are disabled).
	private readonly answering = new Set<string>();
	private readonly changed = new vscode.EventEmitter<number>();
	private readonly subs: vscode.Disposable[] = [];
	host: CardHost | undefined;
	/** Fires with the number of approvals still waiting (and whenever a card changes). */
	readonly onDidChangeWaiting = this.changed.event;

	constructor(
		private readonly service: KinService,
		private readonly diffs: DiffDocuments,
		private readonly output: vscode.OutputChannel,
	) {
		this.subs.push(
			service.onNotification('approval/request', (p: ApprovalRequest) => this.request(p)),
			service.onNotification('approval/resolved', (p: ApprovalResolved) => this.resolved(p)),
			service.onDidChangeState((s) => {
				if (s !== 'ready' && this.open.size) {
					// The service went away: it denies everything that waited (PROTOCOL.md).
					for (const id of this.open.keys()) {
						void this.diffs.close(id);
					}
					this.open.clear();
					this.answering.clear();
					this.changed.fire(0);
				}
			}),
		);
	}

	get waiting(): number {
		return this.open.size;
	}

	/** Whether the request is one of the approvals still waiting. */
	has(requestId: string): boolean {
		return this.open.has(requestId);
	}

	/** The cards to draw, oldest first. */
	cards(): (WaitingCard & { answering: boolean })[] {
		return [...this.open.values()].map(({ card }) => ({ ...card, answering: this.answering.has(card.requestId) }));
	}

	/**
	 * Shows a request. One kin sends again with the same requestId (what it proposes changed while
	 * it waited, such as the diff of a file typed into) replaces its card in place, and its open
	 * diff editors show the new diff; one re-sent unchanged (session/resume's `pending`) changes
	 * nothing.
	 */
	request(p: ApprovalRequest): void {
		const had = this.open.get(p.requestId);
		if (had) {
			if (JSON.stringify(had.p) === JSON.stringify(p)) {
				return;
			}
			this.open.set(p.requestId, { p, card: approvalCard(p) });
			this.changed.fire(this.open.size);
			if (p.diffs?.length && this.diffs.isOpen(p.requestId)) {
				void this.openDiff(p.requestId);
			}
			return;
		}
		const card = approvalCard(p);
		this.open.set(p.requestId, { p, card });
		this.changed.fire(this.open.size);
		if (p.diffs?.length && vscode.workspace.getConfiguration('kin').get<boolean>('openDiffOnApproval', true)) {
			void this.openDiff(p.requestId);
		}
		if (!this.host?.visible) {
			this.output.appendLine(`[kin] the chat is hidden: a notification says ${p.requestId} waits`);
			void showWarning(notificationText(card), 'Review').then((c) => {
				if (c === 'Review' && this.open.has(p.requestId)) {
					void this.host?.reveal(p.requestId);
				}
			});
		}
	}

	/** Opens the diff editors of a request, beside the editor in use, without taking focus. */
	async openDiff(requestId: string): Promise<void> {
		const p = this.open.get(requestId)?.p;
		if (p?.diffs?.length) {
			await this.diffs.open(p.requestId, p.title, p.diffs);
		}
	}

	/** The person's choice on a card: one of the request's optionIds, given to the card's `revision`. */
	async answer(requestId: string, optionId: string, revision?: number): Promise<void> {
		const p = this.open.get(requestId)?.p;
		if (!p || this.answering.has(requestId)) {
			return;
		}
		const params: ApprovalRespondParams = respondParams(p, optionId, revision);
		this.answering.add(requestId);
		this.changed.fire(this.open.size);
		try {
			await this.service.request('approval/respond', params);
		} catch (err) {
			if (err instanceof RpcError && err.code === ErrorCodes.NotFound) {
				return; // already resolved (a cancelled turn); approval/resolved takes the card away
			}
			this.answering.delete(requestId);
			this.changed.fire(this.open.size);
			this.output.appendLine(`[kin] approval ${requestId}: ${String(err)}`);
			void showError(errorText(err));
		}
	}

	private resolved(p: ApprovalResolved): void {
		this.answering.delete(p.requestId);
		if (this.open.delete(p.requestId)) {
			this.changed.fire(this.open.size);
		}
		void this.diffs.close(p.requestId);
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		this.changed.dispose();
	}
}

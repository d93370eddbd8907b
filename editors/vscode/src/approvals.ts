// Approvals as editor dialogs. Every approval/request kin sends is shown as a modal warning naming
// what would happen; the person's choice goes back as approval/respond. Closing the dialog (or
// Escape) denies. Requests are shown one at a time, and a request kin resolved while it waited
// in the queue (turn cancelled, a grant answered it) is skipped.

import * as vscode from 'vscode';
import type { DiffDocuments } from './diffDocuments';
import { RpcError } from './protocol/connection';
import { ApprovalRequest, ApprovalRespondParams, ApprovalResolved, ErrorCodes } from './protocol/types';
import { REVIEW_DIFF, buttonsFor, dialogDetail, dialogMessage } from './approvalText';
import type { KinService } from './service';

export class Approvals implements vscode.Disposable {
	// open holds the requests kin sent and has not resolved yet, by requestId.
	private readonly open = new Map<string, ApprovalRequest>();
	private queue: Promise<void> = Promise.resolve();
	private readonly changed = new vscode.EventEmitter<number>();
	private readonly subs: vscode.Disposable[] = [];
	/** Fires with the number of approvals still waiting. */
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
					this.open.clear();
					this.changed.fire(0);
				}
			}),
		);
	}

	get waiting(): number {
		return this.open.size;
	}

	/** Shows a request (also one re-sent by session/resume's `pending`). */
	request(p: ApprovalRequest): void {
		if (this.open.has(p.requestId)) {
			return;
		}
		this.open.set(p.requestId, p);
		this.changed.fire(this.open.size);
		this.queue = this.queue.then(() => this.ask(p)).catch((err) => this.output.appendLine(`[kin] approval ${p.requestId}: ${String(err)}`));
	}

	private resolved(p: ApprovalResolved): void {
		if (this.open.delete(p.requestId)) {
			this.changed.fire(this.open.size);
		}
		this.diffs.forget(p.requestId);
	}

	private async ask(p: ApprovalRequest): Promise<void> {
		for (;;) {
			if (!this.open.has(p.requestId)) {
				return; // resolved while it waited its turn
			}
			const buttons = buttonsFor(p);
			const items: (vscode.MessageItem & { optionId?: string })[] = buttons.map((b) => ({
				title: b.title,
				optionId: b.optionId,
				isCloseAffordance: b.close,
			}));
			const choice = await vscode.window.showWarningMessage(dialogMessage(p), { modal: true, detail: dialogDetail(p) }, ...items);
			if (choice?.title === REVIEW_DIFF && p.diffs?.length) {
				await this.diffs.open(p.requestId, p.title, p.diffs);
				continue; // ask again, with the diff in view
			}
			await this.respond(p.requestId, choice?.optionId ?? buttons[0].optionId ?? 'deny');
			return;
		}
	}

	private async respond(requestId: string, decision: string): Promise<void> {
		const params: ApprovalRespondParams = { requestId, decision };
		try {
			await this.service.request('approval/respond', params);
		} catch (err) {
			if (err instanceof RpcError && err.code === ErrorCodes.NotFound) {
				return; // already resolved (a cancelled turn); nothing to do
			}
			throw err;
		}
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		this.changed.dispose();
	}
}

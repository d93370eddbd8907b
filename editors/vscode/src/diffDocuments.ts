// Virtual documents for reviewing a proposed file change before approving it: the old text (what
// the person sees: kin diffs against the editor's buffer) and the new text of each diff in an
// approval/request, opened with `vscode.diff` beside the editor in use, without taking focus and
// without blocking anything: the card in the chat waits for the answer meanwhile. A request kin
// sends again with a changed diff (same requestId) updates the open editors in place. Also the
// "before the turn" side of a changed file's diff (turnEdits.ts).

import * as path from 'path';
import * as vscode from 'vscode';
import type { FileDiff } from './protocol/types';

export const DIFF_SCHEME = 'kin-diff';

export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
	// texts holds the contents served, by the URI's path (`/<requestId>/<i>/<side>/<file>`, or
	// `/turn/<turnId>/<path>/<file>`).
	private readonly texts = new Map<string, string>();
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;

	provideTextDocumentContent(uri: vscode.Uri): string {
		return this.texts.get(uri.path) ?? '';
	}

	/** Opens one diff editor per changed file; returns how many were opened. */
	async open(requestId: string, title: string, diffs: FileDiff[]): Promise<number> {
		let n = 0;
		const column = vscode.window.activeTextEditor ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
		for (const [i, d] of diffs.entries()) {
			const base = path.basename(d.path) || 'file';
			const left = this.put(`/${encodeURIComponent(requestId)}/${i}/old/${base}`, d.oldText ?? '');
			const right = this.put(`/${encodeURIComponent(requestId)}/${i}/new/${base}`, d.newText ?? '');
			await vscode.commands.executeCommand('vscode.diff', left, right, `${base}: proposed change (${title})`, {
				preview: false,
				preserveFocus: true,
				viewColumn: column,
			});
			n++;
		}
		return n;
	}

	/** Whether a request's diff texts are being served (its diff editors were opened). */
	isOpen(requestId: string): boolean {
		const prefix = `/${encodeURIComponent(requestId)}/`;
		return [...this.texts.keys()].some((k) => k.startsWith(prefix));
	}

	/** Closes the diff editors of a resolved request and forgets their texts. */
	async close(requestId: string): Promise<void> {
		const prefix = `/${encodeURIComponent(requestId)}/`;
		const tabs = vscode.window.tabGroups.all
			.flatMap((g) => g.tabs)
			.filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === DIFF_SCHEME && t.input.modified.path.startsWith(prefix));
		if (tabs.length) {
			await vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
		}
		this.forget(requestId);
	}

	/** Forgets the texts of a request once it is resolved. */
	forget(requestId: string): void {
		const prefix = `/${encodeURIComponent(requestId)}/`;
		for (const k of [...this.texts.keys()]) {
			if (k.startsWith(prefix)) {
				this.texts.delete(k);
			}
		}
	}

	/** Serves `text` at `p`; an open editor of it shows the new text. */
	put(p: string, text: string): vscode.Uri {
		const uri = vscode.Uri.from({ scheme: DIFF_SCHEME, path: p });
		const had = this.texts.get(p);
		this.texts.set(p, text);
		if (had !== undefined && had !== text) {
			this.changed.fire(uri);
		}
		return uri;
	}

	dispose(): void {
		this.changed.dispose();
	}
}

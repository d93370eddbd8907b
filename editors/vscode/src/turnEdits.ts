// kin's changes of a turn, reviewed where they are: after a turn, each file kin's tools changed
// shows every change kin made in it (a hunk) with Keep and Undo above it (CodeLens) and kin's
// lines highlighted. Undo puts the hunk's previous text back into the buffer (one undo step,
// unsaved, as kin's own edits of open buffers are); Keep leaves it and stops offering it. A hunk
// someone changed since is no longer offered (undoing it would undo their change too). The chat
// lists the files under the turn; each opens a diff from before the turn to the file now.
//
// What reaches this: the diffs in kin's turn/toolCall notifications (what the model's edit calls
// did, after the person or the mode allowed them). Nothing here writes files: Undo edits the
// buffer, and saving it stays the person's act.

import * as path from 'path';
import * as vscode from 'vscode';
import type { ChatController } from './chat/chatController';
import { firstWords, turnChanges, type UserEntry } from './chat/transcript';
import type { DiffDocuments } from './diffDocuments';
import { Hunk, hunkKey, hunks, lines, locate } from './lineDiff';
import type { KinService } from './service';
import { showInfo, showWarning } from './notify';

/** One file's review: kin's hunks of the last turn that changed it, and those settled since. */
interface Review {
	turnId: string;
	question?: string;
	/** The file before the turn, and as kin's tools left it. */
	before: string;
	left: string;
	hunks: Hunk[];
	/** Hunks kept or undone (by hunkKey). */
	settled: Set<string>;
}

export class TurnEdits implements vscode.CodeLensProvider, vscode.Disposable {
	// reviews holds, per file (its fsPath), the changes still offered for Keep or Undo.
	private readonly reviews = new Map<string, Review>();
	private readonly lensesChanged = new vscode.EventEmitter<void>();
	readonly onDidChangeCodeLenses = this.lensesChanged.event;
	private readonly added = vscode.window.createTextEditorDecorationType({
		isWholeLine: true,
		backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
		overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
		overviewRulerLane: vscode.OverviewRulerLane.Left,
	});
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		service: KinService,
		private readonly chat: ChatController,
		private readonly diffs: DiffDocuments,
	) {
		this.subs.push(
			// After the chat's reducer (registered first) has the turn's end.
			service.onNotification('turn/completed', (p) => {
				if (p.sessionId === chat.sessionId) {
					this.turnEnded(p.turnId);
				}
			}),
			vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
			vscode.workspace.onDidChangeTextDocument((e) => {
				if (this.reviews.has(e.document.uri.fsPath)) {
					this.lensesChanged.fire();
					this.decorate();
				}
			}),
			vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
			vscode.commands.registerCommand('kin.keepChange', (uri: string, key: string) => this.keep(uri, key)),
			vscode.commands.registerCommand('kin.undoChange', (uri: string, key?: string) => this.undo(uri, key)),
			vscode.commands.registerCommand('kin.keepAllChanges', (uri: string) => this.keep(uri)),
		);
	}

	/** Offers the changes of a turn that just ended (a later turn's changes to a file replace an earlier one's). */
	turnEnded(turnId: string): void {
		const changes = turnChanges(this.chat.state.entries, turnId);
		if (!changes.length) {
			return;
		}
		const q = this.chat.state.entries.find((e): e is UserEntry => e.type === 'user' && e.turnId === turnId)?.text;
		for (const c of changes) {
			this.reviews.set(vscode.Uri.file(c.path).fsPath, {
				turnId,
				question: q ? firstWords(q) : undefined,
				before: c.before,
				left: c.after,
				hunks: hunks(lines(c.before), lines(c.after)),
				settled: new Set(),
			});
		}
		this.lensesChanged.fire();
		this.decorate();
	}

	/** Opens a diff of a file a turn changed: before the turn, and the file now (its buffer). */
	async openTurnDiff(turnId: string, file: string): Promise<void> {
		const c = turnChanges(this.chat.state.entries, turnId).find((x) => x.path === file);
		if (!c) {
			void showInfo(`kin: the transcript no longer has the change of ${file}.`);
			return;
		}
		const q = this.chat.state.entries.find((e): e is UserEntry => e.type === 'user' && e.turnId === turnId)?.text;
		const base = path.basename(file) || 'file';
		const left = this.diffs.put(`/turn/${encodeURIComponent(turnId)}/${encodeURIComponent(file)}/${base}`, c.before);
		await vscode.commands.executeCommand('vscode.diff', left, vscode.Uri.file(file), `${base}: before ${q ? `“${firstWords(q)}”` : turnId} ↔ now`, { preview: true });
	}

	/** The hunks of a document still offered, where they are now. */
	private located(doc: vscode.TextDocument): { review: Review; at: { hunk: Hunk; line: number }[] } | undefined {
		const review = this.reviews.get(doc.uri.fsPath);
		if (!review) {
			return undefined;
		}
		const open = review.hunks.filter((h) => !review.settled.has(hunkKey(h)));
		return { review, at: locate(open, lines(review.left), docLines(doc)) };
	}

	provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
		const r = this.located(doc);
		if (!r || !r.at.length) {
			return [];
		}
		const uri = doc.uri.toString();
		const out: vscode.CodeLens[] = [];
		if (r.at.length > 1) {
			const top = new vscode.Range(0, 0, 0, 0);
			out.push(
				new vscode.CodeLens(top, { title: `kin changed ${r.at.length} places${r.review.question ? ` (“${r.review.question}”)` : ''}:`, command: '' }),
				new vscode.CodeLens(top, { title: 'Keep all', command: 'kin.keepAllChanges', arguments: [uri], tooltip: "Keep every change kin made in this file" }),
				new vscode.CodeLens(top, { title: 'Undo all', command: 'kin.undoChange', arguments: [uri], tooltip: 'Put back what was there before, in the buffer' }),
			);
		}
		for (const { hunk, line } of r.at) {
			const at = new vscode.Range(Math.min(line, doc.lineCount - 1), 0, Math.min(line, doc.lineCount - 1), 0);
			const key = hunkKey(hunk);
			out.push(
				new vscode.CodeLens(at, { title: `kin: +${hunk.newLines.length} −${hunk.oldLines.length}`, command: '' }),
				new vscode.CodeLens(at, { title: 'Keep', command: 'kin.keepChange', arguments: [uri, key], tooltip: "Keep kin's change" }),
				new vscode.CodeLens(at, { title: 'Undo', command: 'kin.undoChange', arguments: [uri, key], tooltip: 'Put back the text that was here before, in the buffer (not saved)' }),
			);
		}
		return out;
	}

	/** Keeps one change (`key`) or every change of the file. */
	private keep(uri: string, key?: string): void {
		const r = this.reviews.get(vscode.Uri.parse(uri).fsPath);
		if (!r) {
			return;
		}
		for (const h of r.hunks) {
			if (key === undefined || hunkKey(h) === key) {
				r.settled.add(hunkKey(h));
			}
		}
		this.settle(uri, r);
	}

	/** Undoes one change (`key`) or every change still offered, in the buffer, as one undo step. */
	private async undo(uri: string, key?: string): Promise<boolean> {
		const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
		const r = this.located(doc);
		const targets = (r?.at ?? []).filter((x) => key === undefined || hunkKey(x.hunk) === key);
		if (!r || !targets.length) {
			void showWarning('kin: that change is not there any more (changed since), so it was not undone.');
			return false;
		}
		const edit = new vscode.WorkspaceEdit();
		for (const t of targets) {
			replaceLines(edit, doc, t.line, t.hunk.newLines.length, t.hunk.oldLines);
		}
		if (!(await vscode.workspace.applyEdit(edit))) {
			void showWarning('kin: VS Code refused the edit; nothing was undone.');
			return false;
		}
		for (const t of targets) {
			r.review.settled.add(hunkKey(t.hunk));
		}
		this.settle(uri, r.review);
		return true;
	}

	private settle(uri: string, r: Review): void {
		if (r.hunks.every((h) => r.settled.has(hunkKey(h)))) {
			this.reviews.delete(vscode.Uri.parse(uri).fsPath);
		}
		this.lensesChanged.fire();
		this.decorate();
	}

	/** Highlights kin's lines still offered in every visible editor. */
	private decorate(): void {
		for (const ed of vscode.window.visibleTextEditors) {
			const r = this.located(ed.document);
			const ranges = (r?.at ?? [])
				.filter((x) => x.hunk.newLines.length > 0)
				.map((x) => new vscode.Range(x.line, 0, x.line + x.hunk.newLines.length - 1, 0));
			ed.setDecorations(this.added, ranges);
		}
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
		this.lensesChanged.dispose();
		this.added.dispose();
	}
}

/** A document's lines as lineDiff counts them. */
function docLines(doc: vscode.TextDocument): string[] {
	const out: string[] = [];
	for (let i = 0; i < doc.lineCount; i++) {
		out.push(doc.lineAt(i).text);
	}
	return out;
}

/** Replaces `count` lines from `start` with `text` (lines), keeping the document's line ends. */
function replaceLines(edit: vscode.WorkspaceEdit, doc: vscode.TextDocument, start: number, count: number, text: string[]): void {
	const eol = doc.eol === vscode.EndOfLine.CRLF ? '\r\n' : '\n';
	const end = start + count;
	if (end < doc.lineCount) {
		// Whole lines, each with its line end.
		edit.replace(doc.uri, new vscode.Range(start, 0, end, 0), text.map((l) => l + eol).join(''));
	} else if (start > 0) {
		// Up to the end of the document: from the end of the line before.
		const prev = doc.lineAt(start - 1).range.end;
		edit.replace(doc.uri, new vscode.Range(prev, doc.lineAt(doc.lineCount - 1).range.end), text.map((l) => eol + l).join(''));
	} else {
		edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount - 1, doc.lineAt(doc.lineCount - 1).text.length), text.join(eol));
	}
}

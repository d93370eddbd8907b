// The editor's buffers, as kin needs to see them (PROTOCOL.md, "Documents: the editor's buffers").
//
// Every open `file:` document is told to kin (didOpen / didChange / didClose, LSP's text document
// synchronisation: VS Code's change events are already LSP ranges in UTF-16), so kin's tools read
// what the person sees and an approval's diff is against it. An approved edit of an open document
// comes back as `workspace/applyEdit` and is applied to the buffer as one undoable step, never
// saved. After kin wrote a file on disk (`workspace/didChangeFiles`) the documents of it without
// unsaved changes are reloaded; one with unsaved changes is left alone.
//
// It never writes a file itself and never edits a buffer kin did not ask for.

import * as vscode from 'vscode';
import type {
	ApplyWorkspaceEditParams,
	ApplyWorkspaceEditResult,
	DidChangeFilesParams,
	DidChangeTextDocumentParams,
	DidCloseTextDocumentParams,
	DidOpenTextDocumentParams,
} from './protocol/types';
import type { KinService } from './service';

/** What this editor declares in initialize: it syncs its buffers and applies kin's edits. */
export const TEXT_DOCUMENTS = { sync: true, applyEdit: true };

export class Documents implements vscode.Disposable {
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		private readonly service: KinService,
		private readonly output: vscode.OutputChannel,
	) {
		this.subs.push(
			// A new connection knows nothing: tell it about every buffer already open.
			service.onDidBecomeReady(() => {
				for (const d of vscode.workspace.textDocuments) {
					this.opened(d);
				}
			}),
			vscode.workspace.onDidOpenTextDocument((d) => this.opened(d)),
			vscode.workspace.onDidChangeTextDocument((e) => this.changed(e)),
			vscode.workspace.onDidCloseTextDocument((d) => this.closed(d)),
			service.onRequest('workspace/applyEdit', (p: ApplyWorkspaceEditParams) => this.applyEdit(p)),
			service.onNotification('workspace/didChangeFiles', (p: DidChangeFilesParams) => void this.reload(p)),
		);
	}

	private opened(d: vscode.TextDocument): void {
		if (d.uri.scheme !== 'file') {
			return; // kin ignores untitled:, git:, output: and the like
		}
		const params: DidOpenTextDocumentParams = {
			textDocument: { uri: d.uri.toString(), languageId: d.languageId, version: d.version, text: d.getText() },
		};
		this.service.notify('textDocument/didOpen', params);
	}

	private changed(e: vscode.TextDocumentChangeEvent): void {
		if (e.document.uri.scheme !== 'file' || e.contentChanges.length === 0) {
			return; // a change of the dirty flag alone (a save, an undo to the saved state) has no content change
		}
		const params: DidChangeTextDocumentParams = {
			textDocument: { uri: e.document.uri.toString(), version: e.document.version },
			contentChanges: e.contentChanges.map((c) => ({
				range: {
					start: { line: c.range.start.line, character: c.range.start.character },
					end: { line: c.range.end.line, character: c.range.end.character },
				},
				text: c.text,
			})),
		};
		this.service.notify('textDocument/didChange', params);
	}

	private closed(d: vscode.TextDocument): void {
		if (d.uri.scheme !== 'file') {
			return;
		}
		const params: DidCloseTextDocumentParams = { textDocument: { uri: d.uri.toString() } };
		this.service.notify('textDocument/didClose', params);
	}

	/**
	 * Applies kin's approved edit to the open buffer, as PROTOCOL.md asks: only at the version the
	 * diff was made from, all edits as one undo step, without saving and without asking (the
	 * person approved it in the chat). The change event that follows is the didChange kin waits for.
	 */
	async applyEdit(p: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
		const changes = p?.edit?.documentChanges ?? [];
		if (changes.length === 0) {
			return { applied: false, failureReason: 'the edit changes no document' };
		}
		const edit = new vscode.WorkspaceEdit();
		for (const dc of changes) {
			const doc = findDocument(dc.textDocument.uri);
			if (!doc) {
				return { applied: false, failureReason: `${dc.textDocument.uri} is not open in the editor` };
			}
			if (doc.version !== dc.textDocument.version) {
				return { applied: false, failureReason: `${vscode.workspace.asRelativePath(doc.uri)} is not open at version ${dc.textDocument.version} (it is at ${doc.version}: it changed since the diff was shown)` };
			}
			for (const e of dc.edits) {
				edit.replace(doc.uri, new vscode.Range(e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character), e.newText);
			}
		}
		const applied = await vscode.workspace.applyEdit(edit);
		this.output.appendLine(`[kin] ${p.label ?? 'edit'}: ${applied ? 'applied to the buffer (not saved)' : 'the editor refused the edit'}`);
		return applied ? { applied: true } : { applied: false, failureReason: 'VS Code did not apply the edit' };
	}

	/** Reloads the documents of files kin wrote on disk, unless they have unsaved changes. */
	private async reload(p: DidChangeFilesParams): Promise<void> {
		for (const c of p?.changes ?? []) {
			const doc = findDocument(c.uri) ?? findDocument(vscode.Uri.file(c.path).toString());
			if (!doc) {
				continue;
			}
			if (doc.isDirty) {
				this.output.appendLine(`[kin] ${c.path} changed on disk; its buffer has unsaved changes and is left as it is`);
				continue;
			}
			await reloadFromDisk(doc).catch((err) => this.output.appendLine(`[kin] reloading ${c.path}: ${String(err)}`));
		}
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
	}
}

function findDocument(uri: string): vscode.TextDocument | undefined {
	let want: vscode.Uri;
	try {
		want = vscode.Uri.parse(uri, true);
	} catch {
		return undefined;
	}
	return vscode.workspace.textDocuments.find(
		(d) => d.uri.toString() === uri || (d.uri.scheme === 'file' && want.scheme === 'file' && d.uri.fsPath === want.fsPath),
	);
}

/**
 * Brings a clean document in line with its file. VS Code's file watcher usually reloads it by
 * itself; where it has not (yet, or the watcher is off for the path), the document is reverted
 * from disk. VS Code offers no API to revert a document, and its revert command acts on the active
 * editor, so the document is made active without taking focus, reverted, and the editor that was
 * active is shown again. Nothing is saved (saving would run the person's save participants,
 * format on save, trimming, over what kin wrote).
 */
async function reloadFromDisk(doc: vscode.TextDocument): Promise<void> {
	const text = new TextDecoder('utf-8').decode(await vscode.workspace.fs.readFile(doc.uri));
	if (doc.isDirty || sameText(doc.getText(), text)) {
		return;
	}
	const before = vscode.window.activeTextEditor;
	const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => ({ g, t }))).find(({ t }) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === doc.uri.toString());
	if (!tab) {
		return; // loaded by an extension, shown nowhere: nobody sees it stale, and opening it would add a tab
	}
	await vscode.window.showTextDocument(doc, { preserveFocus: true, preview: false, viewColumn: tab.g.viewColumn });
	if (!doc.isDirty) {
		await vscode.commands.executeCommand('workbench.action.files.revert');
	}
	if (before && before.document !== doc) {
		await vscode.window.showTextDocument(before.document, { preserveFocus: true, viewColumn: before.viewColumn, selection: before.selection });
	}
}

/** The same text, whatever line endings the buffer uses. */
function sameText(a: string, b: string): boolean {
	return a === b || a.replace(/\r\n/g, '\n') === b.replace(/\r\n/g, '\n');
}

// What the chat attaches to a question from VS Code: the current file, the selection, the
// file's problems, and the files `@path` mentions name. The parts are built from the editor's
// state as it is when the person attaches them; kin reads a file part itself, from the buffer
// when it is open (textDocument sync), so an attached file is what the person sees.

import * as path from 'path';
import * as vscode from 'vscode';
import type { InputPart, PartRange } from '../protocol/types';
import { partPath, problemsPart, selectedPart } from './parts';

function range(r: vscode.Range): PartRange {
	return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function base(cwd: string | undefined): string | undefined {
	return cwd ?? vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
}

export function filePart(uri: vscode.Uri, cwd: string | undefined): InputPart {
	return { type: 'file', path: partPath(uri.fsPath, base(cwd)) };
}

export function selectionPart(doc: vscode.TextDocument, sel: vscode.Selection, cwd: string | undefined): InputPart | undefined {
	return selectedPart(partPath(doc.uri.fsPath, base(cwd)), range(sel), doc.getText(sel));
}

export function diagnosticsPart(uri: vscode.Uri, diags: readonly vscode.Diagnostic[], cwd: string | undefined): InputPart | undefined {
	return problemsPart(
		partPath(uri.fsPath, base(cwd)),
		diags.map((d) => ({ range: range(d.range), severity: d.severity, message: d.message, source: d.source })),
	);
}

/** A file part for `@path` when it names a file of the workspace (else nothing is attached). */
export async function fileMentionPart(mention: string, cwd: string | undefined): Promise<InputPart | undefined> {
	const b = base(cwd);
	const abs = path.isAbsolute(mention) ? mention : b ? path.join(b, mention) : undefined;
	if (!abs) {
		return undefined;
	}
	try {
		const st = await vscode.workspace.fs.stat(vscode.Uri.file(abs));
		if (st.type & vscode.FileType.Directory) {
			return undefined;
		}
	} catch {
		return undefined;
	}
	return { type: 'file', path: partPath(abs, b) };
}

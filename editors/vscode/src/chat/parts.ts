// Input parts from what the editor has (no vscode import, so unit-tested under node): a path as
// kin reads it (relative to the session's folder when inside it), and a problem as a diagnostics
// item. attachments.ts feeds these from VS Code's documents, selections and diagnostics.

import * as path from 'path';
import type { InputPart, PartRange } from '../protocol/types';

/** A file's path for a part: relative to the session's folder when inside it, else absolute. */
export function partPath(fsPath: string, base: string | undefined): string {
	if (base) {
		const rel = path.relative(base, fsPath);
		if (rel && !rel.startsWith('..') && !path.isAbsolute(rel)) {
			return rel.split(path.sep).join('/');
		}
	}
	return fsPath;
}

export interface Problem {
	range: PartRange;
	/** VS Code's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
	severity: number;
	message: string;
	source?: string;
}

const SEVERITY = ['error', 'warning', 'information', 'hint'] as const;

/** The file's problems as one diagnostics part (undefined when it has none). */
export function problemsPart(p: string, problems: Problem[]): InputPart | undefined {
	const items = problems
		.filter((d) => d.message.trim() !== '')
		.map((d) => ({
			range: d.range,
			...(SEVERITY[d.severity] ? { severity: SEVERITY[d.severity] } : {}),
			message: d.message,
			...(d.source ? { source: d.source } : {}),
		}));
	return items.length ? { type: 'diagnostics', path: p, items } : undefined;
}

/** A selection part (undefined for an empty selection). */
export function selectedPart(p: string, range: PartRange, text: string): InputPart | undefined {
	if (text === '' || (range.start.line === range.end.line && range.start.character === range.end.character)) {
		return undefined;
	}
	return { type: 'selection', path: p, range, text };
}

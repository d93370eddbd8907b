// Line diffs of the texts kin's file tools changed (jsdiff's diffArrays does the matching): the
// hunks a turn made in a file, where they sit in the text now, and how many lines each side has.
// Pure (no vscode), so unit-tested; turnEdits.ts shows the hunks in the editor with Keep / Undo.

import { diffArrays } from 'diff';

/** A text's lines as kin's tools and VS Code's documents count them ("a\nb\n" is a, b and ""). */
export function lines(text: string): string[] {
	return text.replace(/\r\n/g, '\n').split('\n');
}

/** One changed region: `oldLines` at `oldStart` became `newLines` at `newStart` (0-based lines). */
export interface Hunk {
	oldStart: number;
	oldLines: string[];
	newStart: number;
	newLines: string[];
}

/** The changed regions from `a` to `b` (line arrays), in order, with no context lines. */
export function hunks(a: string[], b: string[]): Hunk[] {
	const out: Hunk[] = [];
	let i = 0;
	let j = 0;
	let cur: Hunk | undefined;
	for (const part of diffArrays(a, b)) {
		const n = part.count ?? part.value.length;
		if (!part.added && !part.removed) {
			cur = undefined;
			i += n;
			j += n;
			continue;
		}
		if (!cur) {
			cur = { oldStart: i, oldLines: [], newStart: j, newLines: [] };
			out.push(cur);
		}
		if (part.removed) {
			cur.oldLines.push(...part.value);
			i += n;
		} else {
			cur.newLines.push(...part.value);
			j += n;
		}
	}
	return out;
}

/** How many lines a change added and removed. */
export function countChanges(before: string, after: string): { added: number; removed: number } {
	let added = 0;
	let removed = 0;
	for (const h of hunks(lines(before), lines(after))) {
		added += h.newLines.length;
		removed += h.oldLines.length;
	}
	return { added, removed };
}

/**
 * Where kin's hunks (from the file before the turn to what kin left) sit in the text as it is now:
 * `now` is diffed against what kin left, and each hunk whose lines are untouched since gets its
 * line in `now`. A hunk someone changed since (an edit inside it, or right at its place) is left
 * out: undoing it would undo their change too.
 */
export function locate(kin: Hunk[], left: string[], now: string[]): { hunk: Hunk; line: number }[] {
	const since = hunks(left, now);
	const out: { hunk: Hunk; line: number }[] = [];
	for (const h of kin) {
		const start = h.newStart;
		const end = h.newStart + h.newLines.length;
		let shift = 0;
		let touched = false;
		for (const s of since) {
			const sEnd = s.oldStart + s.oldLines.length;
			// Lines typed exactly where kin removed some: which side of them the removed lines went
			// is not known.
			const sameGap = h.newLines.length === 0 && s.oldLines.length === 0 && s.oldStart === start;
			if (!sameGap && sEnd <= start) {
				shift += s.newLines.length - s.oldLines.length; // wholly before the hunk
			} else if (!sameGap && s.oldStart >= end) {
				break; // wholly after it
			} else {
				touched = true;
				break;
			}
		}
		if (!touched) {
			out.push({ hunk: h, line: start + shift });
		}
	}
	return out;
}

/** A hunk's identity among a file's hunks: its old and new lines (positions move as text is edited). */
export function hunkKey(h: Hunk): string {
	return JSON.stringify([h.oldLines, h.newLines]);
}

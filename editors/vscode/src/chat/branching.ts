// Branching in the chat (rpc/PROTOCOL.md, Branching): words sent while a turn runs join it
// (turn/steer; turn/steered shows them where they joined), and what a turn/rollback or a fork
// did, as transcript text. The commands (kin.fork, kin.rollback) are in extension.ts.
import type { HistoryItem, TurnRollbackResult, TurnUndoResult } from '../protocol/types';

/** The transcript's line for words added to a running turn. */
export function steeredText(input: string): string {
	return `You added, while kin worked: ${input}`;
}

function undoText(u: TurnUndoResult): string {
	const lines = [`turn ${u.question ? `"${u.question}"` : u.turnId}: ${u.restored.length} file(s) put back`];
	for (const p of u.restored) {
		lines.push(`  restored ${p}`);
	}
	for (const c of u.conflicts ?? []) {
		lines.push(`  left as it is (changed since): ${c.path}`);
	}
	for (const n of u.notUndoable ?? []) {
		lines.push(`  not undone: ${n.title || n.name} (${n.reason})`);
	}
	return lines.join('\n');
}

/** What a turn/rollback did, for a person. */
export function rollbackText(r: TurnRollbackResult): string {
	const n = r.turns.length;
	const lines = [`Took back ${n} turn${n === 1 ? '' : 's'} (${r.turns.join(', ')}): the model no longer sees ${n === 1 ? 'it' : 'them'}.`];
	for (const u of r.undos ?? []) {
		lines.push(undoText(u));
	}
	for (const e of r.errors ?? []) {
		lines.push(`turn ${e.turnId}: not undone: ${e.error}`);
	}
	return lines.join('\n');
}

/** A history item of branching as a transcript command entry (name, text), or undefined. */
export function branchingEntry(item: HistoryItem): { name: string; text: string } | undefined {
	switch (item.type) {
		case 'steer':
			return { name: 'steer', text: steeredText(item.text) };
		case 'rollback':
			return { name: 'rollback', text: rollbackText(item.rollback) };
		case 'fork':
			return { name: 'fork', text: `Forked from ${item.fork.sessionId}${item.fork.turnId ? ` at turn ${item.fork.turnId}` : ''}.` };
	}
	return undefined;
}

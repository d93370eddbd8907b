// The words of worktrees (PROTOCOL.md, Worktrees), without VS Code: what a refusal means and what
// to do next, the status line, the file items, the apply and remove messages. src/worktree.ts
// shows them; the unit tests read the golden frames through them.

import type { WorktreeApplyResult, WorktreeErrorData, WorktreeFile, WorktreeInfo, WorktreeRemoveResult, WorktreeStatusResult } from './protocol/types';

export const WORKTREE_ERROR = -32020;

/** A -32020's data ({kind: undefined} for any other error). */
export function worktreeError(err: unknown): { kind?: WorktreeErrorData['kind']; paths: string[]; message: string } {
	const e = err as { code?: number; data?: unknown; message?: string } | undefined;
	const message = String(e?.message ?? err);
	if (e?.code !== WORKTREE_ERROR || typeof e.data !== 'object' || e.data === null) {
		return { paths: [], message };
	}
	const d = e.data as WorktreeErrorData;
	return { kind: d.kind, paths: Array.isArray(d.paths) ? d.paths : [], message };
}

/** What to do after a refusal, to follow its message. */
export function nextStep(kind: WorktreeErrorData['kind'] | undefined): string {
	switch (kind) {
		case 'conflict':
			return 'Nothing was changed: commit, stash or undo those files in the checkout, then apply again.';
		case 'unapplied':
			return 'Apply them first, or remove it anyway.';
		case 'shared':
			return 'Delete those sessions first, or remove it anyway (they keep their history, not the folder).';
		case 'dirtyIndex':
			return 'Commit or unstage the staged changes first.';
		case 'detachedHead':
			return 'Check out a branch first.';
		case 'branchExists':
		case 'badBranch':
			return 'Name another branch.';
	}
	return '';
}

function short(sha: string): string {
	return sha.slice(0, 10);
}

/** The session object's worktree in one line. */
export function describeWorktree(wt: WorktreeInfo): string {
	return `worktree ${wt.path} on ${wt.branch} (from ${wt.baseBranch} at ${short(wt.base)})`;
}

/** worktree/status's summary line. */
export function statusSummary(st: WorktreeStatusResult): string {
	const parts = [`${st.branch}: ${st.ahead} ahead, ${st.behind} behind ${st.baseBranch}`];
	if (st.uncommitted) {
		parts.push('uncommitted changes');
	}
	if (st.unapplied) {
		parts.push('not applied');
	} else if (st.files.length) {
		parts.push('applied');
	}
	if (!st.files.length) {
		parts.push(`no changes since ${short(st.base)}`);
	}
	return parts.join(', ');
}

/** One quick-pick item per changed file; opening one shows its diff against the checkout. */
export function fileItems(st: WorktreeStatusResult): Array<{ label: string; description: string; file: WorktreeFile }> {
	return st.files.map((f) => ({ label: f.path, description: f.status, file: f }));
}

/** worktree/apply's message. */
export function appliedText(r: WorktreeApplyResult): string {
	if (!r.files.length) {
		return 'kin: the worktree has no changes to apply.';
	}
	let s = `kin: applied ${r.files.length} file${r.files.length === 1 ? '' : 's'} to the checkout as uncommitted changes (${r.files.map((f) => f.path).join(', ')}).`;
	if (r.runsLater?.length) {
		s += ` Look at ${r.runsLater.join(', ')} before you commit: they make something run later.`;
	}
	return s;
}

/** worktree/remove's message. */
export function removedText(r: WorktreeRemoveResult): string {
	return `kin: removed the worktree and its branch ${r.branch}${r.commit ? ` (git branch ${r.branch} ${r.commit} brings it back)` : ''}.`;
}


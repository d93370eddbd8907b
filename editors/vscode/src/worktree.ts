// Worktrees (PROTOCOL.md, Worktrees): "kin: New Session in a Worktree", and the shown session's
// worktree status, apply and remove. The words are worktreeText.ts's (tested against the golden
// frames); these commands only ask and show.

import * as vscode from 'vscode';
import type { SessionInfo, WorktreeApplyResult, WorktreeRemoveResult, WorktreeStatusResult } from './protocol/types';
import { appliedText, describeWorktree, fileItems, nextStep, removedText, statusSummary, worktreeError } from './worktreeText';
import { showInfo, showWarning } from './notify';

/** What the commands need of the extension. */
export interface WorktreeHost {
	request<T>(method: string, params: unknown): Promise<T>;
	/** The shown session, if any. */
	sessionId(): string | undefined;
	/** Starts a session with session/new's worktree, and shows it. */
	newSession(worktree: true | { branch: string }): Promise<SessionInfo>;
}

async function refused(what: string, err: unknown, root?: string): Promise<void> {
	const e = worktreeError(err);
	if (!e.kind) {
		throw err;
	}
	const msg = [e.message, nextStep(e.kind)].filter(Boolean).join(' ');
	const open = e.paths.length && root ? 'Show Files' : undefined;
	const pick = await showWarning(`kin: ${what}: ${msg}${e.paths.length ? ` (${e.paths.join(', ')})` : ''}`, ...(open ? [open] : []));
	if (pick && root) {
		const p = await vscode.window.showQuickPick(e.paths, { title: `kin: ${e.kind}` });
		if (p) {
			await vscode.window.showTextDocument(vscode.Uri.file(`${root}/${p}`));
		}
	}
}

function current(host: WorktreeHost): string | undefined {
	const sid = host.sessionId();
	if (!sid) {
		void showInfo('kin: no session is shown; "kin: New Session in a Worktree" starts one.');
	}
	return sid;
}

/** "kin: New Session in a Worktree": asks for the branch (empty: kin/<short id>). */
export async function newInWorktree(host: WorktreeHost): Promise<void> {
	const branch = await vscode.window.showInputBox({
		title: 'kin: new session in a git worktree',
		prompt: "The new branch's name; empty for kin/<session>. Your checkout is left as it is.",
		ignoreFocusOut: true,
	});
	if (branch === undefined) {
		return;
	}
	try {
		const s = await host.newSession(branch.trim() ? { branch: branch.trim() } : true);
		if (s.worktree) {
			void vscode.window.setStatusBarMessage(`kin: ${describeWorktree(s.worktree)}`, 8000);
		}
	} catch (err) {
		await refused('no worktree', err);
	}
}

export async function showStatus(host: WorktreeHost): Promise<void> {
	const sid = current(host);
	if (!sid) {
		return;
	}
	let st: WorktreeStatusResult;
	try {
		st = await host.request<WorktreeStatusResult>('worktree/status', { sessionId: sid });
	} catch (err) {
		return refused('worktree status', err);
	}
	const pick = await vscode.window.showQuickPick(fileItems(st), { title: `kin: ${statusSummary(st)}`, placeHolder: 'Pick a file to compare it with the checkout' });
	if (pick) {
		const left = vscode.Uri.file(`${st.repo}/${pick.file.path}`);
		const right = vscode.Uri.file(`${st.path}/${pick.file.path}`);
		await vscode.commands.executeCommand('vscode.diff', left, right, `${pick.file.path} (checkout ↔ ${st.branch})`);
	}
}

export async function apply(host: WorktreeHost): Promise<void> {
	const sid = current(host);
	if (!sid) {
		return;
	}
	let repo: string | undefined;
	try {
		repo = (await host.request<WorktreeStatusResult>('worktree/status', { sessionId: sid })).repo;
		const r = await host.request<WorktreeApplyResult>('worktree/apply', { sessionId: sid });
		void (r.runsLater?.length ? showWarning(appliedText(r)) : showInfo(appliedText(r)));
	} catch (err) {
		await refused('not applied', err, repo);
	}
}

export async function remove(host: WorktreeHost): Promise<void> {
	const sid = current(host);
	if (!sid) {
		return;
	}
	try {
		const r = await host.request<WorktreeRemoveResult>('worktree/remove', { sessionId: sid });
		void showInfo(removedText(r));
	} catch (err) {
		const e = worktreeError(err);
		if (e.kind !== 'unapplied' && e.kind !== 'shared') {
			return refused('not removed', err);
		}
		const force = await vscode.window.showWarningMessage(
			e.kind === 'shared'
				? `kin: ${e.message}. Remove it anyway?`
				: `kin: the worktree holds changes not applied to the checkout (${e.paths.join(', ')}). Remove it anyway and lose them?`,
			{ modal: true },
			'Remove Anyway',
		);
		if (force) {
			const r = await host.request<WorktreeRemoveResult>('worktree/remove', { sessionId: sid, force: true });
			void showInfo(removedText(r));
		}
	}
}

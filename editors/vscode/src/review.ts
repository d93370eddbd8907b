// A review's findings (review/finding, and session/resume's findings) as diagnostics on their
// lines, in one DiagnosticCollection ("kin review"), and "kin: Review Changes", which asks kin for
// a review (review/start) of the uncommitted changes, a branch against its base, or a commit.
// The review runs in kin; titles and bodies are the model's text, shown as plain text.
//
// vscode comes in as a parameter (its types only are imported), so the pure mapping below is
// what the unit and golden tests check without an editor.

import type * as vscodeT from 'vscode';
import type { ResumeResult, ReviewFinding, ReviewStartResult, ReviewTarget } from './protocol/types';

/** vscode.DiagnosticSeverity's values: Error 0, Warning 1, Information 2. */
const SEVERITY: Record<string, number> = { error: 0, warning: 1, info: 2 };

/** What a finding's diagnostic says and where, in plain values (lines 0-based, inclusive). */
export interface FindingDiagnostic {
	file: string;
	startLine: number;
	endLine: number;
	severity: number;
	message: string;
	source: string;
}

export function findingDiagnostic(f: ReviewFinding): FindingDiagnostic {
	const startLine = f.range.start.line;
	// The range ends at character 0 of the line after the last.
	const endLine = Math.max(f.range.end.line - 1, startLine);
	const body = f.body?.trim();
	return {
		file: f.file,
		startLine,
		endLine,
		severity: SEVERITY[f.severity] ?? 2,
		message: body ? `${f.title}\n\n${body}` : f.title,
		source: 'kin review',
	};
}

/** The target a person picked, from the quick pick's choice and what they typed. */
export function reviewTarget(choice: 'uncommitted' | 'base' | 'commit', value?: string): ReviewTarget | undefined {
	const v = value?.trim();
	switch (choice) {
		case 'uncommitted':
			return { uncommitted: true };
		case 'base':
			return v ? { base: v } : undefined;
		case 'commit':
			return v ? { commit: v } : undefined;
	}
}

/** What the status bar says once a review started. */
export function startedText(r: ReviewStartResult): string {
	const n = r.files.length;
	let s = `kin: reviewing ${n} file${n === 1 ? '' : 's'} in ${r.root}`;
	if (r.left?.length) {
		s += ` (${r.left.length} left out)`;
	}
	return s;
}

interface Requester {
	request<T>(method: string, params: unknown): Promise<T>;
	onNotification(method: string, fn: (params: any) => void): vscodeT.Disposable;
}

/** The findings of every session, shown as diagnostics. */
export class ReviewFindings implements vscodeT.Disposable {
	private readonly collection: vscodeT.DiagnosticCollection;
	private readonly bySession = new Map<string, ReviewFinding[]>();
	private readonly subs: vscodeT.Disposable[] = [];

	constructor(
		private readonly vscode: typeof vscodeT,
		private readonly service: Requester,
		private readonly sessionId: () => string | undefined,
	) {
		this.collection = vscode.languages.createDiagnosticCollection('kin review');
		this.subs.push(service.onNotification('review/finding', (p: ReviewFinding) => this.add(p)));
	}

	/** review/finding: one more finding, shown at once. */
	add(f: ReviewFinding): void {
		if (!f?.sessionId || typeof f.file !== 'string' || !f.range) {
			return;
		}
		const list = this.bySession.get(f.sessionId) ?? [];
		list.push(f);
		this.bySession.set(f.sessionId, list);
		this.show();
	}

	/** session/resume: the session's findings replace what was shown of it. */
	resumed(r: ResumeResult): void {
		if (r.findings?.length) {
			this.bySession.set(r.session.sessionId, [...r.findings]);
			this.show();
		}
	}

	clear(): void {
		this.bySession.clear();
		this.collection.clear();
	}

	private show(): void {
		const vs = this.vscode;
		const byFile = new Map<string, vscodeT.Diagnostic[]>();
		for (const list of this.bySession.values()) {
			for (const f of list) {
				const d = findingDiagnostic(f);
				const diag = new vs.Diagnostic(new vs.Range(d.startLine, 0, d.endLine, Number.MAX_SAFE_INTEGER), d.message, d.severity);
				diag.source = d.source;
				const all = byFile.get(d.file) ?? [];
				all.push(diag);
				byFile.set(d.file, all);
			}
		}
		this.collection.clear();
		for (const [file, diags] of byFile) {
			this.collection.set(vs.Uri.file(file), diags);
		}
	}

	/** "kin: Review Changes": pick a target, start the review in the chat's session. */
	async start(): Promise<void> {
		const vs = this.vscode;
		const pick = await vs.window.showQuickPick(
			[
				{ label: 'Uncommitted changes', choice: 'uncommitted' as const },
				{ label: 'Changes against a base branch…', choice: 'base' as const },
				{ label: 'A commit…', choice: 'commit' as const },
			],
			{ title: 'kin: review' },
		);
		if (!pick) {
			return;
		}
		let value: string | undefined;
		if (pick.choice !== 'uncommitted') {
			value = await vs.window.showInputBox({ title: 'kin: review', prompt: pick.choice === 'base' ? 'Base branch (e.g. main)' : 'Commit id' });
			if (!value) {
				return;
			}
		}
		const target = reviewTarget(pick.choice, value);
		if (!target) {
			return;
		}
		const r = await this.service.request<ReviewStartResult>('review/start', { sessionId: this.sessionId(), target });
		vs.window.setStatusBarMessage(startedText(r), 5000);
	}

	dispose(): void {
		this.collection.dispose();
		for (const s of this.subs) {
			s.dispose();
		}
	}
}

// A delegate call's subagent inside its card (chat/subagents.ts): a one-line summary of its latest
// activity under the call's title, and, folded, its calls (each with its own subagent, if any)
// and its answer so far. Escaped like the rest of render.ts; no DOM, unit-tested under node.

import { summaryLine, type SubagentView } from '../chat/subagents';
import { escapeHtml, visibleHtml } from './escape';

/**
 * Whether a view has something to show: a running subagent, or one whose calls or answer came
 * here (a resumed session's finished delegate call has neither: its card says enough).
 */
export function showsSubagent(v: SubagentView | undefined): v is SubagentView {
	return !!v && (v.status === 'running' || v.calls.length > 0 || v.text !== '' || !!v.waiting);
}

/** The line of a delegate call that waits for a free subagent slot. */
export function renderSlotLine(): string {
	return '<div class="subagent-line">Subagent waiting for a free slot (subagents.maxRunning)</div>';
}

/** The line shown under a delegate card's title, even when the card is folded. */
export function renderSubagentLine(v: SubagentView): string {
	const waiting = v.waiting ? ' waiting' : '';
	return `<div class="subagent-line${waiting}" data-subagent="${escapeHtml(v.sessionId)}">${visibleHtml(`Subagent ${v.status}: ${summaryLine(v)}`)}</div>`;
}

/** The subagent's calls and answer, folded (open while it waits for the person). */
export function renderSubagent(v: SubagentView, depth = 0): string {
	const calls = v.calls
		.map(
			(c) =>
				`<li class="status-${escapeHtml(c.status)}"><span class="title">${visibleHtml(c.title)}</span> <span class="status">${escapeHtml(c.status)}</span>${
					c.subagent && depth < 4 ? renderSubagent(c.subagent, depth + 1) : ''
				}</li>`,
		)
		.join('');
	const open = v.waiting ? ' open' : '';
	return `<details class="subagent"${open}><summary>${visibleHtml(`Subagent${v.mode ? ` (${v.mode})` : ''}: ${summaryLine(v)}`)}</summary>${
		calls ? `<ul class="subagent-calls">${calls}</ul>` : ''
	}${v.text ? `<div class="label">Answer so far</div><pre>${visibleHtml(v.text)}</pre>` : ''}</details>`;
}

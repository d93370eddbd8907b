// What the MCP manager and the grants picker show for kin's rows. Pure, so unit-tested (and fed
// every golden frame); mcpManager.ts and extension.ts show it.

import type { Grant, McpListResult, McpServerRow } from './protocol/types';

export interface RowText {
	label: string;
	description?: string;
	detail?: string;
}

/** One configured server: name and state, scope and transport, launch line and last error. */
export function serverItem(s: McpServerRow): RowText {
	const icon = !s.enabled ? '$(circle-slash)' : s.state === 'connected' ? '$(pass-filled)' : s.state === 'unavailable' ? '$(error)' : '$(circle-large-outline)';
	return {
		label: `${icon} ${s.name}`,
		description: [s.scope, s.transport, !s.enabled ? 'disabled' : s.state, s.tools ? `${s.tools} tools` : '', s.trusted ? 'trusted' : '', s.instructionsPending ? '$(warning) instructions changed' : '']
			.filter(Boolean)
			.join(' · '),
		detail: [s.launch, s.lastError].filter(Boolean).join(' — '),
	};
}

/** A root .mcp.json entry kin does not load: adopting it copies it into .kin/mcp.json. */
export function foreignItem(s: McpServerRow): RowText {
	return { label: `$(cloud-download) ${s.name}`, description: `adopt · ${s.transport}`, detail: `${s.launch}  (${s.file ?? 'foreign'})` };
}

/** A global entry hidden by a project entry of the same name. */
export function shadowedItem(s: McpServerRow): RowText {
	return { label: `$(eye-closed) ${s.name}`, description: `${s.scope} · hidden by the project entry`, detail: s.launch };
}

/** The list's notes first (notices, then warnings about skipped entries), each one line as sent. */
export function noteItems(list: McpListResult): RowText[] {
	return [...(list.notices ?? []).map((n) => ({ label: `$(info) ${n}` })), ...(list.warnings ?? []).map((w) => ({ label: `$(warning) ${w}` }))];
}

/** One grant: what it covers, its kind and how long it lasts. */
export function grantItem(g: Grant): RowText {
	return {
		label: g.label,
		description: `${g.type} · ${g.scope === 'permanent' ? 'every session' : 'this session'}${g.sessionId ? ` · ${g.sessionId}` : ''}`,
		detail: g.key,
	};
}

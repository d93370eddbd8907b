// What the MCP manager shows of a server's own instructions, and what accepting changed ones
// sends. Pure, so unit-tested against every golden frame; mcpInstructions.ts shows it.

import type { McpAcceptInstructionsParams, McpServerRow } from './protocol/types';

/** The document shown for a row's instructions: whose, where they stand, the hash, the text. */
export function instructionsText(s: McpServerRow): string {
	const status = s.instructionsPending
		? 'CHANGED since you trusted it: withheld from the model until you accept them'
		: "accepted: sent to the model as the server's untrusted text";
	return [`MCP server ${s.name}: instructions (${status})`, `hash: ${s.instructionsHash ?? '?'}`, '', s.instructions ?? ''].join('\n');
}

/** mcp/acceptInstructions for exactly the text shown (its hash), or undefined when nothing waits. */
export function acceptParams(s: McpServerRow): McpAcceptInstructionsParams | undefined {
	if (!s.instructionsPending || !s.instructionsHash) {
		return undefined;
	}
	return { name: s.name, hash: s.instructionsHash };
}

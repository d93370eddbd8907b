// A server's own instructions in the MCP manager: shown read-only in an editor tab, and when kin
// says they changed since the person trusted the server, offered for acceptance
// (mcp/acceptInstructions with the hash shown). kin decides what reaches the model.

import * as vscode from 'vscode';
import type { KinService } from './service';
import type { McpAcceptInstructionsResult, McpServerRow } from './protocol/types';
import { acceptParams, instructionsText } from './mcpInstructionsText';
import { showInfo } from './notify';

export async function showInstructions(service: KinService, s: McpServerRow): Promise<void> {
	const doc = await vscode.workspace.openTextDocument({ content: instructionsText(s), language: 'markdown' });
	await vscode.window.showTextDocument(doc, { preview: true });
	const params = acceptParams(s);
	if (!params) {
		return;
	}
	const ok = await vscode.window.showWarningMessage(
		`MCP server ${s.name} changed its instructions since you trusted it. Send the text shown to the model?`,
		{ modal: true },
		'Accept',
	);
	if (ok !== 'Accept') {
		return;
	}
	const r = await service.request<McpAcceptInstructionsResult>('mcp/acceptInstructions', params);
	if (r.accepted) {
		void showInfo(`kin: ${s.name}'s instructions accepted; the model gets them from the next request on.`);
	}
}

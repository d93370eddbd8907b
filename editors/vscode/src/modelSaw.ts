// VS Code's side of resources for the person and "what the model saw": the connected servers'
// resources for the chat input's `@` list (mcp/resources, listed again when a server connects),
// mcp/resourceUpdated as a message, and the command kin.showModelSaw, which opens exactly what
// went to the model for a tool call (PROTOCOL.md "What the model saw").

import * as vscode from 'vscode';
import { resourceRows, sawLines, type ResourceRow } from './chat/resources';
import type { McpResourceUpdated, McpResourcesResult, McpStatus, ToolCallParams } from './protocol/types';
import type { KinService } from './service';
import { showInfo } from './notify';

/** How many finished calls the view offers (the newest). */
const KEEP = 200;

export class ModelSaw implements vscode.Disposable {
	private rows: ResourceRow[] | undefined;
	private listing: Promise<ResourceRow[]> | undefined;
	private readonly calls = new Map<string, ToolCallParams>();
	private readonly subs: vscode.Disposable[] = [];

	constructor(private readonly service: KinService) {
		this.subs.push(
			service.onNotification('turn/toolCall', (p: ToolCallParams) => this.remember(p)),
			service.onNotification('mcp/status', (p: McpStatus) => {
				if (p.state === 'connected') {
					this.rows = undefined; // listed again on the next @
				}
			}),
			service.onNotification('mcp/resourceUpdated', (p: McpResourceUpdated) => {
				void showInfo(`kin: ${p.server}: ${p.uri} changed since it was attached; attach it again to send the new content.`);
			}),
		);
	}

	private remember(p: ToolCallParams): void {
		if (!p.modelSaw) {
			return;
		}
		this.calls.delete(p.callId);
		this.calls.set(p.callId, p);
		while (this.calls.size > KEEP) {
			this.calls.delete(this.calls.keys().next().value as string);
		}
	}

	/** The connected servers' resources (first pages), listed once until a server connects. */
	resources(): Promise<ResourceRow[]> {
		if (this.rows) {
			return Promise.resolve(this.rows);
		}
		this.listing ??= this.service
			.request<McpResourcesResult>('mcp/resources', {})
			.then((r) => (this.rows = resourceRows(r)))
			.catch(() => [] as ResourceRow[])
			.finally(() => (this.listing = undefined));
		return this.listing;
	}

	/** kin.showModelSaw: pick a finished call (the newest first), see what the model saw. */
	async show(callId?: string): Promise<void> {
		let call = callId ? this.calls.get(callId) : undefined;
		if (!call) {
			const items = [...this.calls.values()].reverse().map((c) => ({ label: c.title || c.name, description: `${c.status} · ${c.callId}`, call: c }));
			if (!items.length) {
				void showInfo('kin: no tool call has finished yet.');
				return;
			}
			call = (await vscode.window.showQuickPick(items, { title: 'kin: what the model saw', placeHolder: 'Pick a tool call' }))?.call;
		}
		if (call) {
			const doc = await vscode.workspace.openTextDocument({ content: sawLines(call).join('\n'), language: 'plaintext' });
			await vscode.window.showTextDocument(doc, { preview: true });
		}
	}

	dispose(): void {
		this.subs.forEach((d) => d.dispose());
	}
}

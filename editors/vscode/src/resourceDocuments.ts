// The read-only documents of an MCP result's resource links (PROTOCOL.md "An MCP result's
// resource_link blocks are also links"): clicking a link in the chat reads the resource through
// kin (mcp/readResource, which the server answers only while connected) and opens its text in a
// virtual document under the kin-resource: scheme, in the language its MIME type names (plain text
// otherwise). What kin did not show in full (its cuts) is said in a message beside it; a resource
// that cannot be read is an error message naming its server. Nothing here is ever written back.

import * as vscode from 'vscode';
import { cutsMessage, readErrorText, readResourceDocument, resourceFileName, resourceLanguage, resourceOfQuery, resourceQuery } from './chat/resources';
import type { Requester } from './protocol/connection';
import type { ResourceLink } from './protocol/types';
import { showError, showInfo } from './notify';

export const RESOURCE_SCHEME = 'kin-resource';

export class ResourceDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
	// texts holds what was read, by the document URI's query (server and uri), so opening a link
	// shows the text read for it just now; a document VS Code restores later is read again.
	private readonly texts = new Map<string, string>();
	private readonly changed = new vscode.EventEmitter<vscode.Uri>();
	readonly onDidChange = this.changed.event;
	private readonly registration: vscode.Disposable;

	constructor(private readonly rpc: Requester) {
		this.registration = vscode.workspace.registerTextDocumentContentProvider(RESOURCE_SCHEME, this);
	}

	async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
		const kept = this.texts.get(uri.query);
		if (kept !== undefined) {
			return kept;
		}
		const link = resourceOfQuery(uri.query);
		if (!link) {
			throw new Error(`kin: ${uri.toString()} names no resource`);
		}
		try {
			return (await readResourceDocument(this.rpc, link)).text;
		} catch (err) {
			throw new Error(readErrorText(link, err));
		}
	}

	/** Reads a link's resource and opens it read-only beside the chat; says what went wrong otherwise. */
	async open(link: ResourceLink): Promise<void> {
		let doc;
		try {
			doc = await readResourceDocument(this.rpc, link);
		} catch (err) {
			void showError(readErrorText(link, err));
			return;
		}
		const query = resourceQuery(link);
		const uri = vscode.Uri.from({ scheme: RESOURCE_SCHEME, path: `/${link.server}/${resourceFileName(link)}`, query });
		this.texts.set(query, doc.text);
		this.changed.fire(uri); // an open document of the same link shows the text read now
		let td = await vscode.workspace.openTextDocument(uri);
		const language = resourceLanguage(link.mimeType);
		if (td.languageId !== language) {
			td = await vscode.languages.setTextDocumentLanguage(td, language);
		}
		await vscode.window.showTextDocument(td, { preview: true, viewColumn: vscode.ViewColumn.Beside });
		const cuts = cutsMessage(link, doc.cuts);
		if (cuts) {
			void showInfo(cuts);
		}
	}

	dispose(): void {
		this.registration.dispose();
		this.changed.dispose();
	}
}

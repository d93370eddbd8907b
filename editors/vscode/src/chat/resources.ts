// MCP resources for the person and "what the model saw" (PROTOCOL.md "mcp/resources", "What
// the model saw"), with no vscode import so unit-tested under node: the `@server:uri` words the
// chat input completes next to files, the resource part such a mention sends (kin reads it from
// the server), the lines of the "what the model saw" view of a tool call, and what the read-only
// document of a call's resource link holds (mcp/readResource; resourceDocuments.ts shows it).

import type { Requester } from '../protocol/connection';
import type { InputPart, McpReadResourceParams, McpReadResourceResult, McpResourcesResult, ModelCut, ModelSaw, ResourceLink } from '../protocol/types';
import { errorText } from '../errorText';

export interface ResourceRow {
	server: string;
	/** A resource's uri, or a template's uriTemplate. */
	uri: string;
	title: string;
	template: boolean;
}

/** mcp/resources' result as rows: each server's resources, then its templates. */
export function resourceRows(r: McpResourcesResult): ResourceRow[] {
	const out: ResourceRow[] = [];
	for (const s of r.servers ?? []) {
		for (const x of s.resources ?? []) {
			out.push({ server: s.server, uri: x.uri ?? '', title: x.title || x.name, template: false });
		}
		for (const x of s.resourceTemplates ?? []) {
			out.push({ server: s.server, uri: x.uriTemplate ?? '', title: `${x.title || x.name} (template)`, template: true });
		}
	}
	return out.filter((x) => x.uri !== '');
}

/** The `server:uri` words (as the `@` list shows them) containing what is typed. */
export function resourceWords(rows: ResourceRow[], query: string): string[] {
	return rows.map((r) => `${r.server}:${r.uri}`).filter((w) => query === '' || w.includes(query));
}

/** Which of the `@` list's words are templates (the person fills them in before they are used). */
export function templateWords(rows: ResourceRow[], words: string[]): string[] {
	const t = new Set(rows.filter((r) => r.template).map((r) => `${r.server}:${r.uri}`));
	return words.filter((w) => t.has(w));
}

/** The listed template an `@` word names, if it names one. */
export function templateOf(rows: ResourceRow[], word: string): ResourceRow | undefined {
	return rows.find((r) => r.template && `${r.server}:${r.uri}` === word);
}

/** The resource part an `@server:uri` mention names (a listed server, a URI, no template left). */
export function resourcePart(mention: string, servers: Set<string>): InputPart | undefined {
	const m = /^([^:/\s]+):(\S+:\/\/\S*)$/.exec(mention);
	if (!m || !servers.has(m[1]) || m[2].includes('{')) {
		return undefined;
	}
	return { type: 'resource', server: m[1], uri: m[2] };
}

const STRUCTURED: Record<string, string> = {
	appended: 'sent after the content blocks, labelled',
	sameAsText: 'the same JSON as a text block, sent once',
	only: 'sent as the result (no text blocks)',
};

/** The "what the model saw" view of a tool call: how it was framed and cut, then the exact text. */
export function sawLines(call: { name: string; callId: string; modelSaw?: ModelSaw; links?: ResourceLink[] }): string[] {
	const saw = call.modelSaw;
	const lines = [`What the model saw: ${call.name} (${call.callId})`];
	if (!saw) {
		return [...lines, '', 'kin has not said yet (the call has not finished).'];
	}
	if (saw.framing) {
		lines.push(`framed as ${saw.framing} data of server ${saw.server}, tool ${saw.tool}: untrusted, never instructions`);
	}
	if (saw.structured) {
		lines.push(`structuredContent: ${STRUCTURED[saw.structured] ?? saw.structured}`);
	}
	for (const c of saw.cuts ?? []) {
		lines.push(`cut: ${cutText(c, 'sent')}`);
	}
	for (const l of call.links ?? []) {
		lines.push(`link: @${l.server}:${l.uri} ${l.title || l.name || ''}`.trimEnd());
	}
	return [...lines, '', ...saw.text.split('\n')];
}

/** One cut in words: what, why, and how much of how much was kept (`sent` to the model, or `shown`). */
export function cutText(c: ModelCut, kept: 'sent' | 'shown'): string {
	const size = c.bytes ? ` (${c.bytes} bytes${c.kept ? `, ${c.kept} ${kept}` : ''})` : '';
	return `${c.what}: ${c.why}${size}`;
}

/** A resource link as the chat names it: its title (or name), and where it is (`server:uri`). */
export function linkLabel(l: ResourceLink): { name: string; where: string } {
	return { name: l.title || l.name || l.uri, where: `${l.server}:${l.uri}` };
}

/** The query of a link's document URI, which names the resource (the path only titles the tab). */
export function resourceQuery(l: { server: string; uri: string }): string {
	return new URLSearchParams({ server: l.server, uri: l.uri }).toString();
}

/** The resource a document URI's query names, or undefined for a query not made by resourceQuery. */
export function resourceOfQuery(query: string): McpReadResourceParams | undefined {
	const q = new URLSearchParams(query);
	const server = q.get('server');
	const uri = q.get('uri');
	return server && uri ? { server, uri } : undefined;
}

/** The tab's name: the last part of the URI's path (or the link's name), without slashes. */
export function resourceFileName(l: ResourceLink): string {
	const last = l.uri.replace(/[?#].*$/, '').replace(/\/+$/, '').split('/').pop() ?? '';
	const name = (last.includes(':') ? '' : last) || l.name || l.server;
	return name.replace(/[\\/]/g, '_');
}

// Languages VS Code ships, by the MIME types servers send for them; anything else is plain text.
const LANGUAGES: Record<string, string> = {
	'text/markdown': 'markdown',
	'text/x-markdown': 'markdown',
	'application/json': 'json',
	'text/json': 'json',
	'text/html': 'html',
	'text/css': 'css',
	'text/javascript': 'javascript',
	'application/javascript': 'javascript',
	'application/typescript': 'typescript',
	'text/typescript': 'typescript',
	'text/x-python': 'python',
	'application/x-python': 'python',
	'text/x-go': 'go',
	'text/x-rust': 'rust',
	'text/x-java': 'java',
	'text/x-c': 'c',
	'text/x-c++': 'cpp',
	'text/x-sh': 'shellscript',
	'application/x-sh': 'shellscript',
	'text/x-shellscript': 'shellscript',
	'application/xml': 'xml',
	'text/xml': 'xml',
	'application/yaml': 'yaml',
	'application/x-yaml': 'yaml',
	'text/yaml': 'yaml',
	'text/x-yaml': 'yaml',
	'application/sql': 'sql',
	'text/x-sql': 'sql',
};

/** The document language of a resource's MIME type: an obvious one, else plain text. */
export function resourceLanguage(mimeType: string | undefined): string {
	const m = (mimeType ?? '').split(';')[0].trim().toLowerCase();
	if (LANGUAGES[m]) {
		return LANGUAGES[m];
	}
	if (m.endsWith('+json')) {
		return 'json';
	}
	if (m.endsWith('+xml')) {
		return 'xml';
	}
	return 'plaintext';
}

/** What a link's document shows: the resource's text as kin read it, and what it does not hold in full. */
export interface ResourceDocument {
	text: string;
	/** One line per cut (empty when the text is whole). */
	cuts: string[];
}

/** Reads a resource through kin (mcp/readResource) for its document. */
export async function readResourceDocument(rpc: Requester, link: McpReadResourceParams): Promise<ResourceDocument> {
	const r = await rpc.request<McpReadResourceResult>('mcp/readResource', { server: link.server, uri: link.uri } satisfies McpReadResourceParams);
	return { text: r.text ?? '', cuts: (r.cuts ?? []).map((c) => cutText(c, 'shown')) };
}

/** The message that says a resource was not in full (shown beside its document). */
export function cutsMessage(link: McpReadResourceParams, cuts: string[]): string | undefined {
	return cuts.length ? `kin: ${link.server}:${link.uri} is not shown in full: ${cuts.join('; ')}` : undefined;
}

/** The message of a resource that could not be read, naming its server (kin's words after). */
export function readErrorText(link: McpReadResourceParams, err: unknown): string {
	return `kin: could not read ${link.uri} from MCP server ${link.server}: ${errorText(err).replace(/^kin: /, '')}`;
}

// What an approval card in the chat says and which buttons it has, from an approval/request (and
// the card of a URL elicitation). Pure, so unit-tested (and fed every golden frame); the webview
// draws it (src/webview/render.ts) and approvals.ts sends the choice.

import type { ApprovalRequest, ApprovalRespondParams, ElicitationRequest, FileDiff, PermissionOption, SandboxUse, TrustItem } from './protocol/types';
import { LIMIT_HEADING } from './spend';

export interface CardButton {
	/** The option's name exactly as kin sent it. */
	label: string;
	optionId: string;
	/** The deny option: first on every card, and what Enter and Escape choose. */
	deny: boolean;
	/** Neither deny nor the card's action (a form's Cancel): drawn as a plain button. */
	quiet?: boolean;
}

export interface CardFact {
	label: string;
	value: string;
}

/**
 * One thing a project_trust or mcp_skill request asks the person to trust, as the card lists it.
 * kin has already escaped hidden and bidi characters in its texts (PROTOCOL.md: every text field
 * of a request), so they are shown as they come.
 */
export interface CardItem {
	/** kin's kind: skill, hook, instructions, mcp_skill. */
	kind: string;
	/** The kind in words. */
	what: string;
	name?: string;
	path: string;
	/** A hook's command line, shown whole: what it would run. */
	command?: string;
	/** A skill's description or a file's size. */
	detail?: string;
	digest: string;
	/** Trusted before with other content. */
	changed: boolean;
}

export interface CardDiff {
	path: string;
	unified: string;
	added: number;
	removed: number;
}

/** A question waiting for the person, as the chat's dock shows it. */
export interface WaitingCard {
	requestId: string;
	/** The request's revision this card shows (0 or absent: the first); the answer names it. */
	revision?: number;
	sessionId?: string;
	/**
	 * `approval` (kin's options), `link` (an elicitation asking to open a URL) or `form` (an
	 * elicitation asking for fields: Answer… opens its inputs).
	 */
	what: 'approval' | 'link' | 'form';
	kind: string;
	heading: string;
	title: string;
	facts: CardFact[];
	command?: string;
	/** How a command runs, in words. */
	sandbox?: string;
	/** `true` when the command runs without kin's sandbox (the card shows it as a warning). */
	unconfined?: boolean;
	arguments?: string;
	diffs?: CardDiff[];
	/** project_trust and mcp_skill: every item asked about. */
	items?: CardItem[];
	url?: string;
	warning?: string;
	buttons: CardButton[];
	/** What the card says while it is being answered (else "Sending your answer…"). */
	answeringHint?: string;
}

/**
 * The card's buttons: kin's options, each with the name kin gave it (nothing added, renamed or
 * dropped). The deny option comes first on every kind of request, so it sits in the same place
 * every time, then the others in kin's order. PROTOCOL.md: the first option is never the
 * default, and Enter or Escape must deny; the card makes deny the default button.
 */
export function cardButtons(options: PermissionOption[] | undefined): CardButton[] {
	const all = options ?? [];
	const deny = all.find((o) => o.optionId === 'deny') ?? all.find((o) => o.kind === 'reject_once' || o.kind === 'reject_always');
	const rest = all.filter((o) => o !== deny).map((o) => ({ label: o.name, optionId: o.optionId, deny: false }));
	return [{ label: deny?.name ?? 'Deny', optionId: deny?.optionId ?? 'deny', deny: true }, ...rest];
}

/** What the card says an approval would do. */
export function approvalCard(p: ApprovalRequest): WaitingCard {
	const facts: CardFact[] = [];
	const add = (label: string, v: string | undefined) => {
		if (v !== undefined && v !== '') {
			facts.push({ label, value: v });
		}
	};
	let heading: string;
	switch (p.kind) {
		case 'server_launch':
			heading = `Start MCP server ${p.server ?? ''}?`.replace(' ?', '?');
			add('Server', p.server);
			add('Transport', p.transport);
			add('Launch', p.destination);
			add('Scope', p.scope);
			add('Environment', p.arguments);
			break;
		case 'acknowledge_unknown':
			heading = 'A call may already have run';
			add('Call', p.tool);
			break;
		case 'project_trust':
			heading = 'Trust what this folder brings?';
			break;
		case 'mcp_skill':
			heading = `Load a skill from MCP server ${p.server ?? ''}?`.replace(' ?', '?');
			add('Server', p.server);
			add('Skill', p.destination);
			add('Tool', p.tool);
			break;
		case 'continue':
			heading = 'kin reached its tool-call limit';
			break;
		case 'limit':
			heading = LIMIT_HEADING;
			break;
		default:
			heading = p.command !== undefined ? 'kin wants to run a command' : p.diffs?.length ? 'kin wants to change files' : p.server ? 'kin wants to call an MCP tool' : 'kin wants to use a tool';
			add('Server', p.server);
			add('Destination', p.destination);
			add('Tool', p.serverTool ?? p.tool);
			if (p.command !== undefined) {
				add('Cwd', p.cwd);
			}
	}
	const card: WaitingCard = {
		requestId: p.requestId,
		revision: p.revision,
		sessionId: p.sessionId,
		what: 'approval',
		kind: p.kind,
		heading,
		title: p.title,
		facts,
		command: p.kind === 'tool_call' ? p.command : undefined,
		arguments: p.kind === 'tool_call' && p.command === undefined ? p.arguments : undefined,
		diffs: p.diffs?.length ? p.diffs.map(cardDiff) : undefined,
		items: p.items?.length ? p.items.map(cardItem) : undefined,
		warning: [p.warning, p.alwaysAsk ? 'This change is always asked for (outside the workspace, or a sensitive path).' : ''].filter(Boolean).join('\n') || undefined,
		buttons: cardButtons(p.options),
	};
	if (p.sandbox) {
		card.sandbox = sandboxText(p.sandbox);
		card.unconfined = !p.sandbox.confined;
	}
	return card;
}

/**
 * The approval/respond of a choice on a card: only an option kin offered goes back (anything else
 * is a deny), and with it the revision of the card the person answered (`revision`, from the page;
 * else the one shown now). kin reads a missing revision as 0 and refuses an answer to a revision
 * it has replaced since (PROTOCOL.md): without it every answer to a revised card was refused.
 */
export function respondParams(p: ApprovalRequest, optionId: string, revision: number | undefined): ApprovalRespondParams {
	const decision = p.options.some((o) => o.optionId === optionId) ? optionId : (p.options.find((o) => o.optionId === 'deny')?.optionId ?? 'deny');
	const answered = revision ?? p.revision;
	return { requestId: p.requestId, decision, ...(answered ? { revision: answered } : {}) };
}

/** A URL elicitation (or an OAuth sign-in link): open it, or decline (the default). */
export function linkCard(p: ElicitationRequest): WaitingCard {
	const server = p.server || 'An MCP server';
	return {
		requestId: p.requestId,
		sessionId: p.sessionId,
		what: 'link',
		kind: p.purpose === 'oauth' ? 'oauth' : 'url',
		heading: p.purpose === 'oauth' ? `${server} needs you to sign in` : `${server} asks you to open a link`,
		title: p.message,
		facts: [],
		url: p.url,
		warning: 'kin never opens or fetches this link itself. VS Code asks before it opens a site you have not trusted.',
		buttons: [
			{ label: 'Decline', optionId: 'decline', deny: true },
			{ label: 'Open link', optionId: 'open', deny: false },
		],
	};
}

/** Where an answer to kin's ask tool goes: the model reads it as the tool's output. */
export const ASK_TOOL_WARNING = 'What you answer goes to the model and stays in this session. Never type a password, key or token here.';

/**
 * A form (an MCP server's, or kin's own ask tool's): a card naming who asks and what, never its
 * inputs at once (they would take the keyboard from whoever is typing elsewhere, and Enter there
 * would send their keys as the answer). Decline is the default (Enter, Escape); Cancel dismisses
 * it without an answer (PROTOCOL.md, elicitation/respond actions); Answer… opens the inputs.
 */
export function formCard(p: ElicitationRequest): WaitingCard {
	const kin = p.source === 'kin';
	const server = p.server || 'An MCP server';
	const fields = (p.fields ?? []).map((f) => f.title || f.name);
	return {
		requestId: p.requestId,
		sessionId: p.sessionId,
		what: 'form',
		kind: kin ? 'ask' : 'form',
		heading: kin ? 'kin asks you a question' : `${server} asks you to fill in a form`,
		title: p.message || (kin ? 'A question from the model' : 'A form'),
		facts: [
			{ label: 'Asked by', value: kin ? 'kin (its model, with the ask tool)' : `the MCP server ${server}` },
			...(fields.length ? [{ label: fields.length === 1 ? 'Field' : `${fields.length} fields`, value: fields.join(', ') }] : []),
		],
		// The model may ask for anything, a password included: say plainly where the answer goes.
		warning: kin ? ASK_TOOL_WARNING : `What you answer goes to ${server}.`,
		buttons: [
			{ label: 'Decline', optionId: 'decline', deny: true },
			{ label: 'Cancel', optionId: 'cancel', deny: false, quiet: true },
			{ label: 'Answer…', optionId: 'answer', deny: false },
		],
		answeringHint: 'Answer in the input at the top of the window (Escape there declines).',
	};
}

/** How a command runs, from its approval's `sandbox`. */
export function sandboxText(s: SandboxUse): string {
	if (!s.confined) {
		return 'Not sandboxed: it can read and change everything you can, and reach the network.';
	}
	const net = s.network ? 'with network access' : 'no network';
	const where = s.writable?.length ? `; it can change only ${s.writable.join(', ')}` : '; it can change nothing outside its own /tmp';
	return `Sandboxed, ${net}${where}.`;
}

const ITEM_WORDS: Record<string, string> = {
	skill: 'Skill',
	hook: 'Hook',
	instructions: 'Instructions',
	mcp_skill: 'MCP skill',
};

/** A trust item as the card lists it: a hook's detail is the command it runs, shown as one. */
export function cardItem(it: TrustItem): CardItem {
	const hook = it.kind === 'hook';
	return {
		kind: it.kind,
		what: ITEM_WORDS[it.kind] ?? it.kind,
		name: it.name || undefined,
		path: it.path,
		command: hook ? it.detail : undefined,
		detail: hook ? undefined : it.detail || undefined,
		digest: it.digest,
		changed: it.changed === true,
	};
}

function cardDiff(d: FileDiff): CardDiff {
	const unified = d.unified || fallbackUnified(d.oldText, d.newText);
	return { path: d.path, unified, ...countLines(unified) };
}

function countLines(unified: string): { added: number; removed: number } {
	let added = 0;
	let removed = 0;
	for (const l of unified.split('\n')) {
		if (l.startsWith('+') && !l.startsWith('+++')) {
			added++;
		} else if (l.startsWith('-') && !l.startsWith('---')) {
			removed++;
		}
	}
	return { added, removed };
}

/** A whole-file diff for a change kin sent without `unified` (every line old, then every line new). */
function fallbackUnified(oldText: string, newText: string): string {
	const lines = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));
	return [...lines(oldText).map((l) => `-${l}`), ...lines(newText).map((l) => `+${l}`)].join('\n');
}

/** What the notification says when the chat is hidden. */
export function notificationText(c: WaitingCard): string {
	return c.what === 'link' ? `kin: ${c.heading}` : `kin: ${c.heading}: ${c.title}`;
}

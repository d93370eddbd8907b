// Filling in an MCP resource template picked from the `@` list (PROTOCOL.md "completion/complete"):
// the template's variables asked one after the other, the server's completions for what is typed
// (each request carrying the values already chosen, as MCP's context.arguments), and the URI the
// values make (RFC 6570). No vscode import, so unit-tested under node; resourceTemplatePicker.ts
// draws each question as a QuickPick.

import type { Requester } from '../protocol/connection';
import type { CompletionCompleteParams, CompletionCompleteResult } from '../protocol/types';
import { errorText } from '../errorText';

// RFC 6570 §2.2-2.4: an expression is `{` [operator] varspec *( "," varspec ) `}`, a varspec a
// name with an optional prefix (`:n`) or explode (`*`) modifier.
const EXPRESSION = /\{([+#./;?&]?)([^{}]*)\}/g;
const VARSPEC = /^([A-Za-z0-9_%](?:\.?[A-Za-z0-9_%])*)(?::([1-9]\d{0,3})|(\*))?$/;

interface VarSpec {
	name: string;
	prefix?: number;
}

function varSpecs(list: string): VarSpec[] {
	const out: VarSpec[] = [];
	for (const raw of list.split(',')) {
		const m = VARSPEC.exec(raw.trim());
		if (m) {
			// An explode modifier changes nothing for a single string value (RFC 6570 §2.4.2).
			out.push({ name: m[1], prefix: m[2] ? Number(m[2]) : undefined });
		}
	}
	return out;
}

/** The template's variables, in the order they first appear (each once). */
export function templateVariables(template: string): string[] {
	const names: string[] = [];
	for (const m of template.matchAll(EXPRESSION)) {
		for (const v of varSpecs(m[2])) {
			if (!names.includes(v.name)) {
				names.push(v.name);
			}
		}
	}
	return names;
}

// RFC 6570 §3.2.1: per operator, what starts the expansion, what separates its values, whether
// they are named (`;x=1`), what a named empty value shows, and whether reserved characters pass.
const OPERATORS: Record<string, { first: string; sep: string; named: boolean; ifemp: string; reserved: boolean }> = {
	'': { first: '', sep: ',', named: false, ifemp: '', reserved: false },
	'+': { first: '', sep: ',', named: false, ifemp: '', reserved: true },
	'#': { first: '#', sep: ',', named: false, ifemp: '', reserved: true },
	'.': { first: '.', sep: '.', named: false, ifemp: '', reserved: false },
	'/': { first: '/', sep: '/', named: false, ifemp: '', reserved: false },
	';': { first: ';', sep: ';', named: true, ifemp: '', reserved: false },
	'?': { first: '?', sep: '&', named: true, ifemp: '=', reserved: false },
	'&': { first: '&', sep: '&', named: true, ifemp: '=', reserved: false },
};

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

/**
 * A value percent-encoded as RFC 6570 §3.2.1 says: only unreserved characters are kept (a level-1
 * `{var}`), or with `{+var}` and `{#var}` also reserved ones and %XX triplets already there. Other
 * characters are their UTF-8 bytes, %XX in upper case.
 */
export function encodeValue(value: string, reserved = false): string {
	let out = '';
	const chars = [...value];
	for (let i = 0; i < chars.length; i++) {
		const c = chars[i];
		if (UNRESERVED.test(c) || (reserved && RESERVED.test(c))) {
			out += c;
		} else if (reserved && c === '%' && /^[0-9A-Fa-f]{2}$/.test(chars.slice(i + 1, i + 3).join(''))) {
			out += c;
		} else {
			for (const b of Buffer.from(c, 'utf8')) {
				out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
			}
		}
	}
	return out;
}

/**
 * The URI a template makes with these values (RFC 6570 expansion of string values; a variable
 * with no value is undefined, so left out). The text outside expressions is kept as written.
 */
export function expandTemplate(template: string, values: Record<string, string>): string {
	return template.replace(EXPRESSION, (_all, op: string, list: string) => {
		const o = OPERATORS[op];
		const parts: string[] = [];
		for (const v of varSpecs(list)) {
			const value = values[v.name];
			if (value === undefined) {
				continue;
			}
			const cut = v.prefix !== undefined ? [...value].slice(0, v.prefix).join('') : value;
			const enc = encodeValue(cut, o.reserved);
			parts.push(o.named ? `${v.name}${enc === '' ? o.ifemp : `=${enc}`}` : enc);
		}
		return parts.length ? o.first + parts.join(o.sep) : '';
	});
}

/** One row of a question's list: a value to choose (the server's, or what is typed). */
export interface ValueItem {
	value: string;
	/** The value typed, offered as it is (it is not among the server's values). */
	typed?: boolean;
}

/** What a question shows now. */
export interface ValuesShown {
	items: ValueItem[];
	/** A completion request is on its way. */
	busy: boolean;
	/** Said under the values: more than shown, or why there are none from the server. */
	note?: string;
}

/** How long typing must pause before the server is asked (ms). */
export const COMPLETE_DELAY = 150;

export interface QuestionOptions {
	/** Runs `fn` after `ms` (setTimeout by default); returns what cancels it. */
	schedule?: (fn: () => void, ms: number) => () => void;
}

const defaultSchedule = (fn: () => void, ms: number) => {
	const t = setTimeout(fn, ms);
	return () => clearTimeout(t);
};

/**
 * One variable of a template, as asked: what is typed goes (after a pause) to completion/complete
 * with the values already chosen, and the newest answer is shown (older ones are dropped). What is
 * typed is always offered too, so a value the server does not know can be chosen.
 */
export class ArgumentQuestion {
	/** Called whenever what the question shows changes. */
	onShown: ((s: ValuesShown) => void) | undefined;
	private value = '';
	private values: string[] = [];
	private note: string | undefined;
	private asked = 0;
	private pending = false;
	private cancelTimer: (() => void) | undefined;
	private closed = false;

	constructor(
		private readonly rpc: Requester,
		readonly server: string,
		readonly template: string,
		readonly variable: string,
		/** The variables chosen before this one. */
		readonly chosen: Record<string, string>,
		readonly step: number,
		readonly steps: number,
		private readonly options: QuestionOptions = {},
	) {}

	/** The question's title: the template, then the variable asked (and which of how many). */
	get title(): string {
		return `${this.server}:${this.template} — ${this.variable}${this.steps > 1 ? ` (${this.step} of ${this.steps})` : ''}`;
	}

	get placeholder(): string {
		return `Type ${this.variable}; the server's values for it are listed (any value can be used)`;
	}

	/** The params of the request for a typed value (exported for its test against the golden frame). */
	params(value: string): CompletionCompleteParams {
		return {
			server: this.server,
			ref: { type: 'ref/resource', uri: this.template },
			argument: { name: this.variable, value },
			context: { arguments: { ...this.chosen } },
		};
	}

	/** The person typed `value` (also the empty value, when the question opens). */
	typed(value: string): void {
		if (this.closed) {
			return;
		}
		this.value = value;
		// Until the server answers for this value, only its earlier values that still contain what
		// is typed stay: Enter meanwhile never chooses a value the person typed away from.
		const low = value.toLowerCase();
		this.values = this.values.filter((v) => v.toLowerCase().includes(low));
		this.cancelTimer?.();
		this.pending = true;
		this.emit();
		this.cancelTimer = (this.options.schedule ?? defaultSchedule)(() => void this.complete(value), COMPLETE_DELAY);
	}

	private async complete(value: string): Promise<void> {
		const n = ++this.asked;
		let values: string[] = [];
		let note: string | undefined;
		try {
			const r = await this.rpc.request<CompletionCompleteResult>('completion/complete', this.params(value));
			values = (r?.completion?.values ?? []).filter((v) => typeof v === 'string' && v !== '');
			const total = r?.completion?.total;
			if (r?.completion?.hasMore || (total !== undefined && total > values.length)) {
				note = `${values.length} of ${total !== undefined && total > values.length ? total : 'more'} values: type more to narrow them`;
			}
		} catch (err) {
			note = `no values from ${this.server}: ${errorText(err).replace(/^kin: /, '')}`;
		}
		if (this.closed || n !== this.asked || value !== this.value) {
			return; // a newer value was typed: its answer is the one shown
		}
		this.values = values;
		this.note = note;
		this.pending = false;
		this.emit();
	}

	/** What is shown now: the server's values, then what is typed when it is not one of them. */
	shown(): ValuesShown {
		const items: ValueItem[] = this.values.map((value) => ({ value }));
		if (this.value !== '' && !this.values.includes(this.value)) {
			items.push({ value: this.value, typed: true });
		}
		return { items, busy: this.pending, ...(this.note ? { note: this.note } : {}) };
	}

	private emit(): void {
		this.onShown?.(this.shown());
	}

	/** The question is answered or cancelled: nothing more is asked or shown. */
	close(): void {
		this.closed = true;
		this.cancelTimer?.();
	}
}

/** Shows a question and resolves with the value chosen, or undefined when the person cancels. */
export type Ask = (q: ArgumentQuestion) => Promise<string | undefined>;

/**
 * Asks for each variable of the template in order and returns the URI they make, or undefined when
 * the person cancels any question (then nothing is attached). A template without variables is
 * its own URI.
 */
export async function fillTemplate(rpc: Requester, server: string, template: string, ask: Ask, options: QuestionOptions = {}): Promise<string | undefined> {
	const names = templateVariables(template);
	const chosen: Record<string, string> = {};
	for (let i = 0; i < names.length; i++) {
		const q = new ArgumentQuestion(rpc, server, template, names[i], { ...chosen }, i + 1, names.length, options);
		let value: string | undefined;
		try {
			value = await ask(q);
		} finally {
			q.close();
		}
		if (value === undefined) {
			return undefined;
		}
		chosen[names[i]] = value;
	}
	return expandTemplate(template, chosen);
}

// What an elicitation field asks and how a typed or picked answer is checked and converted.
// Pure, so unit-tested; elicitation.ts shows it. kin checks every answer again (PROTOCOL.md,
// elicitation/respond), so these checks only spare the person a round trip.

import type { ElicitationField, ElicitationRequest } from './protocol/types';

/** The title of field i of n: which server asks, and what. */
export function fieldTitle(p: ElicitationRequest, f: ElicitationField, i: number, n: number): string {
	return `${asker(p)} asks (${i + 1}/${n}): ${f.title || f.name}${f.required ? '' : ' (optional)'}`;
}

/** Who asks: kin itself (its ask tool, source kin) or the MCP server. */
export function asker(p: ElicitationRequest): string {
	return p.source === 'kin' ? 'kin' : p.server || 'MCP server';
}

/** The line under the title: the server's message, the field's description and its limits. */
export function fieldPrompt(p: ElicitationRequest, f: ElicitationField): string {
	return [p.message, f.description, limits(f)].filter(Boolean).join(' — ');
}

function limits(f: ElicitationField): string {
	const range = (lo?: number, hi?: number, unit = '') =>
		lo !== undefined && hi !== undefined ? `${lo}–${hi}${unit}` : lo !== undefined ? `at least ${lo}${unit}` : hi !== undefined ? `at most ${hi}${unit}` : '';
	switch (f.type) {
		case 'integer':
		case 'number':
			return [f.type === 'integer' ? 'a whole number' : 'a number', range(f.minimum, f.maximum)].filter(Boolean).join(', ');
		case 'multi_select':
			return range(f.minItems, f.maxItems, ' choices') || 'any number of choices';
		case 'string':
			return [FORMAT_HINT[f.format ?? ''] ?? '', range(f.minLength, f.maxLength, ' characters')].filter(Boolean).join(', ');
	}
	return '';
}

const FORMAT_HINT: Record<string, string> = {
	email: 'an email address',
	uri: 'a URI',
	date: 'a date, YYYY-MM-DD',
	'date-time': 'a date and time, e.g. 2026-11-30T23:15:00Z',
};

export interface ChoiceItem {
	/** The option's title, as kin sent it (its value when it has none). */
	label: string;
	/** "default" for the field's default (shown by its title, never its raw value). */
	description?: string;
	value: string;
	/** Preselected: the field's default. */
	picked?: boolean;
}

/** The options of an enum or multi_select field, titled as kin sent them; the default is preselected and says so. */
export function choiceItems(f: ElicitationField): ChoiceItem[] {
	const defaults = new Set(Array.isArray(f.default) ? f.default.map(String) : f.default !== undefined ? [String(f.default)] : []);
	return (f.enum ?? []).map((v, j) => {
		const title = f.enumNames?.[j] || v;
		return { label: title, description: defaults.has(v) ? 'default' : undefined, value: v, picked: defaults.has(v) };
	});
}

/** Says what is wrong with a multi_select's picks, or undefined when they fit. */
export function validateChoices(f: ElicitationField, values: string[]): string | undefined {
	if (f.minItems !== undefined && values.length < f.minItems) {
		return `Pick at least ${f.minItems}`;
	}
	if (f.maxItems !== undefined && values.length > f.maxItems) {
		return `Pick at most ${f.maxItems}`;
	}
	return undefined;
}

/** Returns a message saying what is wrong with `text` for field `f`, or undefined when it is fine. */
export function validateField(f: ElicitationField, text: string): string | undefined {
	if (text === '') {
		return f.required ? `${f.title || f.name} is required` : undefined;
	}
	if (f.type === 'integer' || f.type === 'number') {
		const n = Number(text.trim());
		if (text.trim() === '' || !Number.isFinite(n)) {
			return 'Enter a number';
		}
		if (f.type === 'integer' && !Number.isInteger(n)) {
			return 'Enter a whole number';
		}
		if (f.minimum !== undefined && n < f.minimum) {
			return `At least ${f.minimum}`;
		}
		if (f.maximum !== undefined && n > f.maximum) {
			return `At most ${f.maximum}`;
		}
		return undefined;
	}
	const chars = [...text].length;
	if (f.minLength !== undefined && chars < f.minLength) {
		return `At least ${f.minLength} characters`;
	}
	if (f.maxLength !== undefined && chars > f.maxLength) {
		return `At most ${f.maxLength} characters`;
	}
	switch (f.format) {
		case 'email':
			return /^[^@\s<>(),;:"[\]\\]+@[^@\s<>(),;:"[\]\\.][^@\s<>(),;:"[\]\\]*$/.test(text) && !text.endsWith('.') ? undefined : 'Enter an email address';
		case 'uri':
			return /^[a-z][a-z0-9+.-]*:\S+$/i.test(text) ? undefined : 'Enter a URI';
		case 'date': {
			const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
			if (!m || !realDate(+m[1], +m[2], +m[3])) {
				return 'Enter a date as YYYY-MM-DD';
			}
			break;
		}
		case 'date-time': {
			// RFC 3339: a date, a time with seconds, and a zone.
			const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/.exec(text);
			if (!m || !realDate(+m[1], +m[2], +m[3]) || +m[4] > 23 || +m[5] > 59 || +m[6] > 60 || (m[9] !== undefined && (+m[9] > 23 || +m[10] > 59))) {
				return 'Enter a date and time, e.g. 2026-11-30T23:15:00Z';
			}
			break;
		}
	}
	if (f.pattern !== undefined && patternMatches(f.pattern, text) === false) {
		return `Must match the pattern ${f.pattern}`;
	}
	return undefined;
}

/** A calendar date: a month of 1-12 and a day that month has. */
function realDate(y: number, m: number, d: number): boolean {
	if (m < 1 || m > 12 || d < 1) {
		return false;
	}
	const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
	return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

/**
 * Whether text contains a match of a JSON Schema pattern (an ECMA 262 regular expression, as
 * JavaScript's own), or undefined when it does not compile here (kin checks it).
 */
export function patternMatches(pattern: string, text: string): boolean | undefined {
	for (const flags of ['u', '']) {
		try {
			return new RegExp(pattern, flags).test(text);
		} catch {
			// try without the unicode flag, then give up
		}
	}
	return undefined;
}

/** A value as the person sees it: a choice by its title, a list of choices by theirs. */
export function shownValue(f: ElicitationField, v: unknown): string {
	if (v === undefined || v === null || v === '') {
		return '';
	}
	if (Array.isArray(v)) {
		return v.map((x) => shownValue(f, x)).join(', ');
	}
	const i = (f.enum ?? []).indexOf(String(v));
	if (i >= 0) {
		return f.enumNames?.[i] || String(v);
	}
	if (typeof v === 'boolean') {
		return v ? 'Yes' : 'No';
	}
	return String(v);
}

/**
 * What kin refused of an answer (elicitation/respond's -32602 data): the fields to ask again, in
 * the form's order, and each one's problem; names that are no field of the form are left out.
 */
export function refusedFields(p: ElicitationRequest, data: unknown): { redo: string[]; problems: Map<string, string> } {
	const problems = new Map<string, string>();
	const list = (data as { fields?: unknown } | undefined)?.fields;
	for (const fe of Array.isArray(list) ? list : []) {
		if (fe && typeof fe.name === 'string' && (p.fields ?? []).some((f) => f.name === fe.name)) {
			problems.set(fe.name, String(fe.message ?? 'does not fit'));
		}
	}
	return { redo: (p.fields ?? []).filter((f) => problems.has(f.name)).map((f) => f.name), problems };
}

/** A row of the form's overview: a field with its answer (by title) and its description or problem. */
export interface OverviewItem {
	label: string;
	description?: string;
	detail?: string;
	field?: string;
	action?: 'send' | 'decline';
}

/** The overview of a form: Send, each field in kin's order with what it holds now, Decline. */
export function overviewItems(p: ElicitationRequest, content: Record<string, unknown>, problems: Map<string, string>): OverviewItem[] {
	const fields = p.fields ?? [];
	const missing = fields.filter((f) => f.required && (content[f.name] === undefined || content[f.name] === ''));
	const send: OverviewItem = {
		label: '$(check) Send',
		action: 'send',
		description: missing.length ? `${missing.map((f) => f.title || f.name).join(', ')} still to answer` : undefined,
	};
	const rows = fields.map((f) => {
		const v = shownValue(f, content[f.name]);
		const problem = problems.get(f.name);
		return {
			label: `${problem ? '$(error) ' : ''}${f.title || f.name}${f.required ? ' *' : ''}`,
			description: v || (f.default !== undefined ? `(default: ${shownValue(f, f.default)})` : '(empty)'),
			detail: problem ? `${f.title || f.name} ${problem}` : f.description,
			field: f.name,
		};
	});
	return [send, ...rows, { label: '$(close) Decline', action: 'decline' }];
}

/** Converts valid text to the field's JSON value; undefined leaves an optional field out. */
export function parseFieldValue(f: ElicitationField, text: string): unknown {
	if (text === '') {
		return undefined;
	}
	if (f.type === 'integer' || f.type === 'number') {
		return Number(text.trim());
	}
	return text;
}

/** Why kin closed a question, in words (elicitation/resolved's reason). */
export function reasonText(reason: string): string {
	switch (reason) {
		case 'cancelled':
			return 'its turn or request was cancelled';
		case 'call_ended':
			return 'the tool call that asked ended without it';
		case 'server_gone':
			return 'the MCP server that asked went away';
		case 'disconnected':
			return 'the connection to kin closed';
		case 'shutdown':
			return 'kin shut down';
	}
	return reason || 'closed';
}

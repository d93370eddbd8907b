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
	/** The value, when it differs from the title. */
	description?: string;
	value: string;
	/** Preselected: the field's default. */
	picked?: boolean;
}

/** The options of an enum or multi_select field, titled as kin sent them. */
export function choiceItems(f: ElicitationField): ChoiceItem[] {
	const defaults = new Set(Array.isArray(f.default) ? f.default.map(String) : f.default !== undefined ? [String(f.default)] : []);
	return (f.enum ?? []).map((v, j) => {
		const title = f.enumNames?.[j] || v;
		return { label: title, description: title !== v ? v : undefined, value: v, picked: defaults.has(v) };
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
			return /^[^@\s<>]+@[^@\s<>]+$/.test(text) ? undefined : 'Enter an email address';
		case 'uri':
			return /^[a-z][a-z0-9+.-]*:\S+$/i.test(text) ? undefined : 'Enter a URI';
		case 'date':
			return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) ? undefined : 'Enter a date as YYYY-MM-DD';
		case 'date-time':
			return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text))
				? undefined
				: 'Enter a date and time, e.g. 2026-11-30T23:15:00Z';
	}
	return undefined;
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

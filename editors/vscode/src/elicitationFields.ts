// Checking and converting what a person typed into an elicitation field. Pure, so unit-tested.

import type { ElicitationField } from './protocol/types';

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
	if (f.minLength !== undefined && text.length < f.minLength) {
		return `At least ${f.minLength} characters`;
	}
	if (f.maxLength !== undefined && text.length > f.maxLength) {
		return `At most ${f.maxLength} characters`;
	}
	if (f.pattern) {
		try {
			if (!new RegExp(f.pattern, 'u').test(text)) {
				return `Must match ${f.pattern}`;
			}
		} catch {
			// a pattern JavaScript cannot read is left to kin, which checks content again
		}
	}
	if (f.format === 'email' && !/^[^@\s]+@[^@\s]+$/.test(text)) {
		return 'Enter an email address';
	}
	if (f.format === 'uri' && !/^[a-z][a-z0-9+.-]*:/i.test(text)) {
		return 'Enter a URI';
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

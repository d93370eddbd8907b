// What the input box offers while the person types: `/name` commands from commands/list at the
// start of the input, and (where the service takes attachments) `@path` mentions of workspace
// files. Pure, so unit-tested; main.ts draws the list and handles the keys.

import type { CommandInfo } from '../protocol/types';

export interface CompletionItem {
	/** What is shown first (`/undo`, `@src/app.ts`). */
	label: string;
	detail?: string;
	/** The text that replaces [start, end) of the input. */
	insert: string;
	start: number;
	end: number;
	/** An MCP resource template (`server:uriTemplate`): picking it asks for its values first. */
	template?: string;
}

/** `/na` at the very start of the input, before any space: the commands whose name starts with it. */
export function slashCompletions(input: string, caret: number, commands: CommandInfo[]): CompletionItem[] {
	const m = /^\/([\w.:-]*)$/.exec(input.slice(0, caret));
	if (!m || /\s/.test(input.slice(0, caret))) {
		return [];
	}
	const typed = m[1].toLowerCase();
	return commands
		.filter((c) => c.name.toLowerCase().startsWith(typed) || (typed.length > 0 && c.name.toLowerCase().includes(`:${typed}`)))
		.map((c) => ({
			label: `/${c.name}`,
			detail: [c.inputHint, c.description].filter(Boolean).join(' — '),
			insert: `/${c.name} `,
			start: 0,
			end: caret,
		}));
}

/** The `@partial` word that ends at the caret, if any (for file mentions). */
export function mentionAt(input: string, caret: number): { start: number; query: string } | undefined {
	const m = /(^|\s)@([^\s@]*)$/.exec(input.slice(0, caret));
	if (!m) {
		return undefined;
	}
	return { start: caret - m[2].length - 1, query: m[2] };
}

/** The file mentions written in a question: `@path` words (a trailing punctuation mark is not part of it). */
export function mentionsIn(input: string): string[] {
	const out: string[] = [];
	for (const m of input.matchAll(/(^|\s)@([^\s@]+)/g)) {
		out.push(m[2].replace(/[.,;:!?)]+$/, ''));
	}
	return [...new Set(out)];
}

/** Where a picked template was: the `@partial` word it replaces, and the input as it was then. */
export interface TemplatePending {
	seq: number;
	start: number;
	end: number;
	input: string;
}

/**
 * The input with a filled template's `@server:uri ` text in place of the `@partial` it was picked
 * for, and where the caret goes after it. Should the input have changed meanwhile, the text goes
 * at the end instead, so nothing typed is lost.
 */
export function placeFilled(input: string, p: TemplatePending, text: string): { value: string; caret: number } {
	if (input === p.input) {
		const value = input.slice(0, p.start) + text + input.slice(p.end);
		return { value, caret: p.start + text.length };
	}
	const value = input + (input === '' || /\s$/.test(input) ? '' : ' ') + text;
	return { value, caret: value.length };
}

// HTML escaping, for the page's renderers and for the markup the extension writes into the page
// (its first paint). No imports, so the extension bundle stays free of the page's libraries.

export function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

// Characters that render as nothing or rearrange the text around them: zero-width characters,
// bidi controls (U+202E shows "rm -rf ~ \u202e#pmt/dliub/." as "rm -rf ~ ./build/tmp#"), Unicode
// tag characters, other format and control characters (a lone CR, ESC), line and paragraph
// separators. Newline and tab are text. The same set as kin's agent/visible (approvals) and its
// terminal chat.
const HIDDEN = /[\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]|\r(?!\n)|[^\P{Cc}\n\t\r]|\p{Cf}/gu;

/**
 * Text from the model, a tool or a server with its hidden characters spelled out as kin writes
 * them (\u202e, \x1b, \U000e0041): the chat shows what is there, and a code block's Copy and
 * Insert take exactly what was shown. Text without them is returned as it is.
 */
export function visibleText(s: string): string {
	return s.replace(HIDDEN, (c) => {
		const n = c.codePointAt(0)!;
		return n <= 0xff ? `\\x${hex(n, 2)}` : n <= 0xffff ? `\\u${hex(n, 4)}` : `\\U${hex(n, 8)}`;
	});
}

/** visibleText, escaped for HTML: how the page shows text kin did not write. */
export function visibleHtml(s: string): string {
	return escapeHtml(visibleText(s));
}

function hex(n: number, width: number): string {
	return n.toString(16).padStart(width, '0');
}

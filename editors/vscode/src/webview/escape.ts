// HTML escaping, for the page's renderers and for the markup the extension writes into the page
// (its first paint). No imports, so the extension bundle stays free of the page's libraries.

export function escapeHtml(s: string): string {
	return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

// A hostile model writes characters that render as nothing or reorder the text around them (bidi
// overrides, zero-width characters, Unicode tag characters) into its answer: a code block that
// reads `rm -rf ./build/tmp` on screen holds another command, and Copy or Insert at the cursor
// takes what was never shown. kin's own terminal chat escapes them (cmd/kin/chat, clean) and kin
// escapes them in approvals (agent/visible); the VS Code chat drew them as they came.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderDiff, renderEntry, renderMarkdown, visibleText } from '../../src/webview/render';
import { renderSubagent } from '../../src/webview/subagentRender';

const RLO = '\u202e';
const HIDDEN = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2060\ufeff\u{e0000}-\u{e007f}\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/u;

/** What the page's Copy and Insert buttons take: the code element's text (its markup removed). */
function codeText(html: string): string {
	const m = /<code[^>]*>([\s\S]*?)<\/code>/.exec(html);
	return (m?.[1] ?? '').replace(/<[^>]+>/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

test('a code block of the answer shows its hidden characters, and Copy takes what is shown', () => {
	// On screen: "rm -rf ./build/tmp #"; what it holds is "rm -rf ~ #pmt/dliub/.".
	const code = `rm -rf ~ ${RLO}#pmt/dliub/.`;
	const html = renderMarkdown('Clean the build:\n\n```sh\n' + code + '\n```\n');
	assert.doesNotMatch(html, HIDDEN, 'the page got a character that rearranges what it shows');
	assert.equal(codeText(html), 'rm -rf ~ \\u202e#pmt/dliub/.\n');
});

test('hidden characters in the answer, its inline code, reasoning, and a tool call are spelled out', () => {
	const sneaky = `ok\u200bnow ${RLO}txt.exe a\u{e0041}b \x1b[31m`;
	assert.equal(visibleText(sneaky), 'ok\\u200bnow \\u202etxt.exe a\\U000e0041b \\x1b[31m');
	assert.equal(visibleText('plain\ttext\nwith lines'), 'plain\ttext\nwith lines', 'ordinary text is left as it is');
	for (const html of [
		renderMarkdown(`${sneaky} and \`${sneaky}\``),
		renderEntry({ type: 'reasoning', key: 'r', turnId: 't_1', text: sneaky } as any),
		renderEntry({ type: 'tool', key: 'c', callId: 'c_1', name: 'bash', kind: 'execute', title: `Run ${sneaky}`, arguments: JSON.stringify({ command: sneaky }), output: sneaky, status: 'failed' } as any),
		renderDiff(`+${sneaky}`),
		renderEntry({ type: 'notice', key: 'n', level: 'warning', message: `MCP server docs: ${sneaky}` } as any),
		renderEntry({ type: 'decision', key: 'd', requestId: 'ap_1', decision: 'allow_once', title: `Run ${sneaky}` } as any),
		renderSubagent({ sessionId: 's_2', status: 'running', calls: [{ callId: 'c_2', title: `Run ${sneaky}`, status: 'running' }], text: sneaky } as any),
	]) {
		assert.doesNotMatch(html, HIDDEN);
		assert.match(html, /\\u202e/);
	}
});

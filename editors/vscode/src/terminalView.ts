// What of a command's output (and of its command line) is written into the terminal view
// (commandTerminals.ts). The output is whatever the command printed, so it is written by whoever
// wrote the files it read (a repository's README, a test's log, a server's answer): the view
// must show its text and colours but never let it make VS Code's terminal act. VS Code's terminal
// writes the clipboard on OSC 52 (`ESC ] 52 ; c ; base64 BEL`: `cat README` would put a command
// there to be pasted into a shell), makes links of OSC 8, renames the terminal with OSC 0/2 and
// takes OSC 633 as shell integration. So every string sequence (OSC, DCS, SOS, PM, APC, in 7-bit
// and 8-bit C1 forms) and every other ESC sequence is dropped; CSI sequences (colours, erasing,
// cursor moves: what progress bars use) are kept. Pure, so unit-tested.
//
// The output comes in pieces (turn/toolCall outputDelta) that may split a sequence anywhere: the
// filter keeps its state across pieces, and holds back a CSI sequence until it is whole, so the
// terminal never sees part of one and is always back at plain text between writes (kin's own
// lines written between pieces are then shown as written).

import { visibleText } from './webview/escape';

const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
/** The longest CSI sequence passed on; longer ones are dropped (a real one is a few bytes). */
const MAX_CSI = 64;

type State = 'text' | 'esc' | 'escIntermediate' | 'csi' | 'string' | 'stringEsc';

export class TerminalFilter {
	private state: State = 'text';
	/** The CSI sequence being read (held back until its final byte). */
	private csi = '';

	/** The part of `chunk` to write now; line ends as a terminal wants them (`\r\n`). */
	push(chunk: string): string {
		let out = '';
		for (let i = 0; i < chunk.length; i++) {
			const ch = chunk[i];
			const c = chunk.charCodeAt(i);
			switch (this.state) {
				case 'text':
					out += this.text(ch, c, chunk, i);
					break;
				case 'esc':
					if (c === 0x5b) {
						// ESC [ : a CSI sequence
						this.state = 'csi';
						this.csi = '\x1b[';
					} else if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) {
						// ESC ] OSC, ESC P DCS, ESC X SOS, ESC ^ PM, ESC _ APC: dropped to their end
						this.state = 'string';
					} else if (c >= 0x20 && c <= 0x2f) {
						this.state = 'escIntermediate'; // such as ESC ( B: dropped with its final byte
					} else if (c === ESC) {
						this.state = 'esc';
					} else if (c === CAN || c === SUB) {
						this.state = 'text';
					} else if (c < 0x20) {
						out += this.text(ch, c, chunk, i); // a control inside an escape still acts
					} else {
						this.state = 'text'; // ESC and its one final byte (ESC c, ESC 7, ...): dropped
					}
					break;
				case 'escIntermediate':
					if (c === ESC) {
						this.state = 'esc';
					} else if ((c >= 0x30 && c <= 0x7e) || c === CAN || c === SUB || c > 0x7e) {
						this.state = 'text';
					} else if (c < 0x20) {
						out += this.text(ch, c, chunk, i); // a control inside an escape still acts
					}
					break;
				case 'csi':
					if (c >= 0x20 && c <= 0x3f && this.csi.length < MAX_CSI) {
						this.csi += ch; // parameters and intermediates
					} else if (c >= 0x40 && c <= 0x7e && this.csi.length < MAX_CSI) {
						out += this.csi + ch;
						this.csi = '';
						this.state = 'text';
					} else {
						// Not a CSI sequence after all (or far too long): dropped, and this character
						// read as text (an ESC starts the next sequence).
						this.csi = '';
						this.state = 'text';
						if (c !== CAN && c !== SUB && !(c >= 0x20 && c <= 0x7e)) {
							out += this.text(ch, c, chunk, i);
						}
					}
					break;
				case 'string':
					// Everything up to BEL or ST (ESC \, or C1 ST) is dropped; CAN and SUB end it.
					if (c === BEL || c === 0x9c || c === CAN || c === SUB) {
						this.state = 'text';
					} else if (c === ESC) {
						this.state = 'stringEsc';
					}
					break;
				case 'stringEsc':
					if (c === 0x5c) {
						this.state = 'text'; // ST
					} else {
						// ESC ends the string and starts another sequence, as in a terminal.
						this.state = 'esc';
						i--;
					}
					break;
			}
		}
		return out;
	}

	/** One character met as text: what of it is written. */
	private text(ch: string, c: number, chunk: string, i: number): string {
		if (c === ESC) {
			this.state = 'esc';
			return '';
		}
		if (c >= 0x80 && c <= 0x9f) {
			// C1 controls, which VS Code's terminal reads as ESC sequences: CSI kept as ESC [,
			// OSC/DCS/SOS/PM/APC dropped to their end, the rest dropped.
			if (c === 0x9b) {
				this.state = 'csi';
				this.csi = '\x1b[';
			} else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
				this.state = 'string';
			}
			return '';
		}
		if (c === 0x0a) {
			return i > 0 && chunk.charCodeAt(i - 1) === 0x0d ? '\n' : '\r\n';
		}
		return ch;
	}
}

/**
 * The command line heading the view, as text: it is the model's, and is shown, never acted on.
 * Its hidden characters (controls such as ESC, C1 or a lone CR that would let the rest overwrite
 * the line, and bidi overrides, zero-width and tag characters that would make the line read as
 * another command than the one that runs) are spelled out by visibleText, the one list the chat
 * and kin's approvals use (`\x1b`, `\u202e`); lines end in `\r\n`.
 */
export function commandLineText(s: string): string {
	return visibleText(s.replace(/\r\n/g, '\n')).replace(/\n/g, '\r\n');
}

/** The longest name of the view's terminal (its tab): a command's first line can be 80 characters. */
const MAX_NAME = 60;

/**
 * The name of a call's view (its terminal tab): the call's title is the command's first line, the
 * model's, so its hidden characters are spelled out as in the heading; cut by characters, never
 * inside a surrogate pair.
 */
export function terminalName(title: string): string {
	return [...`kin: ${visibleText(title).replace(/\n/g, ' ')}`].slice(0, MAX_NAME).join('');
}

// A terminal view of a command kin runs: the bash tool's output as kin streams it
// (turn/toolCall's `outputDelta` while the call runs, PROTOCOL.md), shown in a VS Code
// pseudo-terminal the person opens from the call's card in the chat. It is a view: typing does
// nothing but Ctrl+C, which stops the turn (kin kills the command). The command itself runs in
// kin (in its sandbox), never in this terminal.

import * as vscode from 'vscode';
import type { ToolEntry } from './chat/transcript';
import { FINAL_TOOL_STATUSES, type ToolCallParams } from './protocol/types';
import type { KinService } from './service';
import { commandLineText, TerminalFilter, terminalName } from './terminalView';

/** What the view shows of a call: its output so far, and how it ended once it did. */
interface View {
	terminal: vscode.Terminal;
	write: vscode.EventEmitter<string>;
	/** The output so far (to write only what the final output adds). */
	written: string;
	/** What of the output is written: its text and colours, never sequences that make the terminal act. */
	filter: TerminalFilter;
	/** The terminal is open: what is fired before is lost, so it is written on open. */
	opened: boolean;
	/** How the call ended, once it did. */
	ended?: string;
}

export class CommandTerminals implements vscode.Disposable {
	// views holds the open terminal of each call shown, by callId.
	private readonly views = new Map<string, View>();
	private readonly subs: vscode.Disposable[] = [];

	constructor(
		service: KinService,
		private readonly cancel: () => Promise<unknown>,
	) {
		this.subs.push(
			service.onNotification('turn/toolCall', (p: ToolCallParams) => this.update(p)),
			vscode.window.onDidCloseTerminal((t) => {
				for (const [id, v] of this.views) {
					if (v.terminal === t) {
						this.views.delete(id);
						v.write.dispose();
					}
				}
			}),
		);
	}

	/** Shows a call's output in a terminal (made on first use), with what it printed so far. */
	show(call: ToolEntry): vscode.Terminal {
		const had = this.views.get(call.callId);
		if (had) {
			had.terminal.show(true);
			return had.terminal;
		}
		const write = new vscode.EventEmitter<string>();
		const view: View = {
			terminal: undefined as unknown as vscode.Terminal,
			write,
			written: call.output,
			filter: new TerminalFilter(),
			opened: false,
			ended: FINAL_TOOL_STATUSES.includes(call.status) ? call.status : undefined,
		};
		const command = commandOf(call);
		const pty: vscode.Pseudoterminal = {
			onDidWrite: write.event,
			open: () => {
				view.opened = true;
				// The command line is the model's: shown with its hidden characters spelled out.
				write.fire(`\x1b[2m$ ${commandLineText(command)}\r\n(kin runs this command; this is a view of its output. Ctrl+C stops the turn.)\x1b[0m\r\n`);
				write.fire(view.filter.push(view.written));
				if (view.ended) {
					this.end(view, view.ended);
				}
			},
			close: () => undefined,
			handleInput: (data) => {
				if (data === '\x03' && !view.ended) {
					write.fire('^C\r\n');
					void this.cancel();
				}
			},
		};
		view.terminal = vscode.window.createTerminal({ name: terminalName(call.title), pty, iconPath: new vscode.ThemeIcon('terminal') });
		this.views.set(call.callId, view);
		view.terminal.show(true);
		return view.terminal;
	}

	private update(p: ToolCallParams): void {
		const v = this.views.get(p.callId);
		if (!v || v.ended) {
			return;
		}
		let more = p.outputDelta ?? '';
		if (FINAL_TOOL_STATUSES.includes(p.status)) {
			// The final output may add what was not streamed (such as the exit status).
			const all = v.written + more;
			if (p.output !== undefined && p.output.startsWith(all)) {
				more += p.output.slice(all.length);
			}
			v.ended = p.status;
		}
		v.written += more;
		if (v.opened) {
			if (more) {
				v.write.fire(v.filter.push(more));
			}
			if (v.ended) {
				this.end(v, v.ended);
			}
		}
	}

	private end(v: View, status: string): void {
		v.write.fire(`\x1b[0m\r\n\x1b[2m[kin: the command ended: ${status}]\x1b[0m\r\n`);
	}

	dispose(): void {
		for (const v of this.views.values()) {
			v.write.dispose();
		}
		this.subs.forEach((d) => d.dispose());
	}
}

/** The command line of a bash call (its `command` argument), else the call's title. */
function commandOf(call: ToolEntry): string {
	try {
		const a = JSON.parse(call.arguments ?? '{}');
		if (typeof a.command === 'string') {
			return a.command;
		}
	} catch {
		// not JSON: fall back to the title
	}
	return call.title;
}

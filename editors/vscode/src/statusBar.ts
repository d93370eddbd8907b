// One status bar item: connected / busy / waiting for approval or for an answer (the warning
// background while something waits for the person) / stopped / failed. Clicking it opens the chat.

import * as vscode from 'vscode';
import { StatusInputs, describe } from './statusText';

export class StatusBar implements vscode.Disposable {
	private readonly item = vscode.window.createStatusBarItem('kin.status', vscode.StatusBarAlignment.Left, 10);

	constructor() {
		this.item.name = 'kin';
		this.item.command = 'kin.openChat';
		this.item.show();
	}

	update(s: StatusInputs): void {
		const { text, tooltip, warn, error } = describe(s);
		this.item.text = text;
		this.item.tooltip = tooltip;
		this.item.backgroundColor = error
			? new vscode.ThemeColor('statusBarItem.errorBackground')
			: warn
				? new vscode.ThemeColor('statusBarItem.warningBackground')
				: undefined;
	}

	dispose(): void {
		this.item.dispose();
	}
}

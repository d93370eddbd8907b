// Notifications (and an input box's prompt and validation message) that show text kin did not
// write itself: a tool call's title (the model's command), a form's question (the model's, with
// kin's ask tool, or an MCP server's), an error a service or server sent, a path of the
// repository.
//
// VS Code turns `[label](command:…)`, `[label](file:…)` and `[label](https://…)` in those texts
// into links, and opens them with every command allowed (workbench's NotificationMessageRenderer
// and quick input's prompt). A model writing `[Review](command:workbench.action.terminal.
// sendSequence?…)` in a command or question got a link in the toast that typed its text into
// the person's terminal, outside kin's sandbox and without an approval. No text here is meant as
// a link, so the link syntax is broken before VS Code reads it.

import * as vscode from 'vscode';

/**
 * The text with VS Code's link syntax broken: a space between `]` and `(` (its pattern needs
 * them adjacent). What the person reads stays the same but for that space.
 */
export function noLinks(text: string): string {
	return text.replace(/\]\(/g, '] (');
}

/** vscode.window.showInformationMessage with the message shown as plain text. */
export function showInfo<T extends string>(message: string, ...items: T[]): Thenable<T | undefined> {
	return vscode.window.showInformationMessage(noLinks(message), ...items);
}

/** vscode.window.showWarningMessage with the message shown as plain text. */
export function showWarning<T extends string>(message: string, ...items: T[]): Thenable<T | undefined> {
	return vscode.window.showWarningMessage(noLinks(message), ...items);
}

/** vscode.window.showErrorMessage with the message shown as plain text. */
export function showError<T extends string>(message: string, ...items: T[]): Thenable<T | undefined> {
	return vscode.window.showErrorMessage(noLinks(message), ...items);
}

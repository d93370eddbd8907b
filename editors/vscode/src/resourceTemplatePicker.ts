// A resource template's variable asked as a QuickPick that takes free text (chat/resourceTemplates.ts
// asks them in order and asks the server for values): the server's values as items, what is typed
// as the last item, Enter chooses, Escape cancels the whole template.

import * as vscode from 'vscode';
import { fillTemplate, type ArgumentQuestion } from './chat/resourceTemplates';
import type { Requester } from './protocol/connection';

interface ValuePick extends vscode.QuickPickItem {
	value?: string;
}

/** Shows one question until a value is chosen (resolves with it) or the pick is hidden (undefined). */
export function askArgument(q: ArgumentQuestion): Promise<string | undefined> {
	return new Promise((resolve) => {
		const qp = vscode.window.createQuickPick<ValuePick>();
		qp.title = q.title;
		qp.placeholder = q.placeholder;
		let done = false;
		q.onShown = (s) => {
			// The server's values match what is typed in its own way (a prefix, a fuzzy match):
			// alwaysShow keeps the QuickPick's own filter from hiding any.
			qp.items = s.items.map((i) => ({ label: i.value, alwaysShow: true, value: i.value, ...(i.typed ? { description: 'as typed' } : {}) }));
			qp.busy = s.busy;
			// A separator would be hidden while filtering: the title says it.
			qp.title = s.note ? `${q.title} · ${s.note}` : q.title;
		};
		qp.onDidChangeValue((v) => q.typed(v));
		qp.onDidAccept(() => {
			const value = qp.selectedItems[0]?.value ?? qp.activeItems[0]?.value ?? qp.value;
			if (!value) {
				return; // nothing typed or chosen yet: the question stays
			}
			done = true;
			resolve(value);
			qp.hide();
		});
		qp.onDidHide(() => {
			if (!done) {
				resolve(undefined);
			}
			qp.dispose();
		});
		qp.show();
		q.typed('');
	});
}

/** Fills a template of a server by asking the person, or undefined when they cancel. */
export function pickTemplateUri(rpc: Requester, server: string, template: string): Promise<string | undefined> {
	return fillTemplate(rpc, server, template, askArgument);
}

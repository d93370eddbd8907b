// A small stand-in for the `vscode` module, so a unit test can run extension code that shows
// quick inputs and notifications: it records every call a person would see. Import it before the
// code under test (its require hook must be in place when that code loads `vscode`).

import Module from 'node:module';

export interface Shown {
	/** What opened, in order: createQuickPick, createInputBox, showInputBox, showQuickPick, showWarningMessage… */
	calls: { name: string; args: unknown[] }[];
	/** The quick inputs created, newest last. */
	inputs: FakeInput[];
}

export const shown: Shown = { calls: [], inputs: [] };

type Listener<T> = (e: T) => void;

class EventEmitter<T> {
	private listeners: Listener<T>[] = [];
	event = (fn: Listener<T>) => {
		this.listeners.push(fn);
		return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== fn)) };
	};
	fire(e: T): void {
		[...this.listeners].forEach((l) => l(e));
	}
	dispose(): void {
		this.listeners = [];
	}
}

class CancellationTokenSource {
	private readonly emitter = new EventEmitter<void>();
	token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
	cancel(): void {
		if (!this.token.isCancellationRequested) {
			this.token.isCancellationRequested = true;
			this.emitter.fire();
		}
	}
	dispose(): void {}
}

/** A quick pick or input box: the test reads what it shows and plays the person's keys. */
export class FakeInput {
	value = '';
	title = '';
	prompt: string | undefined;
	placeholder: string | undefined;
	validationMessage: string | undefined;
	items: unknown[] = [];
	activeItems: unknown[] = [];
	selectedItems: unknown[] = [];
	buttons: unknown[] = [];
	visible = false;
	private readonly accept = new EventEmitter<void>();
	private readonly hidden = new EventEmitter<void>();
	private readonly changed = new EventEmitter<string>();
	private readonly button = new EventEmitter<unknown>();
	onDidAccept = this.accept.event;
	onDidHide = this.hidden.event;
	onDidChangeValue = this.changed.event;
	onDidTriggerButton = this.button.event;
	constructor(readonly kind: 'quickPick' | 'inputBox') {}
	show(): void {
		this.visible = true;
	}
	hide(): void {
		if (this.visible) {
			this.visible = false;
			this.hidden.fire();
		}
	}
	dispose(): void {}
	/** The person types text and presses Enter. */
	type(text: string): void {
		this.value = text;
		this.changed.fire(text);
		this.accept.fire();
	}
}

const api = {
	EventEmitter,
	CancellationTokenSource,
	ThemeIcon: class {
		constructor(readonly id: string) {}
	},
	QuickInputButtons: { Back: { tooltip: 'Back' } },
	Uri: { parse: (s: string) => ({ toString: () => s }) },
	env: { openExternal: async () => false },
	window: {
		createQuickPick: () => record('createQuickPick', [], new FakeInput('quickPick')),
		createInputBox: () => record('createInputBox', [], new FakeInput('inputBox')),
		showInputBox: (...args: unknown[]) => record('showInputBox', args, Promise.resolve(undefined)),
		showQuickPick: (...args: unknown[]) => record('showQuickPick', args, Promise.resolve(undefined)),
		showWarningMessage: (...args: unknown[]) => record('showWarningMessage', args, Promise.resolve(undefined)),
		showErrorMessage: (...args: unknown[]) => record('showErrorMessage', args, Promise.resolve(undefined)),
		showInformationMessage: (...args: unknown[]) => record('showInformationMessage', args, Promise.resolve(undefined)),
	},
};

function record<T>(name: string, args: unknown[], r: T): T {
	shown.calls.push({ name, args });
	if (r instanceof FakeInput) {
		shown.inputs.push(r);
	}
	return r;
}

// The extension is bundled with `vscode` external: its require('vscode') lands here.
const M = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = M._load;
M._load = function (request: string, ...rest: unknown[]) {
	return request === 'vscode' ? api : load.call(this, request, ...rest);
};

// The person at the keyboard: opens code-server in Debian's chromium (through playwright-core, which
// never downloads a browser) with the test harness loaded as a development extension (VS Code
// web's `payload` parameter, honoured when the server runs with enable-smoke-test-driver; the
// kin extension itself is installed from its .vsix, since the payload holds one
// extensionDevelopmentPath only), then does what the tests ask through a folder of request files:
// click a button in a dialog, answer a quick input, look into the chat webview, take a
// screenshot.
//
// The harness is a second development extension, not an `extensionTestsPath` runner: with
// extensionTestsPath set, VS Code's DialogService refuses every modal dialog ("DialogService:
// refused to show dialog in tests"), and the approval dialogs are what these tests must click.
// The harness writes result.json into the signal folder when its tests end.
//
// Environment:
//   KIN_CS_URL        code-server's base URL (http://127.0.0.1:PORT)
//   KIN_EXT_DEV       the test harness extension folder (absolute)
//   KIN_WORKSPACE     the folder to open
//   KIN_SIGNAL_DIR    where tests write req-N.json and this driver answers ack-N.json
//   KIN_EXT_ENV       JSON object: environment for the extension host (optional)
//   KIN_TIMEOUT_MS    give up after this long (default 300000)
//   KIN_ARTIFACTS     where to leave a screenshot when something fails (optional)

import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k, d) => {
	const v = process.env[k] ?? d;
	if (v === undefined) {
		console.error(`driver: ${k} is not set`);
		process.exit(2);
	}
	return v;
};

const base = env('KIN_CS_URL');
const devPath = env('KIN_EXT_DEV');
const workspace = env('KIN_WORKSPACE');
const signalDir = env('KIN_SIGNAL_DIR');
const extEnv = env('KIN_EXT_ENV', '{}');
const timeoutMs = Number(env('KIN_TIMEOUT_MS', '300000'));
const artifacts = process.env.KIN_ARTIFACTS;
const started = Date.now();
const log = (...a) => console.log(`[driver ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

const host = new URL(base).host;
const remote = (p) => `vscode-remote://${host}${p}`;
const payload = [
	['extensionDevelopmentPath', remote(devPath)],
	['extensionEnvironment', extEnv],
	['skipWelcome', 'true'],
	['skipReleaseNotes', 'true'],
];
const url = `${base}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

const userDataDir = fs.mkdtempSync(path.join(process.env.TMPDIR || '/tmp', 'kin-chromium-'));
const browser = await chromium.launchPersistentContext(userDataDir, {
	executablePath: process.env.KIN_CHROMIUM || '/usr/bin/chromium',
	headless: true,
	viewport: { width: 1400, height: 900 },
	args: [
		'--no-sandbox',
		'--disable-gpu',
		'--disable-quic',
		'--no-first-run',
		'--disable-background-networking',
		'--disable-component-update',
		'--disable-sync',
	],
});

// The copy button goes through VS Code's clipboard, which in a browser is the page's.
await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });

let exitCode;
let finish;
const finished = new Promise((resolve) => (finish = resolve));
const page = browser.pages()[0] ?? (await browser.newPage());
await page.exposeFunction('codeAutomationExit', (code) => {
	log(`the extension host exited with code ${code}`);
	exitCode = code || 1;
	finish();
});
await page.exposeFunction('codeAutomationLog', (type, args) => console.log(`[ext ${type}]`, ...(args ?? [])));
page.on('console', (m) => {
	const t = m.text();
	if (process.env.KIN_DRIVER_VERBOSE || /\[kin-test\]|Extension Host|ERR|rror/.test(t)) {
		console.log(`[page ${m.type()}] ${t.slice(0, 2000)}`);
	}
});
page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));

log(`opening ${base} (workspace ${workspace})`);
await page.goto(url);

// ---- what the tests may ask for ----

const dialog = () => page.locator('.monaco-dialog-box');
const quickInput = () => page.locator('.quick-input-widget');

async function waitFor(fn, ms, what) {
	const end = Date.now() + ms;
	let last;
	while (Date.now() < end) {
		try {
			const v = await fn();
			if (v) {
				return v;
			}
		} catch (e) {
			last = e;
		}
		await page.waitForTimeout(100);
	}
	throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

async function visibleDialogText(contains) {
	const d = dialog();
	if ((await d.count()) === 0 || !(await d.first().isVisible())) {
		return undefined;
	}
	const text = await d.first().innerText();
	return text.includes(contains) ? text : undefined;
}

/** The frame of the chat webview (webviews live in nested iframes). */
async function chatFrame(ms = 15000) {
	return waitFor(
		async () => {
			for (const f of page.frames()) {
				if (await f.evaluate(() => !!document.getElementById('kin-chat')).catch(() => false)) {
					return f;
				}
			}
			return undefined;
		},
		ms,
		'the chat view',
	);
}

/** The card in the chat's dock whose text includes `contains`. */
async function cardLocator(contains, ms) {
	return waitFor(
		async () => {
			const f = await chatFrame(ms);
			const c = f.locator('#dock .card', { hasText: contains });
			return (await c.count()) > 0 && (await c.first().isVisible()) ? c.first() : undefined;
		},
		ms,
		`a card with "${contains}" in the chat`,
	);
}

/** What has the keyboard focus in the chat view: its element, option and text. */
async function focusedInChat() {
	const f = await chatFrame();
	return f.evaluate(() => {
		const a = document.activeElement;
		return {
			tag: a?.tagName.toLowerCase(),
			id: a?.id || undefined,
			option: a?.dataset?.option,
			text: (a?.innerText ?? '').slice(0, 200),
			inCard: !!a?.closest?.('.card'),
			hasFocus: document.hasFocus(),
		};
	});
}

const handlers = {
	// Answer the card in the chat that shows `contains`, as a person does: `click` a button by its
	// label, or focus the card (a click on its heading) and press `<enter>` or `<escape>`; with
	// `keys`, press those keys where the focus is (after `focusCard`, the card's default button).
	// Returns the card's text and its buttons' labels in order.
	async card(req) {
		const card = await cardLocator(req.contains, req.timeoutMs ?? 30000);
		const text = await card.innerText();
		const buttons = (await card.locator('.buttons button').allInnerTexts()).map((t) => t.trim());
		const defaultButton = (await card.locator('.buttons button[data-default]').innerText()).trim();
		if (req.click === '<enter>' || req.click === '<escape>') {
			await card.locator('.card-head').click();
			await page.keyboard.press(req.click === '<enter>' ? 'Enter' : 'Escape');
		} else if (req.click) {
			const b = card.locator('.buttons button', { hasText: new RegExp(`^\\s*${escapeRe(req.click)}\\s*$`) });
			if ((await b.count()) === 0) {
				throw new Error(`no button "${req.click}" on the card; buttons: ${JSON.stringify(buttons)}`);
			}
			await b.first().click();
		}
		for (const k of req.keys ?? []) {
			await page.keyboard.press(k);
		}
		if (req.click || req.keys?.length) {
			// Answered: the buttons are disabled until kin resolves it, then the card goes.
			await waitFor(async () => (await card.count()) === 0 || (await card.locator('.buttons button:disabled').count()) > 0, 10000, 'the card to take the answer');
		}
		return { text, buttons, defaultButton };
	},

	// How many cards the chat's dock shows, and their texts.
	async cards() {
		const f = await chatFrame();
		return { texts: (await f.locator('#dock .card').allInnerTexts()).map((t) => t.trim()) };
	},

	// Scroll a card's diff with the mouse wheel until its end, and say whether its last line is in view.
	async scrollCardDiff(req) {
		const card = await cardLocator(req.contains, req.timeoutMs ?? 30000);
		const pre = card.locator('pre.diff').first();
		await pre.hover();
		for (let i = 0; i < 200; i++) {
			const done = await pre.evaluate((el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1);
			if (done) {
				break;
			}
			await page.mouse.wheel(0, 120);
			await page.waitForTimeout(30); // pacing the wheel, as a hand does; the loop ends on what the page shows
		}
		const r = await pre.evaluate((el) => {
			const lines = el.querySelectorAll('.line');
			const last = lines[lines.length - 1];
			const box = el.getBoundingClientRect();
			const lb = last.getBoundingClientRect();
			return {
				lines: lines.length,
				lastLine: last.textContent,
				lastLineVisible: lb.top >= box.top - 1 && lb.bottom <= box.bottom + 1,
				scrolled: el.scrollTop > 0,
				scrollable: el.scrollHeight > el.clientHeight,
			};
		});
		return { ...r, dialogOpen: (await dialog().count()) > 0 && (await dialog().first().isVisible()) };
	},

	// Choose an option of a <select> in the chat view, as a person does with the picker.
	async webviewSelect(req) {
		const f = await chatFrame();
		await f.locator(req.selector).selectOption(req.value);
		return {};
	},

	// How many elements of the chat view match (and how many of them a person can see), and the
	// value of the first (for pickers).
	async webviewQuery(req) {
		const f = await chatFrame();
		const el = f.locator(req.selector);
		const count = await el.count();
		const value = count ? await el.first().evaluate((e) => e.value ?? e.textContent) : undefined;
		let visible = 0;
		for (let i = 0; i < count; i++) {
			if (await el.nth(i).isVisible()) {
				visible++;
			}
		}
		return { count, value, visible };
	},

	// Where the transcript is scrolled: whether its newest message (the last .entry.assistant, or
	// the last entry) is in view, and whether "Jump to newest" shows.
	async transcriptView() {
		const f = await chatFrame();
		const r = await f.evaluate(() => {
			const t = document.getElementById('transcript');
			const entries = [...t.querySelectorAll(':scope > .entry')].filter((e) => e.getBoundingClientRect().height > 0);
			const answers = entries.filter((e) => e.classList.contains('assistant'));
			const last = answers[answers.length - 1] ?? entries[entries.length - 1];
			const box = t.getBoundingClientRect();
			const lb = last?.getBoundingClientRect();
			const jump = document.getElementById('jump');
			return {
				lastText: (last?.innerText ?? '').slice(0, 200),
				lastInView: !!lb && lb.bottom <= box.bottom + 1 && lb.bottom > box.top,
				atBottom: t.scrollHeight - t.scrollTop - t.clientHeight < 2,
				overflows: t.scrollHeight > t.clientHeight + 40,
				jumpShown: !!jump && !jump.hidden && jump.getBoundingClientRect().height > 0,
			};
		});
		return r;
	},

	// Scroll the transcript up with the mouse wheel, as a person does to read back.
	async scrollTranscriptUp(req) {
		const f = await chatFrame();
		await f.locator('#transcript').hover();
		for (let i = 0; i < (req.steps ?? 10); i++) {
			await page.mouse.wheel(0, -240);
		}
		await waitFor(async () => f.evaluate(() => {
			const t = document.getElementById('transcript');
			return t.scrollHeight - t.scrollTop - t.clientHeight > 100;
		}), 5000, 'the transcript to scroll up');
		return {};
	},

	// Click the CodeLens of the active editor whose text is `text` (the nth of them, 0-based).
	async codeLens(req) {
		const lens = () => page.locator('.monaco-editor .codelens-decoration a', { hasText: new RegExp(`^\\s*${escapeRe(req.text)}\\s*$`) });
		await waitFor(async () => (await lens().count()) > (req.nth ?? 0), req.timeoutMs ?? 20000, `the CodeLens "${req.text}"`);
		const all = await page.locator('.monaco-editor .codelens-decoration').allInnerTexts();
		if (req.click !== false) {
			await lens().nth(req.nth ?? 0).click();
		}
		return { lenses: all.map((t) => t.trim()) };
	},

	// The lenses the editors show now.
	async codeLenses() {
		return { lenses: (await page.locator('.monaco-editor .codelens-decoration').allInnerTexts()).map((t) => t.trim()).filter(Boolean) };
	},

	// Wait until a terminal of the panel shows `contains`, or a whole `line` (xterm's DOM rows).
	async terminalText(req) {
		const text = await waitFor(
			async () => {
				const t = (await page.locator('.terminal-wrapper .xterm-rows, .terminal .xterm-rows').allInnerTexts()).join('\n');
				const ok = req.line !== undefined ? t.split('\n').some((l) => l.trim() === req.line) : t.includes(req.contains);
				return ok ? t : undefined;
			},
			req.timeoutMs ?? 20000,
			`a terminal showing "${req.line ?? req.contains}"`,
		);
		return { text, lines: text.split('\n').map((l) => l.trim()) };
	},

	// Put a PNG on the clipboard (base64 `png`) and paste it into the chat input with Ctrl+V.
	async pasteImage(req) {
		await page.evaluate(async (b64) => {
			const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
			await navigator.clipboard.write([new ClipboardItem({ 'image/png': new Blob([bytes], { type: 'image/png' }) })]);
		}, req.png);
		const f = await chatFrame();
		await f.locator('#input').click();
		await page.keyboard.press('Control+v');
		return {};
	},

	// The texts of every notification in the notification centre (opened from the bell); with
	// `contains`, once one of them says it (the notification may come after what the chat shows,
	// and a loaded machine draws the centre's list late).
	async notificationTexts(req) {
		const bell = page.locator('.statusbar-item#status\\.notifications a, .statusbar-item#status\\.notifications').first();
		if (!(await page.locator('.notifications-center.visible').count()) && (await bell.count())) {
			await bell.click();
		}
		const items = page.locator('.notifications-center .notification-list-item');
		let texts;
		if (req.contains !== undefined) {
			texts = await waitFor(
				async () => {
					const all = (await items.allInnerTexts()).map((t) => t.trim());
					return all.some((t) => t.includes(req.contains)) ? all : undefined;
				},
				req.timeoutMs ?? 30000,
				`a notification with "${req.contains}"`,
			);
		} else {
			await page.waitForTimeout(300); // the centre draws its list
			texts = (await items.allInnerTexts()).map((t) => t.trim());
		}
		await page.keyboard.press('Escape');
		return { texts };
	},

	// What the chat's toolbar showed from the moment the reloaded window drew it (see reload).
	async toolbarSeen() {
		toolbarWatch.stop = true;
		await toolbarWatch.done;
		return { seen: toolbarWatch.seen };
	},

	// The text in the chat's input box (a textarea's value is not in innerText).
	async inputValue() {
		const f = await chatFrame();
		return { value: await f.locator('#input').inputValue() };
	},

	// What has the keyboard focus in the chat view.
	async chatFocus() {
		return { focus: await focusedInChat() };
	},

	// Type text where the keyboard focus is (an editor the test focused).
	async type(req) {
		await page.keyboard.type(req.text, { delay: 5 });
		return {};
	},

	// Whether the workbench shows a diff editor, and no modal dialog over it.
	async diffEditorShown(req) {
		await waitFor(async () => (await page.locator('.monaco-diff-editor').count()) > 0 && (await page.locator('.monaco-diff-editor').first().isVisible()), req.timeoutMs ?? 15000, 'a diff editor');
		const dialogOpen = (await dialog().count()) > 0 && (await dialog().first().isVisible());
		return { dialogOpen };
	},

	// Click a button of the modal dialog whose text includes `contains`.
	async dialog(req) {
		const text = await waitFor(() => visibleDialogText(req.contains), req.timeoutMs ?? 30000, `a dialog with "${req.contains}"`);
		const buttons = dialog().first().locator('.dialog-buttons .monaco-button');
		const titles = await buttons.allInnerTexts();
		if (req.click === '<escape>') {
			await page.keyboard.press('Escape');
		} else if (req.click === '<enter>') {
			await page.keyboard.press('Enter');
		} else {
			const i = titles.findIndex((t) => t.trim() === req.click);
			if (i < 0) {
				throw new Error(`no button "${req.click}" in the dialog; buttons: ${JSON.stringify(titles)}`);
			}
			await buttons.nth(i).click();
		}
		await waitFor(async () => !(await visibleDialogText(req.contains)), 10000, 'the dialog to close');
		return { text, buttons: titles.map((t) => t.trim()) };
	},

	// Answer the open quick input (QuickPick or InputBox) whose title includes `titleContains`:
	// `pick` chooses an item by its label, `value` types text, `escape` dismisses it.
	async quickInput(req) {
		const title = await waitFor(
			async () => {
				const q = quickInput();
				if ((await q.count()) === 0 || !(await q.first().isVisible())) {
					return undefined;
				}
				const t = await q.first().locator('.quick-input-title').innerText().catch(() => '');
				return t.includes(req.titleContains) ? t : undefined;
			},
			req.timeoutMs ?? 30000,
			`a quick input titled "${req.titleContains}"`,
		);
		if (req.answers) {
			// Answer whichever field is asked: the key is the label at the end of the title.
			const key = Object.keys(req.answers).find((k) => title.includes(`: ${k}`));
			if (!key) {
				throw new Error(`no answer for the quick input "${title}"`);
			}
			req = { ...req, ...req.answers[key], answers: undefined };
		}
		const input = quickInput().first().locator('.quick-input-box input');
		let shown;
		if (req.expectText) {
			// What the person sees: the widget's text and the input's placeholder (a QuickPick's
			// line of help).
			shown = await waitFor(
				async () => {
					const t = `${await quickInput().first().innerText()}\n${(await input.getAttribute('placeholder').catch(() => '')) ?? ''}`;
					return t.includes(req.expectText) ? t : undefined;
				},
				10000,
				`"${req.expectText}" in the quick input`,
			);
		}
		if (req.look) {
			return { title, shown }; // only look: the person leaves it open
		}
		if (req.button) {
			// A button of the quick input's title bar (Back, or one of the extension's by its tooltip).
			const b = quickInput().first().locator(`.quick-input-titlebar [aria-label="${req.button}"], .quick-input-titlebar [aria-label^="${req.button} ("]`);
			await waitFor(async () => (await b.count()) > 0, 10000, `the button "${req.button}"`).catch(async (e) => {
				const html = await quickInput().first().locator('.quick-input-titlebar').innerHTML().catch(() => '');
				throw new Error(`${e.message}; the title bar: ${html.slice(0, 3000)}`);
			});
			await b.first().click();
		} else if (req.escape) {
			// A person presses Escape at the box that has the keyboard: pressed once the next
			// step's title shows but before its input took focus, the key went nowhere and the
			// step stayed open (seen in CI).
			await waitFor(async () => input.evaluate((el) => el === document.activeElement), 10000, 'the quick input to take the keyboard');
			await page.keyboard.press('Escape');
		} else if (req.pick !== undefined || req.pickContains !== undefined) {
			// `pick` is an item's whole label; `pickContains` a part of it (a label with an icon).
			const name = req.pick !== undefined ? new RegExp(`^\\s*${escapeRe(req.pick)}\\s*$`) : new RegExp(escapeRe(req.pickContains));
			const row = quickInput()
				.first()
				.locator('.monaco-list-row')
				.filter({ has: page.locator('.label-name', { hasText: name }) });
			await waitFor(async () => (await row.count()) > 0, 10000, `item "${req.pick ?? req.pickContains}"`);
			shown = shown ?? (await quickInput().first().innerText());
			// An item's hover (its detail, shown where the pointer rests) can lie over the row that
			// is to be clicked, as a person's would; move the pointer off the list to close it first,
			// and once more if it came back.
			for (let attempt = 1; ; attempt++) {
				await input.hover().catch(() => {});
				await page.waitForTimeout(150);
				try {
					await row.first().click({ timeout: 8000 });
					break;
				} catch (e) {
					if (attempt >= 3) {
						throw e;
					}
				}
			}
		} else {
			await input.fill(String(req.value));
			if (req.expectValidation) {
				const msg = await waitFor(
					async () => {
						const m = await quickInput().first().locator('.quick-input-message').innerText().catch(() => '');
						return m.includes(req.expectValidation) ? m : undefined;
					},
					10000,
					`validation "${req.expectValidation}"`,
				);
				await input.fill(String(req.thenValue));
				await page.waitForTimeout(300);
				await page.keyboard.press('Enter');
				return { title, validation: msg };
			}
			await page.waitForTimeout(200);
			await page.keyboard.press('Enter');
		}
		await waitFor(
			async () => {
				const q = quickInput();
				if ((await q.count()) === 0 || !(await q.first().isVisible())) {
					return true;
				}
				const t = await q.first().locator('.quick-input-title').innerText().catch(() => '');
				return t !== title;
			},
			10000,
			'the quick input to move on',
		);
		return { title, shown };
	},

	// Wait until no quick input is open (a form kin closed).
	async quickInputGone(req) {
		await waitFor(
			async () => {
				const q = quickInput();
				return (await q.count()) === 0 || !(await q.first().isVisible());
			},
			req.timeoutMs ?? 10000,
			'the quick input to close',
		);
		return {};
	},

	// Wait until the chat webview shows `contains` (webviews live in nested iframes).
	async webviewText(req) {
		const text = await waitFor(
			async () => {
				for (const f of page.frames()) {
					const t = await f.evaluate(() => (document.getElementById('kin-chat') ? document.body.innerText : '')).catch(() => '');
					if (t && t.includes(req.contains)) {
						return t;
					}
				}
				return undefined;
			},
			req.timeoutMs ?? 30000,
			`the chat view to show "${req.contains}"`,
		);
		return { text };
	},

	// Click a button of the notification that shows `contains` (without `click`: read it, clear it). VS Code shows no toasts in smoke-test
	// driver mode (NotificationsToasts.addToast), so the person opens the notification centre from
	// the status bar's bell, as they would after missing a toast, and clicks the button there.
	async notification(req) {
		const item = () => page.locator('.notification-toast, .notifications-center .notification-list-item', { hasText: req.contains });
		const bell = page.locator('.statusbar-item#status\\.notifications a, .statusbar-item#status\\.notifications').first();
		await waitFor(
			async () => {
				if ((await item().count()) > 0 && (await item().first().isVisible())) {
					return true;
				}
				if (!(await page.locator('.notifications-center.visible').count()) && (await bell.count())) {
					await bell.click();
				}
				return false;
			},
			req.timeoutMs ?? 20000,
			`a notification "${req.contains}"`,
		);
		const text = await item().first().innerText();
		if (req.click) {
			// The bell's tooltip may cover the list's last button: the pointer leaves the bell first.
			await page.mouse.move(0, 0);
			const button = item().first().locator('.monaco-button', { hasText: req.click }).first();
			await button.scrollIntoViewIfNeeded();
			await button.click();
		} else {
			// Only read it: clear it, and close the notification centre as a person would.
			await item().first().hover();
			const clear = item().first().locator('.codicon-notifications-clear');
			if ((await clear.count()) > 0) {
				await clear.first().click();
			}
			if (await page.locator('.notifications-center.visible').count()) {
				await page.keyboard.press('Escape');
			}
		}
		return { text };
	},

	// Wait until an element of the workbench (outside webviews) shows `contains`.
	async pageText(req) {
		const text = await waitFor(
			async () => {
				const t = await page.locator(req.selector).first().innerText().catch(() => '');
				return t.includes(req.contains) ? t : undefined;
			},
			req.timeoutMs ?? 15000,
			`${req.selector} to show "${req.contains}"`,
		);
		return { text };
	},

	// Click an element of the chat webview by CSS selector.
	async webviewClick(req) {
		await waitFor(
			async () => {
				for (const f of page.frames()) {
					const el = f.locator(req.selector);
					if ((await f.evaluate(() => !!document.getElementById('kin-chat')).catch(() => false)) && (await el.count()) > 0) {
						await el.first().click();
						return true;
					}
				}
				return false;
			},
			req.timeoutMs ?? 15000,
			`${req.selector} in the chat view`,
		);
		return {};
	},

	// Type into an element of the chat webview (the input box).
	async webviewFill(req) {
		await waitFor(
			async () => {
				for (const f of page.frames()) {
					if (!(await f.evaluate(() => !!document.getElementById('kin-chat')).catch(() => false))) {
						continue;
					}
					const el = f.locator(req.selector);
					if ((await el.count()) > 0) {
						await el.first().fill(req.value);
						return true;
					}
				}
				return false;
			},
			req.timeoutMs ?? 15000,
			`${req.selector} in the chat view`,
		);
		return {};
	},

	async screenshot(req) {
		await page.waitForTimeout(req.settleMs ?? 500);
		await page.screenshot({ path: req.path, fullPage: false });
		log(`screenshot ${req.path}`);
		return { path: req.path };
	},

	// Reload the window (after the ack is written: the harness dies with the extension host).
	async reload() {
		reloadAfterAck = true;
		return {};
	},

	async key(req) {
		await page.keyboard.press(req.key);
		return {};
	},
};

function escapeRe(s) {
	return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---- the request loop ----

fs.mkdirSync(signalDir, { recursive: true });
const done = new Set();
let reloadAfterAck = false;
// toolbarWatch records what the chat's toolbar shows from the first moment the reloaded window
// draws the chat until the session is back (its first message drawn): the mode picker's value and
// whether the codicon font is there.
const toolbarWatch = { seen: [], stop: false, done: Promise.resolve() };
function watchToolbar() {
	toolbarWatch.seen = [];
	toolbarWatch.stop = false;
	toolbarWatch.done = (async () => {
		const end = Date.now() + 60000;
		while (!toolbarWatch.stop && Date.now() < end) {
			for (const f of page.frames()) {
				const s = await f
					.evaluate(() => {
						const mode = document.getElementById('mode');
						if (!mode) {
							return undefined;
						}
						return {
							mode: mode.value,
							model: document.getElementById('model')?.selectedOptions[0]?.textContent ?? '',
							font: document.fonts.check('16px codicon'),
							entries: document.querySelectorAll('#transcript > .entry').length,
						};
					})
					.catch(() => undefined);
				if (s) {
					toolbarWatch.seen.push(s);
					if (s.entries > 0) {
						return;
					}
				}
			}
			await page.waitForTimeout(20); // sampling the page while it loads; the loop ends on what it shows
		}
	})();
}
async function serve() {
	while (exitCode === undefined) {
		const reqs = fs
			.readdirSync(signalDir)
			.filter((f) => /^req-\d+\.json$/.test(f) && !done.has(f))
			.sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
		for (const f of reqs) {
			done.add(f);
			const n = f.match(/\d+/)[0];
			let ack;
			let req;
			try {
				req = JSON.parse(fs.readFileSync(path.join(signalDir, f), 'utf8'));
				log(`request ${n}: ${JSON.stringify(req)}`);
				const h = handlers[req.type];
				if (!h) {
					throw new Error(`unknown request type ${req.type}`);
				}
				ack = { ok: true, ...(await h(req)) };
			} catch (e) {
				log(`request ${n} failed: ${e.message}`);
				if (artifacts) {
					await page.screenshot({ path: path.join(artifacts, `failed-request-${n}.png`) }).catch(() => {});
				}
				ack = { ok: false, error: e.message };
			}
			const tmp = path.join(signalDir, `.ack-${n}.json`);
			fs.writeFileSync(tmp, JSON.stringify(ack));
			fs.renameSync(tmp, path.join(signalDir, `ack-${n}.json`));
			if (reloadAfterAck) {
				reloadAfterAck = false;
				await page.waitForTimeout(500);
				log('reloading the window');
				await page.reload();
				watchToolbar();
			}
		}
		const resultFile = path.join(signalDir, 'result.json');
		if (fs.existsSync(resultFile)) {
			const r = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
			log(`harness finished: ${r.passed} passed, ${r.failed} failed`);
			exitCode = r.failed === 0 && r.passed > 0 ? 0 : 1;
			finish();
			return;
		}
		await Promise.race([finished, new Promise((r) => setTimeout(r, 100))]);
	}
}

const timer = setTimeout(() => {
	log(`timed out after ${timeoutMs} ms`);
	exitCode = 124;
	finish();
}, timeoutMs);
await Promise.race([serve(), finished]);
await finished;
clearTimeout(timer);
if (exitCode !== 0 && artifacts) {
	await page.screenshot({ path: path.join(artifacts, 'final.png') }).catch(() => {});
}
await browser.close().catch(() => {});
fs.rmSync(userDataDir, { recursive: true, force: true });
process.exit(exitCode ?? 1);

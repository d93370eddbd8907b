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

const handlers = {
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
			shown = await waitFor(
				async () => {
					const t = await quickInput().first().innerText();
					return t.includes(req.expectText) ? t : undefined;
				},
				10000,
				`"${req.expectText}" in the quick input`,
			);
		}
		if (req.escape) {
			await page.keyboard.press('Escape');
		} else if (req.pick !== undefined) {
			const row = quickInput()
				.first()
				.locator('.monaco-list-row')
				.filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(req.pick)}$`) }) });
			await waitFor(async () => (await row.count()) > 0, 10000, `item "${req.pick}"`);
			await row.first().click();
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

	// Click a button of the notification toast that shows `contains`.
	async notification(req) {
		const toast = page.locator('.notification-toast', { hasText: req.contains });
		await waitFor(async () => (await toast.count()) > 0 && (await toast.first().isVisible()), req.timeoutMs ?? 20000, `a notification "${req.contains}"`);
		const text = await toast.first().innerText();
		await toast.first().locator('.monaco-button', { hasText: req.click }).first().click();
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

// The integration tests, run inside VS Code's extension host (code-server) beside the kin
// extension, against the real `kin serve` and the scripted mock model. A person's part (clicking
// dialog buttons, answering quick inputs, typing into the chat) is done for real in the browser
// by test/integration/driver.mjs, which this asks through request files (see `person`).
//
// This is loaded as a second development extension rather than through extensionTestsPath,
// because VS Code refuses modal dialogs while extension tests run ("DialogService: refused to
// show dialog in tests"), and VS Code's own dialogs (the "open external website?" prompt, the
// server-launch Delete confirmation) are part of what is under test here. Approvals are cards in
// the chat view, answered in the chat webview by the driver.

import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { KinApi, KinContext } from '../../../src/extension';
import type { ToolEntry, UserEntry } from '../../../src/chat/transcript';

const signalDir = process.env.KIN_SIGNAL_DIR ?? '';
const screenshotDir = process.env.KIN_SCREENSHOT_DIR ?? '';
const expectPath = process.env.KIN_EXPECT_PATH ?? '';
const expectLog = process.env.KIN_EXPECT_LOG ?? '';
const reloadState = path.join(signalDir, 'reload-state.json');
// Request numbers are unique across the window reload (the driver remembers what it handled).
let reqN = fs.existsSync(reloadState) ? 1000 : 0;

function log(msg: string): void {
	console.log(`[kin-test] ${msg}`);
	fs.appendFileSync(path.join(signalDir, 'harness.log'), `${new Date().toISOString()} ${msg}\n`);
}

/** Asks the driver (the person at the browser) to do something, and waits until it is done. */
async function person(req: Record<string, unknown>, timeoutMs = 60000): Promise<any> {
	const n = ++reqN;
	const tmp = path.join(signalDir, `.req-${n}.json`);
	fs.writeFileSync(tmp, JSON.stringify(req));
	fs.renameSync(tmp, path.join(signalDir, `req-${n}.json`));
	const ack = path.join(signalDir, `ack-${n}.json`);
	const end = Date.now() + timeoutMs;
	while (Date.now() < end) {
		if (fs.existsSync(ack)) {
			const a = JSON.parse(fs.readFileSync(ack, 'utf8'));
			if (!a.ok) {
				throw new Error(`the driver could not ${req.type}: ${a.error}`);
			}
			return a;
		}
		await sleep(50);
	}
	throw new Error(`the driver did not answer ${JSON.stringify(req)}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until fn (sync or async) returns something truthy; the bound only gives up on a hang. */
async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20000): Promise<T> {
	const end = Date.now() + timeoutMs;
	while (Date.now() < end) {
		const v = await fn();
		if (v) {
			return v;
		}
		await sleep(50);
	}
	throw new Error(`timed out waiting for ${what}`);
}

/** Resolves with the next notification `method` whose params satisfy `match`. */
function next(ctx: KinContext, method: string, match: (p: any) => boolean = () => true, timeoutMs = 30000): Promise<any> {
	return new Promise((resolve, reject) => {
		const t = setTimeout(() => {
			d.dispose();
			reject(new Error(`no ${method} within ${timeoutMs} ms`));
		}, timeoutMs);
		const d = ctx.service.onNotification(method, (p) => {
			if (match(p)) {
				clearTimeout(t);
				d.dispose();
				resolve(p);
			}
		});
	});
}

function tool(ctx: KinContext, callId: string): ToolEntry | undefined {
	return ctx.chat.state.entries.find((e): e is ToolEntry => e.type === 'tool' && sameCall(e.callId, callId));
}

/** The newest card of a call (the mock gives a call the same id each time it is asked again). */
function lastTool(ctx: KinContext, callId: string): ToolEntry | undefined {
	return ctx.chat.state.entries.filter((e): e is ToolEntry => e.type === 'tool' && sameCall(e.callId, callId)).pop();
}

/**
 * Whether kin's call id is the mock's: the mock gives a call the same id each time it is asked
 * again, and kin gives a call id the session already has a fresh one (the mock's id, `_` and a
 * random suffix), so that no two calls of a session share one.
 */
function sameCall(kins: string, mocks: string): boolean {
	return kins === mocks || (kins.startsWith(mocks + '_') && /^[A-Za-z0-9]+$/.test(kins.slice(mocks.length + 1)));
}

/**
 * Runs the mock's slow command and kills kin (SIGKILL) while it runs: the extension restarts kin
 * and resumes the session, whose call is then `unknown` (kin died before it could know).
 */
async function killKinDuringTheSlowCommand(ctx: KinContext): Promise<void> {
	const sid = ctx.chat.sessionId;
	await ctx.chat.send('run the slow command');
	await person({ type: 'card', contains: 'sleep 30', click: 'Allow once' });
	await until('the slow command to run', () => lastTool(ctx, 'call_slow')?.status === 'running');
	const child = (ctx.service as unknown as { child?: { pid?: number; kill(sig: string): boolean } }).child;
	assert.ok(child?.pid, "kin's process");
	child.kill('SIGKILL');
	await until('kin to be started again', () => ctx.service.state === 'ready' && (ctx.service as unknown as { child?: unknown }).child !== child, 30000);
	await until('the session resumed', () => ctx.chat.sessionId === sid, 30000);
	await until('the killed call to read unknown', () => lastTool(ctx, 'call_slow')?.status === 'unknown', 30000).catch((e) => {
		throw new Error(`${e.message}: it reads ${lastTool(ctx, 'call_slow')?.status}`);
	});
}

/** Every file under dir (a missing dir has none). */
function filesUnder(dir: string): string[] {
	if (!fs.existsSync(dir)) {
		return [];
	}
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? filesUnder(path.join(dir, d.name)) : d.isFile() ? [path.join(dir, d.name)] : []));
}

/** Records the requests the extension sends (they still go to kin). */
function recordRequests(ctx: KinContext): { calls: { method: string; params: any }[]; stop: () => void } {
	const calls: { method: string; params: any }[] = [];
	const orig = ctx.service.request.bind(ctx.service);
	(ctx.service as any).request = (method: string, params?: unknown, signal?: AbortSignal) => {
		calls.push({ method, params });
		return orig(method, params, signal);
	};
	return { calls, stop: () => ((ctx.service as any).request = orig) };
}

type Outcome = 'passed' | 'failed' | 'skipped';
interface Result {
	name: string;
	outcome: Outcome;
	ms: number;
	error?: string;
	note?: string;
}

class Skip extends Error {}

async function main(): Promise<void> {
	const results: Result[] = [];
	const ext = vscode.extensions.getExtension<KinApi>('kin.kin');
	assert.ok(ext, 'the kin extension is loaded');
	const api = await ext.activate();
	const ctx = api.ctx;
	const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
	log(`workspace ${ws}; kin.path ${vscode.workspace.getConfiguration('kin').get('path')}`);
	await until('the service to be ready', () => ctx.service.state === 'ready' || undefined, 60000).catch(async (e) => {
		await ctx.service.ready();
		return e;
	});
	const init = ctx.service.initializeResult!;
	log(`kin ${init.serverInfo?.version} ready; capabilities ${JSON.stringify(init.capabilities)}; model ${JSON.stringify(init.model)}`);

	const only = process.env.KIN_IT_ONLY ? new RegExp(process.env.KIN_IT_ONLY) : undefined;
	const it = async (name: string, fn: () => Promise<string | void>) => {
		if (only && !only.test(name)) {
			return;
		}
		const t0 = Date.now();
		log(`▶ ${name}`);
		try {
			const note = await fn();
			results.push({ name, outcome: 'passed', ms: Date.now() - t0, note: note || undefined });
			log(`ok - ${name} (${Date.now() - t0} ms)${note ? ` — ${note}` : ''}`);
		} catch (err) {
			if (err instanceof Skip) {
				results.push({ name, outcome: 'skipped', ms: Date.now() - t0, note: err.message });
				log(`skip - ${name}: ${err.message}`);
				return;
			}
			const msg = err instanceof Error ? err.stack ?? err.message : String(err);
			results.push({ name, outcome: 'failed', ms: Date.now() - t0, error: msg });
			log(`not ok - ${name}: ${msg}`);
			await person({ type: 'screenshot', path: path.join(signalDir, `failed-${results.length}.png`) }).catch(() => undefined);
		}
	};

	if (fs.existsSync(reloadState)) {
		// Phase 2, after the window reload: the extension must come back to the same session.
		const before = JSON.parse(fs.readFileSync(reloadState, 'utf8'));
		results.push(...before.results);
		await it('after a window reload the chat view resumes its session', async () => {
			await vscode.commands.executeCommand('kin.openChat');
			await until('the session to be resumed', () => ctx.chat.sessionId === before.sessionId, 30000);
			// The newest questions are back (resume answers the newest page of a long history).
			const shown = () => ctx.chat.state.entries.flatMap((e) => (e.type === 'user' ? [e.turnId] : [])).slice(-before.turns.length);
			await until('the transcript to be redrawn', () => JSON.stringify(shown()) === JSON.stringify(before.turns), 30000).catch((e) => {
				throw new Error(`${e.message}: it shows ${JSON.stringify(shown())}, not ${JSON.stringify(before.turns)}`);
			});
			await person({ type: 'webviewText', contains: 'Hello from the mock model.' });
			await person({ type: 'webviewText', contains: 'run the allowed command' });
		});
		await it('while the reloaded window resumes the session, the chat shows its mode and model from the first paint (never a default or an empty picker)', async () => {
			const seen: { mode: string; model: string; font: boolean; entries: number }[] = (await person({ type: 'toolbarSeen' })).seen;
			assert.ok(seen.length > 0, 'the toolbar was seen while the window loaded');
			assert.deepEqual([...new Set(seen.map((x) => x.mode))], [before.mode], JSON.stringify(seen.slice(0, 5)));
			assert.ok(seen.every((x) => x.model !== ''), `the model picker is never empty: ${JSON.stringify(seen.slice(0, 5))}`);
			return `${seen.length} looks; the codicon font there from look ${seen.findIndex((x) => x.font)}`;
		});
		await it('a question sent while the "may already have run" card waited is back in the input after the reload (with the draft typed since); the acknowledgement reads "Acknowledged"', async () => {
			await vscode.commands.executeCommand('kin.openChat');
			// The question and the draft come back from two places (kin's resume, the view's saved
			// state), one a moment after the other: wait for both, and show what was there if not.
			const want = `${before.held}\n\n${before.draft}`;
			let last = '';
			const value = await until('the question and the draft back in the input', async () => {
				last = (await person({ type: 'inputValue' })).value as string;
				return last === want ? last : undefined;
			}, 30000).catch(() => last);
			assert.equal(value, want, 'the draft typed while the card waited is kept too');
			await person({ type: 'webviewText', contains: 'This question was not sent' });
			assert.ok(!ctx.chat.state.entries.some((e) => e.type === 'user' && e.text === before.held), 'kin never took it');
			// Not now: kin refuses the question unacknowledged, and it comes back again.
			await person({ type: 'webviewFill', selector: '#input', value: before.held });
			let ack = next(ctx, 'approval/request', (p) => p.kind === 'acknowledge_unknown');
			let completed = next(ctx, 'turn/completed');
			await person({ type: 'webviewClick', selector: '#send' });
			await ack;
			await person({ type: 'card', contains: 'may already have run', click: 'Not now' });
			await completed;
			await until('the question back after Not now', async () => (await person({ type: 'inputValue' })).value === before.held);
			// Acknowledged: the question goes, and the record says "Acknowledged", live and after a resume.
			ack = next(ctx, 'approval/request', (p) => p.kind === 'acknowledge_unknown');
			completed = next(ctx, 'turn/completed');
			await person({ type: 'webviewClick', selector: '#send' });
			await ack;
			await person({ type: 'card', contains: 'may already have run', click: 'Acknowledge and continue' });
			assert.equal((await completed).status, 'completed');
			await person({ type: 'webviewText', contains: 'Now I have your question.' });
			const live = await person({ type: 'webviewQuery', selector: '.entry.decision >> nth=-1' });
			assert.match(live.value, /Acknowledged: .*bash may already have run/);
			await ctx.chat.resume(ctx.chat.sessionId!);
			const text = (await person({ type: 'webviewText', contains: 'Now I have your question.' })).text as string;
			assert.match(text, /Acknowledged: .*bash may already have run/);
			assert.doesNotMatch(text, /Allowed once: bash may already have run/);
			await ctx.chat.configure('agent');
		});
		return finish(results);
	}

	// Where Deny sat on each kind of card: it must be the first (and default) button on all.
	const denyPlaces: { kind: string; buttons: string[]; defaultButton: string; deny: string }[] = [];
	const recordDeny = (kind: string, req: any, card: any) =>
		denyPlaces.push({ kind, buttons: card.buttons, defaultButton: card.defaultButton, deny: req.options.find((o: any) => o.optionId === 'deny')?.name });
	const userCount = () => ctx.chat.state.entries.filter((e) => e.type === 'user').length;

	await it('kin starts from the User settings of this remote window (kin.path, kin.args, kin.env); workspace values are ignored', async () => {
		const launch = ctx.service.launch!;
		assert.equal(launch.command, expectPath, 'kin.path from User settings');
		assert.equal(launch.from, 'kin.path');
		assert.deepEqual(launch.args.slice(-2), ['--log-file', expectLog], 'kin.args from User settings');
		assert.ok(launch.envNames.includes('KIN_TEST_FROM_USER_SETTINGS'), 'kin.env from User settings');
		await until('kin to write the log file kin.args named', () => fs.existsSync(expectLog));
		const i = vscode.workspace.getConfiguration('kin').inspect<string>('path');
		assert.equal(i?.workspaceValue, '/nonexistent/kin-from-the-workspace', 'the workspace does set kin.path');
		assert.equal(vscode.workspace.getConfiguration('kin').inspect('path')?.globalValue, expectPath);
		return `remoteName ${vscode.env.remoteName}; ${launch.command} ${launch.args.join(' ')}`;
	});

	await it('the chat view opens in the sidebar and shows the connection', async () => {
		const ready = new Promise<void>((r) => ctx.view.onDidBecomeReady(() => r()));
		await vscode.commands.executeCommand('kin.openChat');
		await Promise.race([ready, sleep(20000)]);
		await person({ type: 'webviewText', contains: 'connected' });
	});

	await it("Ctrl+Alt+K focuses kin's chat input from an editor", async () => {
		await vscode.window.showTextDocument(vscode.Uri.file(path.join(ws, 'main.go')));
		await until('the editor to be active', () => vscode.window.activeTextEditor?.document.fileName.endsWith('main.go'));
		await person({ type: 'key', key: 'Control+Alt+k' });
		const f = await until('the chat input to have the focus', async () => {
			const r = await person({ type: 'chatFocus' });
			return r.focus.id === 'input' && r.focus.hasFocus ? r.focus : undefined;
		});
		return JSON.stringify(f);
	});

	await it('a question typed into the chat streams its answer as markdown, with a highlighted code block to copy or insert', async () => {
		const completed = next(ctx, 'turn/completed');
		await person({ type: 'webviewFill', selector: '#input', value: 'say hello' });
		await person({ type: 'webviewClick', selector: '#send' });
		const done = await completed;
		assert.equal(done.status, 'completed');
		const answer = ctx.chat.state.entries.find((e) => e.type === 'assistant');
		assert.equal(answer?.type === 'assistant' && answer.text, 'Hello from the **mock** model.\n\n```go\nfmt.Println("hi")\n```\n');
		await person({ type: 'webviewText', contains: 'Hello from the mock model.' });
		await person({ type: 'webviewText', contains: 'fmt.Println("hi")' });
		await until('the input to be cleared once kin took the question', async () => (await person({ type: 'inputValue' })).value === '');
		await vscode.env.clipboard.writeText('');
		await person({ type: 'webviewClick', selector: '.code-block [data-action="copy"]' });
		await until('the code on the clipboard', async () => (await vscode.env.clipboard.readText()) === 'fmt.Println("hi")\n');
		const scratch = await vscode.workspace.openTextDocument({ content: '', language: 'go' });
		await vscode.window.showTextDocument(scratch, { preserveFocus: true });
		await person({ type: 'webviewClick', selector: '.code-block [data-action="insert"]' });
		await until('the code inserted at the cursor', () => scratch.getText() === 'fmt.Println("hi")\n');
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
	});

	await it('an approval waits as a card in the chat (command, cwd, sandbox; Deny first and focused) and is allowed from the keyboard', async () => {
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the allowed command');
		const req = await request;
		await until('the inline approval', () => ctx.chat.state.entries.some((e) => e.type === 'waiting' && e.requestId === req.requestId));
		assert.equal(ctx.approvals.waiting, 1);
		await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: waiting for approval' });
		const card = await person({ type: 'card', contains: 'echo kin-allowed-output' });
		assert.match(card.text, /kin wants to run a command/);
		assert.match(card.text, /Cwd/);
		assert.match(card.text, /andboxed/);
		// kin writes the command as `echo`: shown as code, never as literal backticks.
		assert.deepEqual(card.buttons, ['Deny', 'Allow once', 'Always allow echo commands in this session', 'Always allow echo commands in every session']);
		assert.equal((await person({ type: 'webviewQuery', selector: '#dock .card .buttons button code' })).count, 2, 'the command is code in both labels');
		recordDeny('bash', req, card);
		// The card never took the focus by itself; the command goes to it, on Deny.
		assert.notEqual((await person({ type: 'chatFocus' })).focus.inCard, true);
		await vscode.commands.executeCommand('kin.focusApproval');
		await until('Deny to have the focus', async () => (await person({ type: 'chatFocus' })).focus.option === 'deny');
		await person({ type: 'key', key: 'Tab' });
		assert.equal((await person({ type: 'chatFocus' })).focus.option, 'allow_once');
		const resolved = next(ctx, 'approval/resolved');
		await person({ type: 'key', key: 'Enter' });
		assert.equal((await resolved).decision, 'allow_once');
		assert.equal((await completed).status, 'completed');
		const t = tool(ctx, 'call_allow');
		assert.equal(t?.status, 'completed');
		assert.match(t?.output ?? '', /kin-allowed-output/);
		assert.equal(ctx.chat.state.entries.some((e) => e.type === 'waiting'), false, 'the inline approval is gone');
		assert.equal(ctx.approvals.waiting, 0);
		await person({ type: 'webviewText', contains: 'The command printed its line.' });
		await person({ type: 'webviewText', contains: 'Allow once: Run echo kin-allowed-output' });
		await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: connected' });
	});

	await it('after a card is answered the chat follows to the newest message; a person reading back stays where they are, with "Jump to newest"', async () => {
		await vscode.commands.executeCommand('kin.openChat');
		// Enough conversation to overflow the chat.
		let completed = next(ctx, 'turn/completed');
		await ctx.chat.send('write a long answer');
		await completed;
		const request = next(ctx, 'approval/request');
		completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the allowed command');
		await request;
		await person({ type: 'card', contains: 'echo kin-allowed-output', click: 'Allow once' });
		assert.equal((await completed).status, 'completed');
		await person({ type: 'webviewText', contains: 'The command printed its line.' });
		const after = await until('the newest message in view', async () => {
			const v = await person({ type: 'transcriptView' });
			return v.lastText.includes('The command printed its line.') && v.lastInView ? v : undefined;
		});
		assert.equal(after.overflows, true, 'the transcript is longer than the chat');
		assert.equal(after.atBottom, true);
		assert.equal(after.jumpShown, false);
		// A person scrolled up to read: the next answer does not pull them down; the button says more came.
		await person({ type: 'scrollTranscriptUp', steps: 12 });
		completed = next(ctx, 'turn/completed');
		await ctx.chat.send('say hello');
		await completed;
		await person({ type: 'webviewText', contains: 'Hello from the mock model.' });
		const reading = await until('"Jump to newest" to show', async () => {
			const v = await person({ type: 'transcriptView' });
			return v.jumpShown ? v : undefined;
		});
		assert.equal(reading.lastInView, false, 'the place the person reads stays');
		await person({ type: 'webviewClick', selector: '#jump' });
		await until('the newest message in view again', async () => {
			const v = await person({ type: 'transcriptView' });
			return v.lastInView && v.atBottom && !v.jumpShown ? v : undefined;
		});
		return `last: ${JSON.stringify(after.lastText.slice(0, 40))}`;
	});

	await it('an approval is denied on its card and the tool card says denied', async () => {
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the denied command');
		const req = await request;
		const card = await person({ type: 'card', contains: 'echo kin-denied-output', click: 'Deny' });
		recordDeny('bash', req, card);
		await completed;
		assert.equal(tool(ctx, 'call_deny')?.status, 'denied');
		await person({ type: 'webviewText', contains: 'You denied the command.' });
	});

	await it('Enter on an approval card denies (the first option is never the default)', async () => {
		const resolved = next(ctx, 'approval/resolved');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the denied command');
		await person({ type: 'card', contains: 'echo kin-denied-output', click: '<enter>' });
		assert.equal((await resolved).decision, 'deny');
		await completed;
	});

	await it('Escape on an approval card denies', async () => {
		const resolved = next(ctx, 'approval/resolved');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the denied command');
		await person({ type: 'card', contains: 'echo kin-denied-output', click: '<escape>' });
		assert.equal((await resolved).decision, 'deny');
		await completed;
	});

	await it('typing in the chat input while an approval card appears goes on into the input and answers nothing', async () => {
		await vscode.commands.executeCommand('kin.openChat');
		await until('the chat input to have the focus', async () => {
			const f = (await person({ type: 'chatFocus' })).focus;
			return f.id === 'input' && f.hasFocus;
		});
		await person({ type: 'webviewFill', selector: '#input', value: '' });
		await person({ type: 'type', text: 'a note I was writing ' });
		let answered: string | undefined;
		const resolved = next(ctx, 'approval/resolved').then((p) => ((answered = p.decision), p));
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the denied command');
		const req = await request;
		await person({ type: 'card', contains: 'echo kin-denied-output' });
		// The card is on the page: the keys that follow (letters, spaces, then Enter, which sends
		// nothing while the turn runs) go on into the input; none reaches the card.
		await person({ type: 'type', text: 'when the card came, y and n and a space ' });
		await person({ type: 'key', key: 'Enter' });
		const focus = (await person({ type: 'chatFocus' })).focus;
		assert.equal(focus.id, 'input', `the input keeps the focus: ${JSON.stringify(focus)}`);
		assert.notEqual(focus.inCard, true);
		assert.equal((await person({ type: 'inputValue' })).value, 'a note I was writing when the card came, y and n and a space ');
		assert.equal(ctx.approvals.waiting, 1, 'the approval still waits');
		assert.equal(answered, undefined, 'nothing answered the approval');
		await person({ type: 'card', contains: 'echo kin-denied-output', click: 'Deny' });
		assert.equal((await resolved).decision, 'deny');
		assert.equal((await resolved).requestId, req.requestId);
		await completed;
		await person({ type: 'webviewFill', selector: '#input', value: '' });
	});

	await it('with the chat hidden, a notification says an approval waits and leads to its card, Deny focused', async () => {
		await vscode.commands.executeCommand('workbench.view.explorer');
		await until('the chat to be hidden', () => !ctx.view.visible);
		const resolved = next(ctx, 'approval/resolved');
		const completed = next(ctx, 'turn/completed');
		try {
			await ctx.chat.send('run the denied command');
			log(`chat visible: ${ctx.view.visible}`);
			const n = await person({ type: 'notification', contains: 'kin wants to run a command', click: 'Review' });
			assert.match(n.text, /Run echo kin-denied-output/);
			await until('the chat to show, with Deny focused', async () => ctx.view.visible && (await person({ type: 'chatFocus' })).focus.option === 'deny');
			await person({ type: 'key', key: 'Enter' });
			assert.equal((await resolved).decision, 'deny');
			await completed;
		} finally {
			await vscode.commands.executeCommand('kin.openChat');
		}
	});

	await it('a 120-line tab-indented diff is reviewed to its last line, in the card and in the diff editor beside it, before answering', async () => {
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('write the big file');
		const req = await request;
		const newText: string = req.diffs[0].newText;
		assert.equal(newText.split('\n').length - 1, 120);
		const card = await person({ type: 'card', contains: 'big.go' });
		recordDeny('write_file', req, card);
		// The card: scrolled with the wheel to the last line, nothing modal in the way.
		const scrolled = await person({ type: 'scrollCardDiff', contains: 'big.go' });
		assert.equal(scrolled.scrollable, true, 'the diff is longer than its box');
		assert.equal(scrolled.lastLineVisible, true, `the last line is in view: ${JSON.stringify(scrolled)}`);
		assert.equal(scrolled.lastLine, '+}');
		assert.equal(scrolled.dialogOpen, false);
		assert.ok(scrolled.lines >= 123, `every line is on the card (${scrolled.lines})`);
		// The diff editor beside the chat, opened without taking the focus, scrolled to its end.
		const shown = await person({ type: 'diffEditorShown' });
		assert.equal(shown.dialogOpen, false, 'no modal dialog over the diff');
		const editor = await until('the proposed text in an editor', () =>
			vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'kin-diff' && e.document.getText() === newText),
		);
		const last = editor.document.lineCount - 1;
		editor.revealRange(new vscode.Range(last, 0, last, 0));
		await until('the last line in view', () => editor.visibleRanges.some((r) => r.end.line >= last - 1));
		assert.equal(ctx.approvals.waiting, 1, 'the approval still waits while the diff is read');
		assert.equal(fs.existsSync(path.join(ws, 'big.go')), false, 'nothing is written before the decision');
		if (screenshotDir) {
			await person({ type: 'screenshot', path: path.join(screenshotDir, 'screenshot-approval.png'), settleMs: 600 });
		}
		await person({ type: 'card', contains: 'big.go', click: 'Allow once' });
		await completed;
		assert.equal(fs.readFileSync(path.join(ws, 'big.go'), 'utf8'), newText);
		await until('the diff editor to close with the approval', () =>
			!vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'kin-diff'),
		);
		return `${scrolled.lines} lines on the card`;
	});

	await it("a command's output streams into a terminal view while it runs (opened from its card)", async () => {
		const goOn = path.join(ws, 'go-on.txt');
		fs.rmSync(goOn, { force: true });
		const completed = next(ctx, 'turn/completed', () => true, 60000);
		const firstLine = next(ctx, 'turn/toolCall', (p) => sameCall(p.callId, 'call_stream') && /first-line/.test(p.outputDelta ?? ''), 60000);
		await ctx.chat.send('run the streaming command');
		await person({ type: 'card', contains: 'second-line', click: 'Allow once' });
		await firstLine; // kin streams the running command's output (turn/toolCall outputDelta)
		assert.equal(tool(ctx, 'call_stream')?.status, 'running');
		await person({ type: 'webviewClick', selector: '.entry.tool[data-call="call_stream"] [data-action="terminal"]' });
		// (The command line heads the view, so the output is looked for as whole lines.)
		const t1 = await person({ type: 'terminalText', line: 'first-line' });
		assert.ok(!t1.lines.includes('second-line'), 'the command still runs');
		fs.writeFileSync(goOn, '');
		await person({ type: 'terminalText', line: 'second-line' });
		assert.equal((await completed).status, 'completed');
		const t2 = await person({ type: 'terminalText', contains: 'the command ended: completed' });
		fs.rmSync(goOn, { force: true });
		await vscode.commands.executeCommand('kin.openChat');
		return JSON.stringify(t2.text.split('\n').filter((l: string) => l.trim()).slice(0, 4));
	});

	await it("after a turn, each of kin's changes in a file has Keep and Undo; Undo puts one change back in the buffer; the turn lists the file, opening its diff", async () => {
		const file = path.join(ws, 'hunks.txt');
		const doc = await vscode.workspace.openTextDocument(file);
		await vscode.window.showTextDocument(doc, { preview: false });
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('change two places');
		await request;
		await person({ type: 'card', contains: 'hunks.txt', click: 'Allow once' });
		assert.equal((await completed).status, 'completed');
		await until('the change in the buffer', () => doc.getText() === 'one\nTWO\nthree\nfour\nfive\nSIX\nseven\n');
		await vscode.window.showTextDocument(doc, { preview: false });
		// Two changes, each with its lens; Undo on the second puts "six" back, in the buffer only.
		const lenses = await person({ type: 'codeLens', text: 'Undo', nth: 1 });
		assert.ok(lenses.lenses.filter((l: string) => l.includes('Keep')).length >= 2, JSON.stringify(lenses.lenses));
		await until('the second change undone', () => doc.getText() === 'one\nTWO\nthree\nfour\nfive\nsix\nseven\n');
		assert.equal(doc.isDirty, true, 'undone in the buffer, not saved');
		assert.equal(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n', "the file on disk is untouched (kin's edit and its undo are in the buffer)");
		// Keep the first: no lens is left.
		await person({ type: 'codeLens', text: 'Keep', nth: 0 });
		await until('no lens left', async () => (await person({ type: 'codeLenses' })).lenses.every((l: string) => !/Keep|Undo/.test(l)));
		assert.equal(doc.getText(), 'one\nTWO\nthree\nfour\nfive\nsix\nseven\n');
		// The turn lists the file it changed; a click opens the diff from before the turn to now.
		await vscode.commands.executeCommand('kin.openChat');
		await person({ type: 'webviewText', contains: 'Changed 1 file' });
		await person({ type: 'webviewClick', selector: '.entry.turn-end .changed-files a[data-path$="hunks.txt"]' });
		const diff = await until('the diff editor of hunks.txt', () =>
			vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.fsPath === file && t.input.original.scheme === 'kin-diff'),
		);
		const before = await vscode.workspace.openTextDocument((diff.input as vscode.TabInputTextDiff).original);
		assert.equal(before.getText(), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n', 'the left side is the file before the turn');
		await vscode.window.tabGroups.close(diff);
		await vscode.window.showTextDocument(doc);
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
		return lenses.lenses.join(' | ');
	});

	await it('the stop button cancels a running turn', async () => {
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('run the slow command');
		await person({ type: 'card', contains: 'sleep 30', click: 'Allow once' });
		await until('the slow command to run', () => tool(ctx, 'call_slow')?.status === 'running');
		await person({ type: 'webviewClick', selector: '#stop:not([disabled])' });
		const done = await completed;
		assert.equal(done.status, 'cancelled');
		await until('the card to end', () => {
			const s = tool(ctx, 'call_slow')?.status;
			return s !== 'running' && s;
		});
		await person({ type: 'webviewText', contains: 'Turn cancelled' });
	});

	await it('after kin was killed while a command ran, its outcome is unknown and the next question asks for an acknowledgement', async () => {
		// A command kin stopped itself ends failed; one whose kin died (a crash, an OOM kill) may have
		// run to its end or not: the next kin cannot tell, and asks before going on.
		await killKinDuringTheSlowCommand(ctx);
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('say hello');
		const req = await request;
		const card = await person({ type: 'card', contains: 'may already have run', click: 'Acknowledge and continue' });
		assert.match(card.text, /kin does not know whether this call took effect/);
		recordDeny('acknowledge_unknown', req, card);
		assert.equal((await completed).status, 'completed');
	});

	await it('Escape in an elicitation declines the whole request', async () => {
		const rec = recordRequests(ctx);
		try {
			ctx.service.dispatch('elicitation/request', {
				requestId: 'el_test_2',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				fields: [
					{ name: 'a', title: 'First', type: 'string' },
					{ name: 'b', title: 'Second', type: 'string' },
				],
			});
			// The form is a card first; Answer… opens its inputs.
			const card = await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			assert.deepEqual(card.buttons, ['Decline', 'Cancel', 'Answer…']);
			assert.equal(card.defaultButton, 'Decline');
			await person({ type: 'quickInput', titleContains: '(1/2): First', value: 'x' });
			await person({ type: 'quickInput', titleContains: '(2/2): Second', escape: true });
			const sent = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond'));
			assert.deepEqual(sent.params, { requestId: 'el_test_2', action: 'decline' });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_2', action: 'decline', reason: 'person' });
		} finally {
			rec.stop();
		}
		return 'synthesized';
	});

	await it("a URL elicitation is a card showing the whole link: Enter declines; cancelling VS Code's open-website prompt is a decline, not accept", async () => {
		const rec = recordRequests(ctx);
		try {
			const url = 'https://auth.example.com/authorize?client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A33418%2Fcallback&state=a-very-long-state-value-that-must-wrap-in-the-sidebar';
			ctx.service.dispatch('elicitation/request', { requestId: 'el_test_3', server: 'notion', mode: 'url', purpose: 'oauth', message: 'Sign in to notion to connect it', url });
			const card = await person({ type: 'card', contains: 'notion needs you to sign in', click: '<enter>' });
			assert.ok(card.text.includes(url.slice(0, 60)), card.text);
			assert.deepEqual(card.buttons, ['Decline', 'Open link']);
			assert.equal(card.defaultButton, 'Decline');
			const sent = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond' && c.params.requestId === 'el_test_3'));
			assert.deepEqual(sent.params, { requestId: 'el_test_3', action: 'decline' });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_3', action: 'decline', reason: 'person' });

			ctx.service.dispatch('elicitation/request', { requestId: 'el_test_4', server: 'notion', mode: 'url', message: 'Open the settings page', url: 'https://untrusted.example.org/settings' });
			await person({ type: 'card', contains: 'notion asks you to open a link', click: 'Open link' });
			const prompt = await person({ type: 'dialog', contains: 'untrusted.example.org', click: 'Cancel' });
			const answer = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond' && c.params.requestId === 'el_test_4'));
			assert.deepEqual(answer.params, { requestId: 'el_test_4', action: 'decline' });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_4', action: 'decline', reason: 'person' });
			return `VS Code asked: ${JSON.stringify(prompt.text.split('\n')[0])} ${JSON.stringify(prompt.buttons)}`;
		} finally {
			rec.stop();
		}
	});

	await it('while a form or a link waits for the person the status bar says waiting, not busy (synthesized requests)', async () => {
		const rec = recordRequests(ctx);
		try {
			ctx.service.dispatch('elicitation/request', { requestId: 'el_wait_1', sessionId: ctx.chat.sessionId, server: 'notion', mode: 'url', message: 'Open the page', url: 'https://example.org/page' });
			await person({ type: 'card', contains: 'notion asks you to open a link' });
			await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: waiting for your answer' });
			await person({ type: 'card', contains: 'notion asks you to open a link', click: 'Decline' });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_wait_1', action: 'decline', reason: 'person' });
			await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: connected' });
			ctx.service.dispatch('elicitation/request', {
				requestId: 'el_wait_2',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				fields: [{ name: 'a', title: 'First', type: 'string' }],
			});
			await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: waiting for your answer' });
			// Escape declines the form (its inputs are elicitation.ts's; only the status is looked at here).
			await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			await person({ type: 'quickInput', titleContains: 'First', escape: true });
			await until('the form declined', () => rec.calls.some((c) => c.method === 'elicitation/respond' && c.params.requestId === 'el_wait_2'));
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_wait_2', action: 'decline', reason: 'person' });
			await person({ type: 'pageText', selector: '.statusbar', contains: 'kin: connected' });
		} finally {
			rec.stop();
		}
		return 'synthesized';
	});

	await it('typing in an editor while a form arrives goes on into the editor: no input opens, nothing answers (synthesized request)', async () => {
		const rec = recordRequests(ctx);
		const doc = await vscode.workspace.openTextDocument({ content: '' });
		try {
			// The chat shows (its input focused first, so that its focus message is not still on its
			// way when the editor takes the keyboard), then the person works in an editor.
			await vscode.commands.executeCommand('kin.openChat');
			await until('the chat input to have the focus', async () => {
				const f = (await person({ type: 'chatFocus' })).focus;
				return f.id === 'input' && f.hasFocus;
			});
			await vscode.window.showTextDocument(doc, { preview: false });
			await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
			await until('the editor to have the focus', () => vscode.window.activeTextEditor?.document === doc);
			assert.ok(ctx.view.visible, 'the chat is shown, so the form is a card there');
			await person({ type: 'type', text: 'a note I was writing ' });
			await until('the first keys in the editor', () => doc.getText() === 'a note I was writing ');
			ctx.service.dispatch('elicitation/request', {
				requestId: 'el_typing_1',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				message: 'Your name, please',
				fields: [{ name: 'a', title: 'First', type: 'string' }],
			});
			await person({ type: 'card', contains: 'everything asks you to fill in a form' });
			// The card is on the page: the keys that follow, Enter among them (which would have sent
			// them as the answer in an input box), go on into the editor.
			await person({ type: 'type', text: 'when the form came, y and n ' });
			await person({ type: 'key', key: 'Enter' });
			await person({ type: 'type', text: 'and more' });
			await until('every key in the editor', () => doc.getText() === 'a note I was writing when the form came, y and n \nand more', 10000).catch(() => {
				throw new Error(`the editor holds ${JSON.stringify(doc.getText())}`);
			});
			await person({ type: 'quickInputGone', timeoutMs: 1000 });
			assert.equal(vscode.window.activeTextEditor?.document, doc, 'the editor keeps the focus');
			assert.equal(rec.calls.filter((c) => c.method === 'elicitation/respond').length, 0, 'nothing answered the form');
			assert.equal(ctx.elicitations.cards().length, 1, 'the form still waits');
			// Answered from its card, when the person chooses to.
			await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			await person({ type: 'quickInput', titleContains: 'everything asks (1/1): First', value: 'Ana' });
			const sent = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond' && c.params.requestId === 'el_typing_1'));
			assert.deepEqual(sent.params, { requestId: 'el_typing_1', action: 'accept', content: { a: 'Ana' } });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_typing_1', action: 'accept', reason: 'person' });
			await until('its card to go', () => ctx.elicitations.cards().length === 0);
		} finally {
			rec.stop();
			await vscode.window.showTextDocument(doc);
			await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
		}
		return 'synthesized';
	});

	await it('an approval kin sends again with the same requestId (its diff changed while it waited) replaces its card (synthesized)', async () => {
		const file = path.join(ws, 'resent.txt');
		const req = (oldText: string) => ({
			requestId: 'ap_resent_1',
			sessionId: ctx.chat.sessionId,
			kind: 'tool_call',
			tool: 'edit_file',
			title: 'Edit resent.txt',
			diffs: [{ path: file, oldText, newText: 'kin line\n', unified: `--- a/resent.txt\n+++ b/resent.txt\n@@ -1 +1 @@\n-${oldText.trim()}\n+kin line\n` }],
			options: [
				{ optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
				{ optionId: 'deny', name: 'Deny', kind: 'reject_once' },
			],
		});
		ctx.service.dispatch('approval/request', req('first text\n'));
		await person({ type: 'card', contains: 'first text' });
		ctx.service.dispatch('approval/request', req('typed meanwhile\n'));
		const shown = await until('the card to show the new diff', async () => {
			const c = await person({ type: 'cards' });
			return c.texts.some((t: string) => t.includes('typed meanwhile')) ? c : undefined;
		});
		assert.equal(shown.texts.filter((t: string) => t.includes('resent.txt')).length, 1, 'one card, not two');
		assert.ok(!shown.texts.some((t: string) => t.includes('first text')), 'the old diff is gone');
		assert.equal(ctx.approvals.waiting, 1);
		assert.equal(ctx.chat.state.entries.filter((e) => e.type === 'waiting' && e.requestId === 'ap_resent_1').length, 1);
		ctx.service.dispatch('approval/resolved', { requestId: 'ap_resent_1', sessionId: ctx.chat.sessionId, decision: 'deny', reason: 'cancelled' });
		await until('the card to go', async () => (await person({ type: 'cards' })).texts.every((t: string) => !t.includes('resent.txt')));
		return 'synthesized';
	});

	await it("a link in an answer opens only through VS Code's confirmation; a file path opens the file at its line", async () => {
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('give me a link');
		await completed;
		await person({ type: 'webviewClick', selector: 'a[href="https://example.com/kin-docs"]' });
		const prompt = await person({ type: 'dialog', contains: 'example.com/kin-docs', click: 'Cancel' });
		await person({ type: 'webviewClick', selector: 'a.file-link[data-path="main.go"][data-line="3"]' });
		const ed = await until('main.go open at line 3', () => {
			const e = vscode.window.activeTextEditor;
			return e?.document.fileName === path.join(ws, 'main.go') && e.selection.active.line === 2 ? e : undefined;
		});
		return `${prompt.buttons.join('/')}; ${ed.document.fileName}:${ed.selection.active.line + 1}`;
	});

	const fixture = path.join(__dirname, '..', '..', 'test', 'integration', 'fixtures', 'elicit-server.mjs');
	await it('an MCP server is added through the guided flow, trusted on its launch card, and listed', async () => {
		if (!init.capabilities?.mcp) {
			throw new Skip(`this kin build has no MCP (initialize capabilities.mcp = ${String(init.capabilities?.mcp)})`);
		}
		const connected = next(ctx, 'mcp/status', (p) => p.server === 'elicit' && p.state === 'connected', 60000);
		const launchRequest = next(ctx, 'approval/request', (p) => p.kind === 'server_launch', 60000);
		void vscode.commands.executeCommand('kin.mcpAdd');
		await person({ type: 'quickInput', titleContains: 'add an MCP server (1/4): name', value: 'elicit' });
		await person({ type: 'quickInput', titleContains: '(2/4): scope', pick: 'project' });
		await person({ type: 'quickInput', titleContains: '(3/4): transport', pick: 'stdio' });
		await person({ type: 'quickInput', titleContains: '(4/4): command and arguments', value: `node "${fixture}"` });
		await person({ type: 'quickInput', titleContains: 'environment variables', pick: 'Add an environment variable…' });
		await person({ type: 'quickInput', titleContains: 'environment variable name', value: 'API_TOKEN' });
		await person({ type: 'quickInput', titleContains: 'value of API_TOKEN', value: 's3cret-value' });
		await person({ type: 'quickInput', titleContains: 'environment variables (1 so far)', pick: 'Done' });
		// "Apply the change to the running service?" → Apply now → kin asks to launch the new server.
		await person({ type: 'quickInput', titleContains: 'elicit added (project)', pick: 'Apply now' });
		const req = await launchRequest;
		const launch = await person({ type: 'card', contains: 'Start MCP server elicit', click: 'Trust server' });
		recordDeny('server_launch', req, launch);
		assert.match(launch.text, /stdio/);
		assert.match(launch.text, /elicit-server\.mjs/);
		assert.doesNotMatch(launch.text, /s3cret-value/);
		await connected;
		const r: any = await ctx.service.request('mcp/list', {});
		const row = r.servers.find((x: any) => x.name === 'elicit');
		assert.ok(row, 'elicit is in mcp/list');
		assert.equal(row.scope, 'project');
		assert.doesNotMatch(JSON.stringify(r), /s3cret-value/, 'rows never carry secrets');
		void vscode.commands.executeCommand('kin.mcpList');
		const shown = await person({ type: 'quickInput', titleContains: 'kin: MCP servers', expectText: 'elicit', escape: true });
		assert.match(shown.shown, /connected/);
		return `row ${JSON.stringify(row)}`;
	});

	await it("a real MCP elicitation is asked in the server's order, and a field kin refuses is asked again alone", async () => {
		if (!init.capabilities?.mcp || !ctx.mcpStatus.has('elicit')) {
			throw new Skip('needs the MCP server of the previous test');
		}
		const completed = next(ctx, 'turn/completed', () => true, 60000);
		const elicited = next(ctx, 'elicitation/request', () => true, 60000);
		const request = next(ctx, 'approval/request', () => true, 60000);
		await ctx.chat.send('ask me for details');
		const areq = await request;
		const call = await person({ type: 'card', contains: 'ask_details', click: 'Allow once' });
		recordDeny('mcp', areq, call);
		assert.match(call.text, /kin wants to call an MCP tool/);
		assert.match(call.text, /elicit/);
		const req = await elicited;
		assert.equal(req.server, 'elicit');
		assert.deepEqual(req.fields?.map((f: any) => f.name), ['name', 'age', 'email', 'color', 'subscribe'], "the server's order");
		await person({ type: 'webviewText', contains: 'elicit asks for input' });
		await person({ type: 'card', contains: 'elicit asks you to fill in a form', click: 'Answer…' });
		const name = await person({ type: 'quickInput', titleContains: 'elicit asks (1/5): Name', expectText: 'Your full name', value: 'Ana' });
		assert.match(name.shown, /Your full name/, 'the description is shown');
		await person({ type: 'quickInput', titleContains: '(2/5): Age', value: '31' });
		// An address the editor lets through and kin refuses (two dots in a row).
		await person({ type: 'quickInput', titleContains: '(3/5): Email', value: 'a..b@example.com' });
		const colour = await person({ type: 'quickInput', titleContains: '(4/5): Favourite colour', expectText: 'default', pick: 'Red' });
		assert.doesNotMatch(colour.shown, /green\b/, 'the default shows by its title, never its raw value');
		await person({ type: 'quickInput', titleContains: '(5/5): Subscribe', expectText: 'Send me the newsletter', pick: 'Yes' });
		// kin refuses the email: only that field comes back, showing why; the rest is kept.
		const again = await person({ type: 'quickInput', titleContains: '(3/5): Email', expectText: 'must be an email address', value: 'ana@example.com' });
		assert.match(again.shown, /Email must be an email address/);
		assert.equal((await completed).status, 'completed');
		const card = tool(ctx, 'call_elicit');
		assert.equal(card?.status, 'completed');
		for (const part of ['"name":"Ana"', '"age":31', '"email":"ana@example.com"', '"color":"red"', '"subscribe":true']) {
			assert.ok(card?.output.includes(part), `the server got ${part}: ${card?.output}`);
		}
		await person({ type: 'webviewText', contains: 'Thanks for the details.' });
		return `fields ${JSON.stringify(req.fields?.map((f: any) => f.name))}`;
	});

	await it("re-enabling an MCP server announces its tools once (kin's notice), not twice", async () => {
		if (!ctx.mcpStatus.has('elicit')) {
			throw new Skip('needs the MCP server of the earlier test');
		}
		const toggle = async (label: string) => {
			void vscode.commands.executeCommand('kin.mcpList');
			await person({ type: 'quickInput', titleContains: 'kin: MCP servers', pickContains: 'elicit' });
			await person({ type: 'quickInput', titleContains: 'kin: MCP server elicit', pickContains: label });
			await person({ type: 'quickInput', titleContains: `elicit ${label.toLowerCase()}d`, pick: 'Apply now' });
			await person({ type: 'quickInput', titleContains: 'kin: MCP servers', escape: true });
		};
		const disabled = next(ctx, 'mcp/status', (p) => p.server === 'elicit' && p.state === 'disabled', 60000);
		await toggle('Disable');
		await disabled;
		await vscode.commands.executeCommand('notifications.clearAll');
		const notices: string[] = [];
		const d = ctx.service.onNotification('notice', (p) => notices.push(p.message));
		try {
			const connected = next(ctx, 'mcp/status', (p) => p.server === 'elicit' && p.state === 'connected', 60000);
			await toggle('Enable');
			const st = await connected;
			const count = `${st.tools} tool${st.tools === 1 ? '' : 's'}`;
			await person({ type: 'webviewText', contains: `MCP server elicit: ${count} from` });
			const shown = await person({ type: 'notificationTexts', contains: `elicit: ${count} from` });
			const tools = new RegExp(`\\b${count}\\b`);
			assert.equal(notices.filter((n) => tools.test(n)).length, 1, `kin said it once: ${JSON.stringify(notices)}`);
			assert.equal(shown.texts.filter((t: string) => tools.test(t)).length, 1, `one notification says it: ${JSON.stringify(shown.texts)}`);
			assert.equal((await person({ type: 'webviewQuery', selector: `.entry.notice:has-text("elicit: ${count} from")` })).count >= 1, true);
			return JSON.stringify(shown.texts);
		} finally {
			d.dispose();
		}
	});

	await it('a person who takes two minutes over a form (four times the server\'s 1 s timeout) still gets the answer to the server', async () => {
		if (!init.capabilities?.mcp || !ctx.mcpStatus.has('elicit')) {
			throw new Skip('needs the MCP server of the previous tests');
		}
		const connected = next(ctx, 'mcp/status', (p) => p.server === 'patient' && p.state === 'connected', 60000);
		const launchRequest = next(ctx, 'approval/request', (p) => p.kind === 'server_launch' && p.server === 'patient', 60000);
		await ctx.service.request('mcp/add', { name: 'patient', scope: 'project', config: { command: 'node', args: [fixture], timeout: 1000 } });
		void ctx.service.request('mcp/apply', {});
		const lreq = await launchRequest;
		const launch = await person({ type: 'card', contains: 'Start MCP server patient', click: 'Trust server' });
		recordDeny('server_launch', lreq, launch);
		await connected;
		const completed = next(ctx, 'turn/completed', () => true, 90000);
		const elicited = next(ctx, 'elicitation/request', (p) => p.server === 'patient', 60000);
		const request = next(ctx, 'approval/request', (p) => p.server === 'patient', 60000);
		await ctx.chat.send('ask me patiently');
		const areq = await request;
		const call = await person({ type: 'card', contains: 'ask_details', click: 'Allow once' });
		recordDeny('mcp', areq, call);
		await elicited;
		await person({ type: 'card', contains: 'patient asks you to fill in a form', click: 'Answer…' });
		await person({ type: 'quickInput', titleContains: 'patient asks (1/5): Name', value: 'Ana' });
		await sleep(4000); // the person reads, thinks: well past the server's timeout
		await person({ type: 'quickInput', titleContains: '(2/5): Age', value: '31' });
		await person({ type: 'quickInput', titleContains: '(3/5): Email', value: 'ana@example.com' });
		await person({ type: 'quickInput', titleContains: '(4/5): Favourite colour', pick: 'Green' });
		await person({ type: 'quickInput', titleContains: '(5/5): Subscribe', pick: 'No' });
		assert.equal((await completed).status, 'completed');
		const card = tool(ctx, 'call_patient');
		assert.equal(card?.status, 'completed', `the call: ${card?.output}`);
		assert.ok(card?.output.includes('"name":"Ana"'), `the server got the answer: ${card?.output}`);
		await person({ type: 'webviewText', contains: 'Thanks for taking your time.' });
	});

	await it("a form's fields have Back to an earlier field and an overview of them all (synthesized request)", async () => {
		const rec = recordRequests(ctx);
		try {
			ctx.service.dispatch('elicitation/request', {
				requestId: 'el_test_5',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				message: 'Please fill in the form',
				fields: [
					{ name: 'name', title: 'Name', type: 'string', required: true },
					{ name: 'age', title: 'Age', type: 'integer', minimum: 0, maximum: 150 },
					{ name: 'pet', title: 'Pet', type: 'enum', enum: ['pet-1', 'pet-2'], enumNames: ['Cats', 'Dogs'], default: 'pet-1' },
					{ name: 'check', title: 'Boolean', description: 'I agree to the terms', type: 'boolean' },
				],
			});
			await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			await person({ type: 'quickInput', titleContains: 'everything asks (1/4): Name', value: 'Ann' });
			await person({ type: 'quickInput', titleContains: '(2/4): Age', button: 'Back' });
			// Back on Name, with what was typed: corrected.
			await person({ type: 'quickInput', titleContains: '(1/4): Name', value: 'Ana' });
			await person({ type: 'quickInput', titleContains: '(2/4): Age', value: '31' });
			await person({ type: 'quickInput', titleContains: '(3/4): Pet', button: 'All fields' });
			const all = await person({ type: 'quickInput', titleContains: '(all fields)', expectText: 'I agree to the terms', pick: 'Pet' });
			for (const shown of ['Ana', '31', '(default: Cats)', 'Send', 'Decline']) {
				assert.ok(all.shown.includes(shown), `the overview shows ${shown}: ${all.shown}`);
			}
			await person({ type: 'quickInput', titleContains: '(3/4): Pet', pick: 'Dogs' });
			await person({ type: 'quickInput', titleContains: '(all fields)', expectText: 'Dogs', pick: 'Send' });
			const sent = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond' && c.params.requestId === 'el_test_5'));
			assert.deepEqual(sent.params, { requestId: 'el_test_5', action: 'accept', content: { name: 'Ana', age: 31, pet: 'pet-2' } });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_5', action: 'accept', reason: 'person' });
		} finally {
			rec.stop();
		}
		return 'synthesized';
	});

	await it('a form kin closes (its call ended) is closed in VS Code, saying why (synthesized request)', async () => {
		const rec = recordRequests(ctx);
		try {
			ctx.service.dispatch('elicitation/request', {
				requestId: 'el_test_6',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				message: 'Details',
				fields: [
					{ name: 'a', title: 'First', type: 'string' },
					{ name: 'b', title: 'Second', type: 'string' },
				],
			});
			await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			await person({ type: 'quickInput', titleContains: '(1/2): First', value: 'x' });
			await person({ type: 'quickInput', titleContains: '(2/2): Second', expectText: 'Details', look: true });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_6', action: 'cancel', reason: 'call_ended' });
			await person({ type: 'quickInputGone' });
			await until('its card to go', () => ctx.elicitations.cards().length === 0);
			const note = await person({ type: 'notification', contains: 'kin closed the question from everything' });
			assert.match(note.text, /the tool call that asked ended without it/);
			assert.equal(rec.calls.filter((c) => c.method === 'elicitation/respond').length, 0, 'nothing was sent');
		} finally {
			rec.stop();
		}
		return 'synthesized';
	});

	await it('a form elicitation validates as the person types (synthesized request)', async () => {
		const synthesized = !init.capabilities?.mcp;
		const rec = recordRequests(ctx);
		try {
			const params = {
				requestId: 'el_test_1',
				sessionId: ctx.chat.sessionId,
				server: 'everything',
				mode: 'form',
				message: 'Please provide your details',
				fields: [
					{ name: 'name', title: 'Name', type: 'string', required: true },
					{ name: 'age', title: 'Age', type: 'integer', minimum: 0, maximum: 150 },
					{ name: 'color', title: 'Favourite colour', type: 'enum', enum: ['red', 'green'], enumNames: ['Red', 'Green'] },
					{ name: 'subscribe', title: 'Subscribe', type: 'boolean', default: false },
				],
			};
			ctx.service.dispatch('elicitation/request', params);
			await person({ type: 'webviewText', contains: 'everything asks for input' });
			await person({ type: 'card', contains: 'everything asks you to fill in a form', click: 'Answer…' });
			await person({ type: 'quickInput', titleContains: 'everything asks (1/4): Name', value: 'Ana' });
			const age = await person({ type: 'quickInput', titleContains: '(2/4): Age', value: '200', expectValidation: 'At most 150', thenValue: '31' });
			assert.match(age.validation, /At most 150/);
			await person({ type: 'quickInput', titleContains: '(3/4): Favourite colour', pick: 'Red' });
			await person({ type: 'quickInput', titleContains: '(4/4): Subscribe', pick: 'Yes' });
			const sent = await until('elicitation/respond', () => rec.calls.find((c) => c.method === 'elicitation/respond'));
			assert.deepEqual(sent.params, { requestId: 'el_test_1', action: 'accept', content: { name: 'Ana', age: 31, color: 'red', subscribe: true } });
			ctx.service.dispatch('elicitation/resolved', { requestId: 'el_test_1', action: 'accept', reason: 'person' });
			await until('the inline card to go', () => !ctx.chat.state.entries.some((e) => e.type === 'waiting'));
		} finally {
			rec.stop();
		}
		// No MCP server in this test asks anything, so the request is synthesized and fed through the
		// client's dispatcher; kin answers the respond with -32013 (it never asked), which is ignored.
		return `synthesized (kin capabilities.mcp = ${String(!synthesized)})`;
	});

	await it('an approved edit of an open buffer goes into the buffer (unsaved, one undo step), not to the disk', async () => {
		assert.deepEqual(init.capabilities.textDocuments, { sync: true, applyEdit: true, positionEncoding: 'utf-16' });
		const file = path.join(ws, 'buffer.go');
		const doc = await vscode.workspace.openTextDocument(file);
		await vscode.window.showTextDocument(doc, { preserveFocus: true });
		const before = doc.getText();
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('edit the open buffer');
		const req = await request;
		recordDeny('edit_file', req, await person({ type: 'card', contains: 'buffer.go' }));
		await person({ type: 'card', contains: 'buffer.go', click: 'Allow once' });
		await until('the edit in the buffer', () => doc.getText().includes('func main() { run() }'));
		assert.equal((await completed).status, 'completed');
		assert.equal(doc.isDirty, true, 'the buffer is not saved');
		assert.equal(fs.readFileSync(file, 'utf8'), before, 'the file on disk is as it was');
		assert.match(tool(ctx, 'call_buf')?.output ?? '', /in the editor's buffer, not saved yet/);
		await vscode.window.showTextDocument(doc);
		await vscode.commands.executeCommand('undo');
		await until('one undo to take the whole edit back', () => doc.getText() === before);
		await vscode.commands.executeCommand('redo');
		await until('redo to bring it again', () => doc.getText().includes('run()'));
		await doc.save();
		assert.equal(fs.readFileSync(file, 'utf8'), 'package main\n\nfunc main() { run() }\n', 'saving writes it, with no "file is newer" conflict');
	});

	await it("an unsaved buffer is respected: kin's diff is against what the person typed, and the edit lands in the buffer around it", async () => {
		const file = path.join(ws, 'unsaved.md');
		const onDisk = fs.readFileSync(file, 'utf8');
		const doc = await vscode.workspace.openTextDocument(file);
		await vscode.window.showTextDocument(doc);
		await person({ type: 'key', key: 'Control+End' });
		await person({ type: 'type', text: 'typed by me, not saved' });
		await until('the typing in the buffer', () => doc.getText().includes('typed by me, not saved') && doc.isDirty);
		const request = next(ctx, 'approval/request');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('edit the unsaved buffer');
		const req = await request;
		assert.ok(req.diffs[0].oldText.includes('typed by me, not saved'), 'the diff is against the buffer');
		const card = await person({ type: 'card', contains: 'unsaved.md', click: 'Allow once' });
		assert.match(card.text, /typed by me, not saved/);
		await until('the edit in the buffer', () => doc.getText().includes('first line, edited by kin'));
		assert.equal((await completed).status, 'completed');
		assert.equal(doc.getText(), '# notes\n\nfirst line, edited by kin\ntyped by me, not saved');
		assert.equal(fs.readFileSync(file, 'utf8'), onDisk, 'the file on disk is untouched');
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
	});

	await it('a file kin changed on disk is reloaded in its clean buffer; a buffer with unsaved changes is left alone (synthesized workspace/didChangeFiles)', async () => {
		// kin edits open buffers through the editor, so it announces disk writes for files that are
		// not open; what a notification for an open one must do is fed here, with VS Code's watcher
		// off for these files (files.watcherExclude), so only the extension can reload them.
		const clean = path.join(ws, 'reload.txt');
		const dirty = path.join(ws, 'reload-dirty.txt');
		const cleanDoc = await vscode.workspace.openTextDocument(clean);
		await vscode.window.showTextDocument(cleanDoc, { preview: false });
		const dirtyDoc = await vscode.workspace.openTextDocument(dirty);
		const ed = await vscode.window.showTextDocument(dirtyDoc, { preview: false });
		await ed.edit((b) => b.insert(new vscode.Position(0, 0), 'mine: '));
		fs.writeFileSync(clean, 'written on disk\n');
		fs.writeFileSync(dirty, 'written on disk\n');
		ctx.service.dispatch('workspace/didChangeFiles', {
			changes: [
				{ uri: vscode.Uri.file(clean).toString(), path: clean, type: 'changed' },
				{ uri: vscode.Uri.file(dirty).toString(), path: dirty, type: 'changed' },
			],
		});
		await until('the clean buffer reloaded', () => cleanDoc.getText() === 'written on disk\n');
		assert.equal(cleanDoc.isDirty, false);
		assert.equal(dirtyDoc.getText(), 'mine: as it was\n', 'the unsaved buffer is left as it is');
		await until('the editor in use to be in use again', () => vscode.window.activeTextEditor?.document === dirtyDoc);
		await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
		return 'synthesized';
	});

	await it('a question is not lost when sending fails (kin missing), and goes once kin is back', async () => {
		const cfg = () => vscode.workspace.getConfiguration('kin');
		await cfg().update('path', '/nonexistent/kin', vscode.ConfigurationTarget.Global);
		try {
			await ctx.service.restart().catch(() => undefined);
			await until('the service to fail', () => ctx.service.state === 'failed');
			await vscode.commands.executeCommand('kin.openChat');
			await person({ type: 'webviewFill', selector: '#input', value: 'a question that must not be lost' });
			await person({ type: 'webviewClick', selector: '#send' });
			await person({ type: 'webviewText', contains: 'cannot start /nonexistent/kin' });
			assert.equal((await person({ type: 'inputValue' })).value, 'a question that must not be lost');
		} finally {
			await cfg().update('path', expectPath, vscode.ConfigurationTarget.Global);
		}
		await ctx.service.restart();
		const completed = next(ctx, 'turn/completed');
		await person({ type: 'webviewClick', selector: '#send' });
		const done = await completed;
		assert.equal(done.status, 'completed');
		await until('the question in the transcript', () => ctx.chat.state.entries.some((e) => e.type === 'user' && e.text === 'a question that must not be lost'));
		await until('the input cleared once kin took it', async () => (await person({ type: 'inputValue' })).value === '');
	});

	await it('with kin.path empty, the kin inside the platform package runs', async () => {
		const cfg = () => vscode.workspace.getConfiguration('kin');
		await cfg().update('path', '', vscode.ConfigurationTarget.Global);
		let turnId: string | undefined;
		try {
			await ctx.service.restart();
			const launch = ctx.service.launch!;
			assert.equal(launch.from, 'bundled');
			assert.equal(launch.command, path.join(vscode.extensions.getExtension('kin.kin')!.extensionPath, 'bin', 'kin'));
			const completed = next(ctx, 'turn/completed');
			await ctx.chat.send('say hello');
			const done = await completed;
			assert.equal(done.status, 'completed');
			turnId = done.turnId;
			return launch.command;
		} finally {
			await cfg().update('path', expectPath, vscode.ConfigurationTarget.Global);
			await ctx.service.restart();
			// The view resumes the session after a restart (the one above raced the question sent
			// right behind it): the next tests read the transcript kin has.
			if (turnId) {
				await until('the session resumed with the question', () => ctx.chat.state.entries.some((e) => e.type === 'user' && e.turnId === turnId));
			}
		}
	});

	await it('a question is asked again, or edited and sent again, from the transcript', async () => {
		const lastText = () => {
			const u = ctx.chat.state.entries.filter((e) => e.type === 'user').pop();
			return u?.type === 'user' ? u.text : undefined;
		};
		const asked = lastText();
		const before = ctx.chat.state.entries.filter((e) => e.type === 'user').map((e) => (e as UserEntry).turnId);
		const completed = next(ctx, 'turn/completed');
		await person({ type: 'webviewClick', selector: '.entry.user >> nth=-1 >> [data-action="retry"]' });
		const done = await completed;
		// The question comes once more, as a new turn, below the one asked again. (Counting all the
		// questions would race the resume that follows the previous test's restart: session/resume
		// answers the newest page of a long history.)
		const again = ctx.chat.state.entries.filter((e): e is UserEntry => e.type === 'user' && e.turnId === done.turnId);
		assert.equal(again.length, 1, 'the question shows once for its turn');
		assert.equal(again[0].text, asked);
		assert.ok(!before.includes(done.turnId), 'a new turn');
		assert.ok(userCount() >= 2 && ctx.chat.state.entries.filter((e) => e.type === 'user' && e.text === asked).length >= 2, 'the first asking stays above');
		assert.equal(lastText(), asked);
		await person({ type: 'webviewClick', selector: '.entry.user >> nth=-1 >> [data-action="edit"]' });
		assert.equal((await person({ type: 'inputValue' })).value, asked);
		await person({ type: 'webviewFill', selector: '#input', value: '' });
	});

	await it('the plan is a checklist in the chat, updated in place as the model changes it', async () => {
		const plans: any[] = [];
		const d = ctx.service.onNotification('turn/plan', (p) => plans.push(p));
		try {
			const completed = next(ctx, 'turn/completed');
			await ctx.chat.send('make a plan');
			assert.equal((await completed).status, 'completed');
		} finally {
			d.dispose();
		}
		assert.equal(plans.length, 2, 'two turn/plan notifications');
		const cards = ctx.chat.state.entries.filter((e) => e.type === 'plan');
		assert.equal(cards.length, 1, 'one plan card for the turn');
		assert.deepEqual(cards[0].type === 'plan' && cards[0].entries, plans[1].entries);
		await person({ type: 'webviewText', contains: 'Plan 1/3' });
		await person({ type: 'webviewText', contains: 'fix the race in the cache' });
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.plan .step.in_progress .priority.high' })).count, 1);
		const q = await person({ type: 'webviewQuery', selector: '.entry.plan' });
		assert.equal(q.count, 1, 'the page shows one plan');
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.plan .step.completed' })).count, 1);
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.plan .step.in_progress' })).count, 1);
		if (screenshotDir) {
			await person({ type: 'screenshot', path: path.join(screenshotDir, 'screenshot-plan.png'), settleMs: 600 });
		}
	});

	await it('/plan is offered by the input box after a slash (Tab completes it) and runs as kin\'s command', async () => {
		await until('commands/list for the session', () => ctx.chat.commands.some((c) => c.name === 'plan'));
		await person({ type: 'webviewFill', selector: '#input', value: '/pl' });
		await person({ type: 'webviewText', contains: '/plan' });
		assert.equal((await person({ type: 'webviewQuery', selector: '#completions .completion' })).count, 1);
		await person({ type: 'key', key: 'Tab' });
		assert.equal((await person({ type: 'inputValue' })).value, '/plan ');
		const n = ctx.chat.state.entries.length;
		await person({ type: 'key', key: 'Enter' });
		const cmd = await until('the command to answer', () => ctx.chat.state.entries.slice(n).find((e) => e.type === 'command'));
		assert.equal(cmd.type === 'command' && cmd.name, 'plan');
		assert.match(cmd.type === 'command' ? cmd.text : '', /fix the race in the cache/);
		await until('the input cleared', async () => (await person({ type: 'inputValue' })).value === '');
	});

	await it("an MCP server's prompt runs as /elicit:greet: kin fetches it and sends its text as the question", async () => {
		if (!ctx.mcpStatus.has('elicit')) {
			throw new Skip('needs the MCP server of the earlier test');
		}
		await until('the prompt among the commands', () => ctx.chat.commands.some((c) => c.name === 'elicit:greet'), 30000);
		const started = next(ctx, 'turn/started');
		const completed = next(ctx, 'turn/completed');
		await person({ type: 'webviewFill', selector: '#input', value: '/elicit:gr' });
		await person({ type: 'webviewText', contains: '/elicit:greet' });
		await person({ type: 'key', key: 'Tab' });
		await person({ type: 'type', text: 'Ana' });
		await person({ type: 'key', key: 'Enter' });
		assert.equal((await started).input, 'say hello to Ana');
		assert.equal((await completed).status, 'completed');
		await person({ type: 'webviewText', contains: 'say hello to Ana' });
	});

	await it('the mode picker: ask refuses a change without asking, auto-edit writes the workspace without asking, and the mode survives a restart', async () => {
		const asked: any[] = [];
		const d = ctx.service.onNotification('approval/request', (p) => asked.push(p));
		try {
			await person({ type: 'webviewSelect', selector: '#mode', value: 'ask' });
			await until('kin to take the mode', () => ctx.chat.state.mode === 'ask');
			let completed = next(ctx, 'turn/completed');
			await ctx.chat.send('try to write in ask mode');
			await completed;
			assert.equal(tool(ctx, 'call_askmode')?.status, 'denied');
			assert.equal(fs.existsSync(path.join(ws, 'ask-mode.txt')), false);
			// The refusal says why, in kin's words, under the call (not only "denied").
			// The page draws the turn's end after kin said it ended: wait for it there (a query
			// at once failed one CI run in several, and the tests after it with the mode left ask).
			const why = await until('the reason under the refused call', async () => {
				const q = await person({ type: 'webviewQuery', selector: '.entry.tool[data-call="call_askmode"] .why' });
				return q.visible === 1 ? q : undefined;
			});
			assert.match(why.value, /ask mode, which offers no tools that change files or run commands/);
			assert.match(why.value, /switches the mode to Agent/);
			await person({ type: 'webviewSelect', selector: '#mode', value: 'auto-edit' });
			await until('kin to take the mode', () => ctx.chat.state.mode === 'auto-edit');
			completed = next(ctx, 'turn/completed');
			await ctx.chat.send('write two files');
			assert.equal((await completed).status, 'completed');
			assert.equal(fs.readFileSync(path.join(ws, 'undo-a.txt'), 'utf8'), 'a, written by kin\n');
			assert.equal(fs.readFileSync(path.join(ws, 'undo-b.txt'), 'utf8'), 'b, written by kin\n');
			assert.deepEqual(asked, [], 'no approval was asked in either mode');
		} finally {
			d.dispose();
		}
		await vscode.commands.executeCommand('kin.restartService');
		await until('the session resumed in auto-edit', () => ctx.service.state === 'ready' && ctx.chat.state.mode === 'auto-edit', 30000);
		await until('the picker to show it', async () => (await person({ type: 'webviewQuery', selector: '#mode' })).value === 'auto-edit');
		await person({ type: 'webviewSelect', selector: '#mode', value: 'agent' });
		await until('back to agent', () => ctx.chat.state.mode === 'agent');
	});

	await it("Undo on a turn puts its files back and leaves one changed since as a conflict, with the diff", async () => {
		const users = ctx.chat.state.entries.filter((e): e is UserEntry => e.type === 'user' && e.text === 'write two files');
		const turnId = users[users.length - 1].turnId;
		fs.writeFileSync(path.join(ws, 'undo-b.txt'), 'b, changed by hand\n');
		await person({ type: 'webviewClick', selector: `.entry.turn-end[data-turn="${turnId}"] [data-action="undo"]` });
		const u = await until('the undo to answer', () => ctx.chat.state.entries.find((e) => e.type === 'undo' && e.result.turnId === turnId));
		assert.ok(u.type === 'undo');
		assert.deepEqual(u.result.restored, [path.join(ws, 'undo-a.txt')]);
		assert.equal(u.result.conflicts?.[0].path, path.join(ws, 'undo-b.txt'));
		assert.equal(fs.existsSync(path.join(ws, 'undo-a.txt')), false, 'the created file is gone');
		assert.equal(fs.readFileSync(path.join(ws, 'undo-b.txt'), 'utf8'), 'b, changed by hand\n', 'the file changed since is left');
		await person({ type: 'webviewText', contains: 'Undid “write two files”: restored 1 file' });
		assert.equal(u.question, 'write two files');
		await person({ type: 'webviewText', contains: '+b, changed by hand' });
		await person({ type: 'webviewText', contains: 'file changes undone' });
	});

	await it('at the tool-call limit kin asks on a card whether to go on; Continue lets the turn finish', async () => {
		const request = next(ctx, 'approval/request', (p) => p.kind === 'continue', 60000);
		const completed = next(ctx, 'turn/completed', () => true, 60000);
		await ctx.chat.send('make many calls');
		const req = await request;
		const card = await person({ type: 'card', contains: 'tool-call limit', click: req.options.find((o: any) => o.optionId === 'allow_once').name });
		recordDeny('continue', req, card);
		assert.match(card.text, /16 tool calls/);
		assert.equal((await completed).status, 'completed');
		const calls = ctx.chat.state.entries.filter((e) => e.type === 'tool' && e.callId.startsWith('call_many_'));
		assert.equal(calls.length, 17);
		assert.ok(calls.every((c) => c.type === 'tool' && c.status === 'completed'));
		return card.buttons.join(' | ');
	});

	await it('kin asks the person (its ask tool) in a card, whose Answer… opens a quick pick headed "kin asks"', async () => {
		const completed = next(ctx, 'turn/completed');
		const asked = next(ctx, 'elicitation/request');
		await ctx.chat.send('ask me which database');
		const req = await asked;
		assert.equal(req.source, 'kin');
		await person({ type: 'webviewText', contains: 'kin asks for input' });
		const card = await person({ type: 'card', contains: 'kin asks you a question', click: 'Answer…' });
		assert.match(card.text, /Which database should the tests use\?/);
		assert.match(card.text, /kin \(its model, with the ask tool\)/);
		await person({ type: 'quickInput', titleContains: 'kin asks (1/1): Which database should the tests use?', pick: 'sqlite' });
		assert.equal((await completed).status, 'completed');
		assert.match(tool(ctx, 'call_ask')?.output ?? '', /sqlite/);
		await person({ type: 'webviewText', contains: 'Using the database you chose.' });
	});

	await it('a reasoning summary shows folded above the answer (opened on a click) and the gauge says how full the window is', async () => {
		const usage: any[] = [];
		const reasoning: any[] = [];
		const d1 = ctx.service.onNotification('turn/usage', (p) => usage.push(p));
		const d2 = ctx.service.onNotification('turn/reasoning', (p) => reasoning.push(p));
		try {
			const completed = next(ctx, 'turn/completed');
			await person({ type: 'webviewFill', selector: '#input', value: 'think it over' });
			await person({ type: 'key', key: 'Enter' });
			assert.equal((await completed).status, 'completed');
		} finally {
			d1.dispose();
			d2.dispose();
		}
		assert.ok(reasoning.length > 0, 'turn/reasoning arrived');
		const entry = await until('the reasoning entry', () => ctx.chat.state.entries.find((e) => e.type === 'reasoning'));
		assert.equal(entry.type === 'reasoning' && entry.text, reasoning.map((r) => r.text).join(''));
		await person({ type: 'webviewText', contains: 'Guard the map with a sync.Mutex.' });
		await person({ type: 'webviewText', contains: 'Reasoning Weighing the cache' });
		// Folded: its body is not shown until the person opens it.
		const before = await person({ type: 'webviewQuery', selector: '.entry.reasoning >> nth=-1 >> details[open]' });
		assert.equal(before.count, 0, 'the reasoning is folded');
		const shown = (await person({ type: 'webviewText', contains: 'Guard the map' })).text as string;
		assert.ok(!shown.includes('a mutex is the smallest fix'), 'the folded body is not shown');
		await person({ type: 'webviewClick', selector: '.entry.reasoning >> nth=-1 >> summary' });
		await person({ type: 'webviewText', contains: 'a mutex is the smallest fix' });
		// The gauge: the last turn/usage of the turn, as a share of the model's window.
		const u = usage[usage.length - 1];
		assert.ok(u.contextWindow > 0 && u.contextTokens > 0, JSON.stringify(u));
		const pct = Math.min(100, Math.round((u.contextTokens / u.contextWindow) * 100));
		await until('the gauge to show the usage', async () => (await person({ type: 'webviewQuery', selector: `#gauge [aria-valuenow="${pct}"]` })).count === 1);
		await person({ type: 'webviewText', contains: `${pct}% of 200k` });
		if (screenshotDir) {
			// A click on the answer's heading scrolls the answer into view under the opened summary.
			await person({ type: 'webviewClick', selector: '.entry.assistant >> nth=-1 >> .body' });
			await person({ type: 'screenshot', path: path.join(screenshotDir, 'screenshot-reasoning.png'), settleMs: 600 });
		}
		return `usage ${u.contextTokens}/${u.contextWindow}`;
	});

	await it('the model picker switches the session to another of kin\'s models (between turns) and the effort picker offers its efforts', async () => {
		await until('models/list', () => (ctx.chat.models?.models.length ?? 0) >= 2);
		assert.equal(ctx.chat.model, 'mock-large');
		// The view draws models/list after the extension has it: wait for the page, not the state.
		await until('the picker to offer the four models', async () => (await person({ type: 'webviewQuery', selector: '#model option' })).count === 4);
		await until('the effort picker', async () => (await person({ type: 'webviewQuery', selector: '#effort-picker' })).visible === 1);
		// A model whose key is not set says so, and how to set it here.
		assert.equal((await person({ type: 'webviewQuery', selector: '#model option[value="mock-keyed"][title*="kin: Set API Key"]' })).count, 1);
		// Effort: kin's efforts for the model, as kin sends them.
		await person({ type: 'webviewSelect', selector: '#effort', value: 'high' });
		await until('the effort to be high', () => ctx.chat.effort === 'high');
		// Another model: the next request goes to it (its window is the gauge's).
		await person({ type: 'webviewSelect', selector: '#model', value: 'mock-small' });
		await until('the model to be mock-small', () => ctx.chat.model === 'mock-small');
		assert.equal(ctx.chat.effort, undefined, 'kin dropped the effort the small model does not take');
		// The effort picker is gone for a model without efforts (not only marked hidden), and the
		// status line under the pickers names the new model.
		await until('the effort picker to go', async () => (await person({ type: 'webviewQuery', selector: '#effort-picker' })).visible === 0);
		const line = await until('the status line to name Mock Small', async () => {
			const q = await person({ type: 'webviewQuery', selector: '#status' });
			return q.value.includes('Mock Small') ? q.value : undefined;
		});
		assert.doesNotMatch(line, /Mock Large|mock-large/);
		// The gauge is a share of the new model's window at once, before the next turn reports it.
		await person({ type: 'webviewText', contains: 'of 64k' });
		const usage = next(ctx, 'turn/usage');
		const completed = next(ctx, 'turn/completed');
		await ctx.chat.send('say hello');
		assert.equal((await usage).contextWindow, 64000);
		await completed;
		await person({ type: 'webviewText', contains: 'of 64k' });
		// The choice is the session's: it comes back on resume.
		const r = await ctx.chat.resume(ctx.chat.sessionId!);
		assert.equal(r.model, 'mock-small');
		await until('the picker to show mock-small', async () => (await person({ type: 'webviewQuery', selector: '#model' })).value === 'mock-small');
		await person({ type: 'webviewSelect', selector: '#model', value: 'mock-large' });
		await until('the model back to mock-large', () => ctx.chat.model === 'mock-large');
	});

	await it('with no key, the first-run message says to use "kin: Set API Key" and kin.env (not only the environment), and its button stores the key', async () => {
		const saved = process.env.OPENAI_API_KEY;
		delete process.env.OPENAI_API_KEY; // the extension host's environment: kin starts without a key
		await ctx.keys.set('OPENAI_API_KEY', '');
		try {
			await vscode.commands.executeCommand('notifications.clearAll');
			await ctx.service.restart();
			assert.equal(ctx.service.initializeResult?.model?.configured, false);
			const n = await person({ type: 'notification', contains: 'model service is not configured', click: 'Set API Key' });
			assert.match(n.text, /kin: Set API Key/);
			assert.match(n.text, /kin\.env/);
			await person({ type: 'quickInput', titleContains: 'set the API key of which model', pick: 'OPENAI_API_KEY' });
			await person({ type: 'quickInput', titleContains: 'API key OPENAI_API_KEY', value: 'test' });
			await until('kin restarted with the key', () => ctx.service.state === 'ready' && ctx.service.initializeResult?.model?.configured === true, 30000);
			assert.deepEqual(ctx.service.launch?.storedKeys, ['OPENAI_API_KEY']);
			const completed = next(ctx, 'turn/completed');
			await ctx.chat.send('say hello');
			assert.equal((await completed).status, 'completed');
			return n.text.split('\n').find((l: string) => l.includes('not configured'));
		} finally {
			process.env.OPENAI_API_KEY = saved;
			await ctx.keys.set('OPENAI_API_KEY', '');
			await ctx.service.restart();
		}
	});

	await it('"kin: Set API Key" stores the key of the model that needs it under its variable; kin.env says why it passes no key; a turn on that model reaches the service with it, and the key is in no file', async () => {
		const secret = 'kin-it-second-key-7f3a';
		const cfg = () => vscode.workspace.getConfiguration('kin');
		const envBefore = cfg().inspect<Record<string, string>>('env')?.globalValue ?? {};
		// A key put into kin.env is not passed, and VS Code says so, why, and where it goes.
		await cfg().update('env', { ...envBefore, KIN_IT_SECOND_KEY: 'put-in-settings' }, vscode.ConfigurationTarget.Global);
		try {
			await vscode.commands.executeCommand('notifications.clearAll');
			await ctx.service.restart();
			assert.deepEqual(ctx.service.launch?.droppedKeys, ['KIN_IT_SECOND_KEY']);
			assert.equal(ctx.chat.models?.models.find((m) => m.id === 'mock-keyed')?.configured, false, "Mock Keyed's key is missing");
			const n = await person({ type: 'notification', contains: 'KIN_IT_SECOND_KEY is not passed to kin', click: 'Set API Key' });
			assert.match(n.text, /settings\.json/);
			// Its button names the variable: straight to the key's input, where the person types it.
			await person({ type: 'quickInput', titleContains: 'API key KIN_IT_SECOND_KEY (Mock Keyed)', value: secret });
			await until('kin restarted with the key', () => ctx.service.state === 'ready' && !!ctx.service.launch?.storedKeys.includes('KIN_IT_SECOND_KEY'), 30000);
		} finally {
			await cfg().update('env', envBefore, vscode.ConfigurationTarget.Global);
		}
		await ctx.service.restart();
		assert.deepEqual(ctx.service.launch?.droppedKeys, [], 'kin.env holds no key now');
		assert.ok(ctx.service.launch?.storedKeys.includes('KIN_IT_SECOND_KEY'), 'the stored key is passed on every start');
		// Set API Key from the palette offers each model's key (the default model's first); the
		// person picks the one Mock Keyed reads and types it again.
		void vscode.commands.executeCommand('kin.setApiKey');
		const pick = await person({ type: 'quickInput', titleContains: 'set the API key of which model', expectText: 'Mock Keyed', pick: 'KIN_IT_SECOND_KEY' });
		assert.ok(pick.shown.indexOf('OPENAI_API_KEY') < pick.shown.indexOf('KIN_IT_SECOND_KEY'), pick.shown);
		const restarted = new Promise<void>((r) => {
			const d = ctx.service.onDidBecomeReady(() => (d.dispose(), r()));
		});
		await person({ type: 'quickInput', titleContains: 'API key KIN_IT_SECOND_KEY', value: secret });
		await restarted;
		await until('Mock Keyed to be configured', () => ctx.chat.models?.models.find((m) => m.id === 'mock-keyed')?.configured === true);
		try {
			await person({ type: 'webviewSelect', selector: '#model', value: 'mock-keyed' });
			await until('the model to be mock-keyed', () => ctx.chat.model === 'mock-keyed');
			const completed = next(ctx, 'turn/completed');
			await ctx.chat.send('which key reached you');
			assert.equal((await completed).status, 'completed');
			// The mock answers so only when the request carried the second key.
			await person({ type: 'webviewText', contains: 'The second key reached the mock.' });
			// Never in a file: settings, the output channel's log (with the JSON-RPC trace on), kin's
			// log, KIN_HOME (sessions, settings).
			const userData = process.env.KIN_USER_DATA ?? '';
			const files = [...filesUnder(path.join(userData, 'User')).filter((f) => f.endsWith('.json')), ...filesUnder(path.join(userData, 'Machine')), ...filesUnder(path.join(userData, 'logs')), expectLog, ...filesUnder(process.env.KIN_HOME ?? '')];
			const outputLog = await until(
				"the output channel's log (naming the key's variable)",
				() => files.concat(filesUnder(path.join(userData, 'logs'))).find((f) => fs.readFileSync(f, 'utf8').includes("keys from VS Code's secret storage: KIN_IT_SECOND_KEY")),
				30000,
			);
			const leaks = [...new Set([...files, ...filesUnder(path.join(userData, 'logs'))])].filter((f) => fs.readFileSync(f, 'utf8').includes(secret));
			assert.deepEqual(leaks, [], 'the key is in no settings, log or session file');
			return `${pick.shown?.split('\n').slice(0, 4).join(' / ')}; output log ${path.basename(outputLog)}`;
		} finally {
			await person({ type: 'webviewSelect', selector: '#model', value: 'mock-large' });
			await until('the model back to mock-large', () => ctx.chat.model === 'mock-large');
			await ctx.keys.set('KIN_IT_SECOND_KEY', '');
		}
	});

	await it('@ in the input offers workspace files; the mention attaches the file, whose contents the model gets', async () => {
		fs.writeFileSync(path.join(ws, 'attach-me.go'), 'package main\n\n// kin-attached-marker\nfunc attached() {}\n');
		const rec = recordRequests(ctx);
		try {
			await person({ type: 'webviewFill', selector: '#input', value: 'what is in @attach-m' });
			await person({ type: 'webviewText', contains: '@attach-me.go' });
			await person({ type: 'key', key: 'Tab' });
			assert.equal((await person({ type: 'inputValue' })).value, 'what is in @attach-me.go ');
			const started = next(ctx, 'turn/started');
			const completed = next(ctx, 'turn/completed');
			await person({ type: 'key', key: 'Enter' });
			const st = await started;
			assert.equal((await completed).status, 'completed');
			const sent = rec.calls.find((c) => c.method === 'turn/start');
			assert.deepEqual(sent?.params.input, [
				{ type: 'text', text: 'what is in @attach-me.go' },
				{ type: 'file', path: 'attach-me.go' },
			]);
			assert.deepEqual(st.parts?.map((p: any) => [p.type, p.path]), [['file', 'attach-me.go']]);
		} finally {
			rec.stop();
		}
		await person({ type: 'webviewText', contains: 'The attached file holds the marker.' });
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.user >> nth=-1 >> .chip.part-file' })).count, 1);
	});

	await it('the selection and the file\'s problems are attached from the editor, shown as chips, and sent as parts', async () => {
		const file = path.join(ws, 'attach-sel.go');
		fs.writeFileSync(file, 'package main\n\nfunc kinSelected() {}\n');
		const uri = vscode.Uri.file(file);
		const doc = await vscode.workspace.openTextDocument(uri);
		const ed = await vscode.window.showTextDocument(doc, { preview: false });
		ed.selection = new vscode.Selection(2, 0, 2, 21);
		const diags = vscode.languages.createDiagnosticCollection('kin-test');
		diags.set(uri, [new vscode.Diagnostic(new vscode.Range(2, 5, 2, 16), 'kin-problem-marker: kinSelected is unused', vscode.DiagnosticSeverity.Warning)]);
		const rec = recordRequests(ctx);
		try {
			await vscode.commands.executeCommand('kin.openChat');
			await person({ type: 'webviewClick', selector: '#attach-selection' });
			await person({ type: 'webviewText', contains: 'selection in attach-sel.go:3' });
			await person({ type: 'webviewClick', selector: '#attach-problems' });
			await person({ type: 'webviewText', contains: '1 problem in attach-sel.go' });
			// A chip can be taken off again (and put back).
			await person({ type: 'webviewClick', selector: '#attachments [data-action="detach"][data-index="1"]' });
			await until('the problems chip removed', async () => (await person({ type: 'webviewQuery', selector: '#attachments .chip' })).count === 1);
			await person({ type: 'webviewClick', selector: '#attach-problems' });
			await until('two chips', async () => (await person({ type: 'webviewQuery', selector: '#attachments .chip' })).count === 2);
			const completed = next(ctx, 'turn/completed');
			await person({ type: 'webviewFill', selector: '#input', value: 'explain this' });
			await person({ type: 'webviewClick', selector: '#send' });
			assert.equal((await completed).status, 'completed');
			const sent = rec.calls.find((c) => c.method === 'turn/start');
			const range = { start: { line: 2, character: 0 }, end: { line: 2, character: 21 } };
			assert.deepEqual(sent?.params.input, [
				{ type: 'text', text: 'explain this' },
				{ type: 'selection', path: 'attach-sel.go', range, text: 'func kinSelected() {}' },
				{ type: 'diagnostics', path: 'attach-sel.go', items: [{ range: { start: { line: 2, character: 5 }, end: { line: 2, character: 16 } }, severity: 'warning', message: 'kin-problem-marker: kinSelected is unused' }] },
			]);
		} finally {
			rec.stop();
			diags.dispose();
		}
		await person({ type: 'webviewText', contains: 'I see the selection and its problem.' });
		assert.equal((await person({ type: 'webviewQuery', selector: '#attachments .chip' })).count, 0, 'the chips went with the question');
		await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
	});

	await it('an image pasted into the chat input is attached and sent to kin as an image part', async () => {
		const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
		const rec = recordRequests(ctx);
		try {
			await vscode.commands.executeCommand('kin.openChat');
			await person({ type: 'pasteImage', png });
			await person({ type: 'webviewText', contains: 'image (image/png)' });
			const completed = next(ctx, 'turn/completed');
			await person({ type: 'webviewFill', selector: '#input', value: 'what is in the pasted image' });
			await person({ type: 'webviewClick', selector: '#send' });
			assert.equal((await completed).status, 'completed');
			const sent = rec.calls.find((c) => c.method === 'turn/start');
			const input = sent?.params.input;
			assert.deepEqual(input?.[0], { type: 'text', text: 'what is in the pasted image' });
			assert.equal(input?.[1]?.type, 'image');
			assert.equal(input?.[1]?.mimeType, 'image/png');
			assert.match(input?.[1]?.data ?? '', /^iVBORw0KGgo/, 'a PNG, base64');
		} finally {
			rec.stop();
		}
		await person({ type: 'webviewText', contains: 'I see the pasted image.' });
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.user >> nth=-1 >> .chip.part-image' })).count, 1);
	});

	await it('/compact summarises the conversation for the model; the summary shows folded where it was made, the whole conversation stays', async () => {
		const users = ctx.chat.state.entries.filter((e) => e.type === 'user').length;
		const notice = next(ctx, 'notice', (p) => p.source === 'compaction', 60000);
		await person({ type: 'webviewFill', selector: '#input', value: '/compact' });
		await person({ type: 'key', key: 'Enter' });
		await notice;
		const c = await until('the compaction in the transcript', () => ctx.chat.state.entries.find((e) => e.type === 'compaction'), 60000);
		assert.ok(c.type === 'compaction' && c.text.length > 0);
		assert.equal(ctx.chat.state.entries.filter((e) => e.type === 'user').length, users, 'nothing dropped from the transcript');
		await person({ type: 'webviewText', contains: 'Earlier conversation summarised for the model' });
		assert.equal((await person({ type: 'webviewQuery', selector: '.entry.compaction details[open]' })).count, 0, 'folded');
		await person({ type: 'webviewText', contains: 'Summarised the conversation' });
	});

	await it('switching to a smaller model says before the next question that the conversation will be summarised, in words ("about 40,903 tokens", not "40903 of 16000")', async () => {
		let completed = next(ctx, 'turn/completed');
		await ctx.chat.send('write a long answer'); // the service counts 40,903 tokens
		await completed;
		const ahead = next(ctx, 'notice', (p) => p.source === 'compaction' && /before your next question/.test(p.message));
		await person({ type: 'webviewSelect', selector: '#model', value: 'mock-tiny' });
		const n = await ahead;
		assert.match(n.message, /^The conversation \(about 4\d,\d{3} tokens\) is longer than Mock Tiny's 16,000-token context window: kin will summarise it before your next question/);
		assert.doesNotMatch(n.message, /\d{5}/, 'numbers are grouped');
		await person({ type: 'webviewText', contains: "is longer than Mock Tiny's 16,000-token context window" });
		// The next question is summarised first, as said.
		const summarised = next(ctx, 'notice', (p) => p.source === 'compaction' && /kin summarised/.test(p.message), 60000);
		completed = next(ctx, 'turn/completed', () => true, 60000);
		await ctx.chat.send('say hello');
		const s = await summarised;
		assert.match(s.message, /about [\d,]+ tokens, was about to pass 80% of Mock Tiny's 16,000-token context window/);
		assert.doesNotMatch(s.message, /\d{5}/);
		assert.equal((await completed).status, 'completed');
		const entries = ctx.chat.state.entries;
		const said = entries.findIndex((e) => e.type === 'notice' && /before your next question/.test(e.message));
		const asked = entries.map((e) => e.type === 'user' && e.text === 'say hello').lastIndexOf(true);
		assert.ok(said >= 0 && said < asked, 'said before the question');
		await person({ type: 'webviewSelect', selector: '#model', value: 'mock-large' });
		await until('the model back to mock-large', () => ctx.chat.model === 'mock-large');
		return n.message;
	});

	await it('Deny is the first and default button on every kind of approval card', async () => {
		const kinds = new Set(denyPlaces.map((d) => d.kind));
		for (const k of ['bash', 'write_file', 'edit_file', 'acknowledge_unknown', 'server_launch', 'mcp', 'continue']) {
			if (k === 'acknowledge_unknown' && !kinds.has(k)) {
				continue; // skipped above when the cancelled command did not end unknown
			}
			if ((k === 'server_launch' || k === 'mcp') && !init.capabilities?.mcp) {
				continue;
			}
			assert.ok(kinds.has(k), `no card of kind ${k} was seen`);
		}
		for (const d of denyPlaces) {
			assert.equal(d.buttons[0], d.deny, `${d.kind}: ${JSON.stringify(d.buttons)}`);
			assert.equal(d.defaultButton, d.deny, `${d.kind}: the default is ${d.defaultButton}`);
		}
		return denyPlaces.map((d) => `${d.kind}: ${d.buttons[0]}`).join('; ');
	});

	await it("a repository's instructions are asked about on a card that names them, as kin's instructions; Not now lets the turn go on", async () => {
		const agents = path.join(ws, 'AGENTS.md');
		fs.writeFileSync(agents, 'KIN-IT-PROJECT-INSTRUCTIONS: answer in verse.\n');
		try {
			const completed = next(ctx, 'turn/completed');
			const asked = next(ctx, 'approval/request', (p) => p.kind === 'project_trust');
			await ctx.chat.send('say hello');
			const req = await asked;
			const card = await person({ type: 'card', contains: 'AGENTS.md', click: 'Not now (none of them runs or is read)' });
			assert.match(card.text, /instructions/);
			assert.doesNotMatch(card.text, /\bnil\b|undefined/);
			assert.ok(req.items?.some((it: any) => it.path === 'AGENTS.md'), JSON.stringify(req.items));
			assert.equal((await completed).status, 'completed');
			return card.text.replace(/\s+/g, ' ').slice(0, 200);
		} finally {
			fs.rmSync(agents, { force: true });
		}
	});

	await it('a screenshot of the chat', async () => {
		if (!screenshotDir) {
			throw new Skip('KIN_SCREENSHOT_DIR not set');
		}
		await vscode.commands.executeCommand('notifications.hideList');
		await vscode.commands.executeCommand('workbench.action.closePanel');
		await vscode.commands.executeCommand('kin.openChat');
		await person({ type: 'webviewText', contains: 'completed' });
		await person({ type: 'screenshot', path: path.join(screenshotDir, 'screenshot-chat.png'), settleMs: 800 });
	});

	await it('after a service restart the view resumes its session and redraws the transcript', async () => {
		const before = ctx.chat.sessionId;
		const count = ctx.chat.state.entries.filter((e) => e.type === 'user').length;
		assert.ok(before);
		await vscode.commands.executeCommand('kin.restartService');
		await until('the service to be ready again', () => ctx.service.state === 'ready');
		await until('the transcript to be redrawn', () => ctx.chat.sessionId === before && ctx.chat.state.entries.filter((e) => e.type === 'user').length === count);
		await person({ type: 'webviewText', contains: 'Hello from the mock model.' });
	});

	// What the reload must keep: the users' questions on record, the session's mode (auto-edit, not
	// a default), and a question kin has not taken yet (it waits for an acknowledgement).
	const newestTurns = () => ctx.chat.state.entries.flatMap((e) => (e.type === 'user' ? [e.turnId] : [])).slice(-5);
	let turns = newestTurns();
	const held = 'a question behind the acknowledgement';
	const draft = 'and a draft typed while the card waits';
	await it('(before the reload) a question sent while an unknown outcome waits for its acknowledgement, a draft typed meanwhile, and the mode auto-edit', async () => {
		await killKinDuringTheSlowCommand(ctx);
		turns = newestTurns(); // the held question below is not kin's yet
		await ctx.chat.configure('auto-edit');
		const ack = next(ctx, 'approval/request', (p) => p.kind === 'acknowledge_unknown');
		await vscode.commands.executeCommand('kin.openChat');
		await person({ type: 'webviewFill', selector: '#input', value: held });
		await person({ type: 'key', key: 'Enter' });
		await ack;
		await person({ type: 'card', contains: 'may already have run' });
		await until('the input cleared once kin took the turn', async () => (await person({ type: 'inputValue' })).value === '');
		await person({ type: 'webviewFill', selector: '#input', value: draft });
		await until('the extension to keep the draft', () => ctx.chat.draft === draft);
	});

	// Phase 1 ends with a window reload; the harness starts again in the new extension host.
	fs.writeFileSync(reloadState, JSON.stringify({ sessionId: ctx.chat.sessionId, turns, held, draft, mode: ctx.chat.mode, results }));
	log('reloading the window');
	await person({ type: 'reload' });
}

function finish(results: Result[]): void {
	const passed = results.filter((r) => r.outcome === 'passed').length;
	const failed = results.filter((r) => r.outcome === 'failed').length;
	const skipped = results.filter((r) => r.outcome === 'skipped').length;
	log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
	const tmp = path.join(signalDir, '.result.json');
	fs.writeFileSync(tmp, JSON.stringify({ passed, failed, skipped, results }, null, 2));
	fs.renameSync(tmp, path.join(signalDir, 'result.json'));
}

export function activate(): void {
	if (!signalDir) {
		console.log('[kin-test] KIN_SIGNAL_DIR is not set; the harness does nothing');
		return;
	}
	main().catch((err) => {
		log(`harness failed: ${err instanceof Error ? err.stack : String(err)}`);
		fs.writeFileSync(path.join(signalDir, 'result.json'), JSON.stringify({ passed: 0, failed: 1, skipped: 0, error: String(err) }));
	});
}

export function deactivate(): void {}

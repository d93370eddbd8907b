// The kin service: spawns `kin serve`, speaks the protocol over its stdio, restarts it after a
// crash within a budget, and stops it with `shutdown` + `exit`, killing it when it does not answer.
// Notification handlers registered here survive restarts: they are attached to every new
// connection.

import * as cp from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { KeyStore, SECRET_NAME, droppedKeysText } from './apiKeys';
import { readLaunchSettings } from './launchSettings';
import { Connection, RequestHandler, RpcError } from './protocol/connection';
import { CrashBudget } from './protocol/crashBudget';
import { InitializeParams, InitializeResult, PROTOCOL_VERSION } from './protocol/types';

export type ServiceState = 'stopped' | 'starting' | 'ready' | 'failed';

const SHUTDOWN_TIMEOUT_MS = 3000;
const EXIT_TIMEOUT_MS = 2000;

export interface ServiceOptions {
	output: vscode.OutputChannel;
	/** The keys stored with "kin: Set API Key", passed in kin's environment by name. */
	keys: KeyStore;
	version: string;
	/** The extension's folder: a platform-specific package ships kin as bin/kin in it. */
	extensionPath?: string;
	/** What the editor declares it does with its buffers (PROTOCOL.md, Documents). */
	textDocuments?: { sync: boolean; applyEdit: boolean };
}

/** How the service was last started, for the log and the tests: never the env's values. */
export interface Launch {
	command: string;
	args: string[];
	/** The names kin.env added. */
	envNames: string[];
	/** kin.env's names that hold secrets, not passed (Set API Key is where keys go). */
	droppedKeys: string[];
	/** The variables whose key came from VS Code's secret storage (names only). */
	storedKeys: string[];
	/** Where the command came from: kin.path, the bundled binary, or PATH. */
	from: 'kin.path' | 'bundled' | 'PATH';
}

export class KinService implements vscode.Disposable {
	private child: cp.ChildProcess | undefined;
	private conn: Connection | undefined;
	private stateValue: ServiceState = 'stopped';
	private stopping = false;
	private readonly budget = new CrashBudget(3, 3 * 60 * 1000);
	// handlers is the notification table every connection dispatches to: method -> handlers.
	private readonly handlers = new Map<string, ((params: any) => void)[]>();
	// requestHandlers answers kin's requests to the editor on every connection, by method.
	private readonly requestHandlers = new Map<string, RequestHandler>();
	private readonly stateEmitter = new vscode.EventEmitter<ServiceState>();
	private readonly readyEmitter = new vscode.EventEmitter<InitializeResult>();
	private startPromise: Promise<InitializeResult> | undefined;
	initializeResult: InitializeResult | undefined;
	/** How the running (or last) service was started. */
	launch: Launch | undefined;

	/** Fires on every change of state. */
	readonly onDidChangeState = this.stateEmitter.event;
	/** Fires after each successful `initialize` (the first start and every restart). */
	readonly onDidBecomeReady = this.readyEmitter.event;

	constructor(private readonly opts: ServiceOptions) {}

	get state(): ServiceState {
		return this.stateValue;
	}

	/** Registers a notification handler for this and every later connection. */
	onNotification(method: string, handler: (params: any) => void): vscode.Disposable {
		const list = this.handlers.get(method) ?? [];
		list.push(handler);
		this.handlers.set(method, list);
		return new vscode.Disposable(() => {
			this.handlers.set(
				method,
				(this.handlers.get(method) ?? []).filter((h) => h !== handler),
			);
		});
	}

	/** Answers kin's requests of one method, on this and every later connection. */
	onRequest(method: string, handler: RequestHandler): vscode.Disposable {
		this.requestHandlers.set(method, handler);
		this.conn?.onRequest(method, handler);
		return new vscode.Disposable(() => {
			if (this.requestHandlers.get(method) === handler) {
				this.requestHandlers.delete(method);
			}
		});
	}

	/** Sends a notification when the service is ready; dropped otherwise (kin starts from didOpen again). */
	notify(method: string, params?: unknown): void {
		if (this.conn && !this.conn.closed && this.stateValue === 'ready') {
			this.conn.notify(method, params);
		}
	}

	/**
	 * Hands a notification to the registered handlers. The connection calls it for everything kin
	 * sends; the integration tests call it to feed a synthesized notification.
	 */
	dispatch(method: string, params: unknown): void {
		for (const h of this.handlers.get(method) ?? []) {
			try {
				h(params);
			} catch (err) {
				this.opts.output.appendLine(`[kin] handler for ${method} failed: ${err instanceof Error ? err.stack : String(err)}`);
			}
		}
	}

	/** Sends a request, starting the service first if it is not running. */
	async request<R>(method: string, params?: unknown, signal?: AbortSignal): Promise<R> {
		const conn = await this.ready();
		return conn.request<R>(method, params, signal);
	}

	/** Resolves with the live connection, starting the service when needed. */
	async ready(): Promise<Connection> {
		if (this.conn && !this.conn.closed && this.stateValue === 'ready') {
			return this.conn;
		}
		await this.start();
		if (!this.conn) {
			throw new RpcError(-32603, 'kin: the service is not running');
		}
		return this.conn;
	}

	start(): Promise<InitializeResult> {
		if (this.startPromise) {
			return this.startPromise;
		}
		this.startPromise = this.doStart().finally(() => {
			this.startPromise = undefined;
		});
		return this.startPromise;
	}

	private async doStart(): Promise<InitializeResult> {
		this.stopping = false;
		this.setState('starting');
		const cfg = vscode.workspace.getConfiguration('kin');
		const launch = readLaunchSettings(cfg);
		const out = this.opts.output;
		if (launch.ignored.length) {
			out.appendLine(`[kin] ignoring ${launch.ignored.join(', ')} in workspace settings: a repository does not choose which program runs; set them in User (or Remote) settings`);
		}
		const { command, from } = this.command(launch.path);
		const level = cfg.get<string>('logLevel') ?? 'info';
		const args = ['serve', '--log-level', level === 'warning' ? 'warn' : level, ...launch.args];
		const { env, dropped, stored } = await this.environment(launch.env);
		const folders = vscode.workspace.workspaceFolders ?? [];
		const cwd = folders.find((f) => f.uri.scheme === 'file')?.uri.fsPath ?? os.homedir();
		this.launch = { command, args, envNames: Object.keys(launch.env).filter((k) => !dropped.includes(k) && env[k] !== undefined), droppedKeys: dropped, storedKeys: stored, from };
		if (dropped.length) {
			out.appendLine(`[kin] ${droppedKeysText(dropped).replace(/^kin: /, '')}`);
		}
		out.appendLine(
			`[kin] starting ${command} ${args.join(' ')} (${from}; cwd ${cwd}${this.launch.envNames.length ? `; kin.env ${this.launch.envNames.join(', ')}` : ''}` +
				`${stored.length ? `; keys from VS Code's secret storage: ${stored.join(', ')}` : ''})`,
		);

		const child = cp.spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
		this.child = child;
		const spawned = new Promise<void>((resolve, reject) => {
			child.once('spawn', () => resolve());
			child.once('error', (err) => reject(err));
		});
		child.stderr!.on('data', (chunk: Buffer) => out.append(chunk.toString('utf8')));
		child.stdin!.on('error', (err) => out.appendLine(`[kin] stdin: ${err.message}`));
		const trace = cfg.get<boolean>('trace') ?? false;
		const conn = new Connection(child.stdout!, child.stdin!, {
			trace: trace ? (dir, msg) => out.appendLine(`[trace ${dir === 'send' ? '→' : '←'}] ${JSON.stringify(msg)}`) : undefined,
			onProtocolError: (m) => out.appendLine(`[kin] ${m}`),
		});
		conn.onAnyNotification((method, params) => this.dispatch(method, params));
		for (const [method, h] of this.requestHandlers) {
			conn.onRequest(method, h);
		}
		this.conn = conn;
		child.on('exit', (code, signal) => this.onExit(child, conn, code, signal));

		try {
			await spawned;
		} catch (err) {
			conn.close();
			this.conn = undefined;
			this.child = undefined;
			this.setState('failed');
			const msg = `kin: cannot start ${command}: ${(err as Error).message}. Set kin.path (in User settings) to the kin executable.`;
			out.appendLine(`[kin] ${msg}`);
			throw new RpcError(-32603, msg);
		}

		const params: InitializeParams = {
			processId: process.pid,
			clientInfo: { name: 'kin.vscode', version: this.opts.version },
			capabilities: { approvals: true, elicitation: { form: true, url: true }, ...(this.opts.textDocuments ? { textDocuments: this.opts.textDocuments } : {}) },
			workspaceFolders: folders.map((f) => ({ uri: f.uri.toString(), name: f.name })),
		};
		const result = await conn.request<InitializeResult>('initialize', params);
		if (result.protocolVersion !== PROTOCOL_VERSION) {
			out.appendLine(`[kin] warning: kin speaks protocol ${result.protocolVersion}, this extension ${PROTOCOL_VERSION}`);
		}
		conn.notify('initialized', {});
		this.initializeResult = result;
		out.appendLine(
			`[kin] ready: ${result.serverInfo?.name ?? 'kin'} ${result.serverInfo?.version ?? ''}, model ${result.model?.model ?? '?'}` +
				(result.model && !result.model.configured ? ` (not configured: ${result.model.missing ?? ''})` : ''),
		);
		this.setState('ready');
		this.readyEmitter.fire(result);
		return result;
	}

	/** kin.path when set, else the kin this package ships (bin/kin), else `kin` on PATH. */
	private command(configured: string): { command: string; from: Launch['from'] } {
		if (configured !== '') {
			return { command: configured, from: 'kin.path' };
		}
		if (this.opts.extensionPath) {
			const bundled = path.join(this.opts.extensionPath, 'bin', process.platform === 'win32' ? 'kin.exe' : 'kin');
			if (fs.existsSync(bundled)) {
				try {
					fs.accessSync(bundled, fs.constants.X_OK);
				} catch {
					fs.chmodSync(bundled, 0o755); // an unzip that dropped the mode
				}
				return { command: bundled, from: 'bundled' };
			}
		}
		return { command: 'kin', from: 'PATH' };
	}

	/**
	 * kin's environment: VS Code's, kin.env's names (never one that holds a secret: those are
	 * dropped and named), and the keys stored with Set API Key under their variables' names.
	 */
	private async environment(extra: Record<string, string>): Promise<{ env: NodeJS.ProcessEnv; dropped: string[]; stored: string[] }> {
		const env: NodeJS.ProcessEnv = { ...process.env };
		const dropped: string[] = [];
		for (const [k, v] of Object.entries(extra)) {
			if (SECRET_NAME.test(k)) {
				dropped.push(k);
				continue;
			}
			env[k] = String(v);
		}
		const keys = await this.opts.keys.environment(env);
		Object.assign(env, keys);
		return { env, dropped, stored: Object.keys(keys) };
	}

	private onExit(child: cp.ChildProcess, conn: Connection, code: number | null, signal: NodeJS.Signals | null): void {
		conn.close(`kin: the service exited (${signal ?? `code ${code}`})`);
		if (this.child !== child) {
			return;
		}
		this.child = undefined;
		this.conn = undefined;
		this.opts.output.appendLine(`[kin] service exited (${signal ? `signal ${signal}` : `code ${code}`})`);
		if (this.stopping) {
			this.setState('stopped');
			return;
		}
		if (this.budget.record(Date.now())) {
			this.opts.output.appendLine(`[kin] restarting (crash ${this.budget.recent} of ${this.budget.max} allowed in 3 minutes)`);
			this.setState('starting');
			setTimeout(() => {
				this.start().catch((err) => this.opts.output.appendLine(`[kin] restart failed: ${String(err?.message ?? err)}`));
			}, 500);
			return;
		}
		this.setState('failed');
		void vscode.window
			.showErrorMessage(`kin: the service crashed ${this.budget.recent} times in 3 minutes and will not be restarted.`, 'Show Logs', 'Restart Service')
			.then((choice) => {
				if (choice === 'Show Logs') {
					this.opts.output.show(true);
				} else if (choice === 'Restart Service') {
					void this.restart();
				}
			});
	}

	/** Stops and starts again, with a fresh crash budget. */
	async restart(): Promise<InitializeResult> {
		await this.stop();
		this.budget.reset();
		return this.start();
	}

	/**
	 * Stops the service: `shutdown` (bounded by a timeout: a service may never answer), `exit`,
	 * then a kill if the process is still there.
	 */
	async stop(): Promise<void> {
		const child = this.child;
		const conn = this.conn;
		this.stopping = true;
		if (!child) {
			this.setState('stopped');
			return;
		}
		const exited = new Promise<void>((resolve) => {
			if (child.exitCode !== null || child.signalCode !== null) {
				resolve();
			} else {
				child.once('exit', () => resolve());
			}
		});
		if (conn && !conn.closed) {
			try {
				await withTimeout(conn.request('shutdown'), SHUTDOWN_TIMEOUT_MS);
			} catch (err) {
				this.opts.output.appendLine(`[kin] shutdown: ${(err as Error).message}`);
			}
			conn.notify('exit');
		}
		child.stdin?.end();
		if (!(await withTimeout(exited, EXIT_TIMEOUT_MS).then(() => true, () => false))) {
			this.opts.output.appendLine('[kin] service did not exit; killing it');
			child.kill('SIGKILL');
			await withTimeout(exited, EXIT_TIMEOUT_MS).catch(() => undefined);
		}
		this.setState('stopped');
	}

	private setState(s: ServiceState): void {
		if (this.stateValue !== s) {
			this.stateValue = s;
			this.stateEmitter.fire(s);
		}
	}

	dispose(): void {
		this.child?.kill('SIGKILL');
		this.stateEmitter.dispose();
		this.readyEmitter.dispose();
	}
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
		p.then(
			(v) => {
				clearTimeout(t);
				resolve(v);
			},
			(e) => {
				clearTimeout(t);
				reject(e);
			},
		);
	});
}

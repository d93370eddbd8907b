// A JSON-RPC 2.0 connection over any byte streams (kin serve's stdio in the extension, in-memory
// pipes in tests). It owns ids, the table of pending requests and the dispatch table of
// notifications; it never touches VS Code, so it is tested with node --test.

import { FrameDecoder, encodeFrame } from './framing';
import { ErrorCodes } from './types';

export interface ByteReader {
	on(event: 'data', listener: (chunk: Buffer) => void): unknown;
	on(event: 'end' | 'close', listener: () => void): unknown;
}

export interface ByteWriter {
	write(chunk: Buffer): unknown;
}

/** What sends a request to kin: a Connection, or the service (which reconnects); code that only asks takes this. */
export interface Requester {
	request<R>(method: string, params?: unknown): Promise<R>;
}

/** An error response from kin (or one made here when the connection is gone). */
export class RpcError extends Error {
	constructor(
		readonly code: number,
		message: string,
		readonly data?: unknown,
	) {
		super(message);
		this.name = 'RpcError';
	}
}

export type TraceDirection = 'send' | 'recv';

export interface ConnectionOptions {
	/** Called with every message sent and received, for the trace output. */
	trace?: (direction: TraceDirection, message: unknown) => void;
	/** Called for a frame or JSON problem in what kin sent; the connection keeps going. */
	onProtocolError?: (message: string) => void;
}

type NotificationHandler = (params: any) => void;

/**
 * Answers a request kin sends the editor (PROTOCOL.md: only `workspace/applyEdit`). It resolves
 * with the result, or throws an RpcError to answer with that error.
 */
export type RequestHandler = (params: any) => Promise<unknown> | unknown;

interface Pending {
	method: string;
	resolve: (result: any) => void;
	reject: (err: RpcError) => void;
}

export class Connection {
	private nextId = 1;
	// pending holds the requests sent and not yet answered, by id.
	private readonly pending = new Map<number, Pending>();
	// handlers is the notification dispatch table: method -> handlers in registration order.
	private readonly handlers = new Map<string, NotificationHandler[]>();
	private readonly anyHandlers: ((method: string, params: any) => void)[] = [];
	// requestHandlers answers kin's requests to the editor, by method (one handler each).
	private readonly requestHandlers = new Map<string, RequestHandler>();
	private closedWith: RpcError | undefined;
	private readonly closeListeners: (() => void)[] = [];
	private readonly decoder: FrameDecoder;

	constructor(
		reader: ByteReader,
		private readonly writer: ByteWriter,
		private readonly options: ConnectionOptions = {},
	) {
		this.decoder = new FrameDecoder(
			(body) => this.receive(body),
			(err) => this.options.onProtocolError?.(err.message),
		);
		reader.on('data', (chunk: Buffer) => this.decoder.push(chunk));
		reader.on('end', () => this.close('kin: the service closed its output'));
		reader.on('close', () => this.close('kin: the service closed its output'));
	}

	/** Sends a request and resolves with its result, or rejects with an RpcError. */
	request<R = unknown>(method: string, params?: unknown, signal?: AbortSignal): Promise<R> {
		if (this.closedWith) {
			return Promise.reject(this.closedWith);
		}
		const id = this.nextId++;
		const msg: Record<string, unknown> = { jsonrpc: '2.0', id, method };
		if (params !== undefined) {
			msg.params = params;
		}
		return new Promise<R>((resolve, reject) => {
			this.pending.set(id, { method, resolve, reject });
			if (signal) {
				const onAbort = () => {
					if (this.pending.has(id)) {
						this.notify('$/cancelRequest', { id });
					}
				};
				if (signal.aborted) {
					queueMicrotask(onAbort);
				} else {
					signal.addEventListener('abort', onAbort, { once: true });
				}
			}
			this.send(msg);
		});
	}

	notify(method: string, params?: unknown): void {
		if (this.closedWith) {
			return;
		}
		const msg: Record<string, unknown> = { jsonrpc: '2.0', method };
		if (params !== undefined) {
			msg.params = params;
		}
		this.send(msg);
	}

	/** Registers a handler for one notification method; returns a function that removes it. */
	onNotification(method: string, handler: NotificationHandler): () => void {
		const list = this.handlers.get(method) ?? [];
		list.push(handler);
		this.handlers.set(method, list);
		return () => {
			const l = this.handlers.get(method);
			if (l) {
				this.handlers.set(
					method,
					l.filter((h) => h !== handler),
				);
			}
		};
	}

	/** Answers kin's requests of one method; a method without a handler is answered -32601. */
	onRequest(method: string, handler: RequestHandler): void {
		this.requestHandlers.set(method, handler);
	}

	/** Registers a handler that sees every notification (after the per-method ones). */
	onAnyNotification(handler: (method: string, params: any) => void): void {
		this.anyHandlers.push(handler);
	}

	onClose(listener: () => void): void {
		if (this.closedWith) {
			listener();
			return;
		}
		this.closeListeners.push(listener);
	}

	get closed(): boolean {
		return this.closedWith !== undefined;
	}

	/** Rejects every pending request and stops sending. Safe to call more than once. */
	close(reason = 'kin: the connection was closed'): void {
		if (this.closedWith) {
			return;
		}
		this.closedWith = new RpcError(ErrorCodes.InternalError, reason);
		for (const [, p] of this.pending) {
			p.reject(new RpcError(ErrorCodes.InternalError, `${reason} (${p.method} got no answer)`));
		}
		this.pending.clear();
		for (const l of this.closeListeners.splice(0)) {
			l();
		}
	}

	private send(msg: Record<string, unknown>): void {
		this.options.trace?.('send', msg);
		this.writer.write(encodeFrame(JSON.stringify(msg)));
	}

	private receive(body: string): void {
		let msg: any;
		try {
			msg = JSON.parse(body);
		} catch {
			this.options.onProtocolError?.(`kin: a frame's body is not JSON: ${body.slice(0, 200)}`);
			return;
		}
		this.options.trace?.('recv', msg);
		if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
			this.options.onProtocolError?.(`kin: not a JSON-RPC message: ${body.slice(0, 200)}`);
			return;
		}
		const hasId = msg.id !== undefined && msg.id !== null;
		if (typeof msg.method === 'string') {
			if (hasId) {
				void this.answer(msg.id, msg.method, msg.params);
				return;
			}
			this.dispatch(msg.method, msg.params);
			return;
		}
		if (hasId) {
			const p = this.pending.get(msg.id);
			if (!p) {
				this.options.onProtocolError?.(`kin: a response to an unknown request id ${JSON.stringify(msg.id)}`);
				return;
			}
			this.pending.delete(msg.id);
			if (msg.error) {
				p.reject(new RpcError(Number(msg.error.code), String(msg.error.message ?? 'error'), msg.error.data));
			} else {
				p.resolve(msg.result);
			}
			return;
		}
		if (msg.error) {
			// An error with a null id: kin could not read something we sent.
			this.options.onProtocolError?.(`kin: ${msg.error.message ?? 'error'} (code ${msg.error.code})`);
		}
	}

	/**
	 * Answers one of kin's requests with exactly one response, echoing its id as sent. A handler
	 * that throws answers with an error (its code when it is an RpcError): kin reads an error as
	 * "nothing was done" (PROTOCOL.md, workspace/applyEdit), so handlers throw only before acting.
	 */
	private async answer(id: unknown, method: string, params: unknown): Promise<void> {
		const h = this.requestHandlers.get(method);
		if (!h) {
			this.send({ jsonrpc: '2.0', id, error: { code: ErrorCodes.MethodNotFound, message: `method not found: ${method}` } });
			return;
		}
		let reply: Record<string, unknown>;
		try {
			const result = await h(params);
			reply = { jsonrpc: '2.0', id, result: result ?? null };
		} catch (err) {
			const code = err instanceof RpcError ? err.code : ErrorCodes.InternalError;
			reply = { jsonrpc: '2.0', id, error: { code, message: err instanceof Error ? err.message : String(err) } };
		}
		if (!this.closedWith) {
			this.send(reply);
		}
	}

	private dispatch(method: string, params: any): void {
		for (const h of this.handlers.get(method) ?? []) {
			try {
				h(params);
			} catch (err) {
				this.options.onProtocolError?.(`kin: handler for ${method} failed: ${String(err)}`);
			}
		}
		for (const h of this.anyHandlers) {
			try {
				h(method, params);
			} catch (err) {
				this.options.onProtocolError?.(`kin: handler for ${method} failed: ${String(err)}`);
			}
		}
	}
}

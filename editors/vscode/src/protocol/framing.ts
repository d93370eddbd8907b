// LSP-style framing: every message is `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8
// JSON (rpc/PROTOCOL.md, first paragraph). This file knows bytes and headers only; it never
// parses JSON and never touches VS Code.

const HEADER_END = Buffer.from('\r\n\r\n', 'ascii');

/** Encodes one message body (already JSON) as a frame. */
export function encodeFrame(body: string): Buffer {
	const payload = Buffer.from(body, 'utf8');
	const header = Buffer.from(`Content-Length: ${payload.length}\r\n\r\n`, 'ascii');
	return Buffer.concat([header, payload]);
}

/** A problem with one frame's header; the decoder skips past it and goes on. */
export class FrameError extends Error {}

/**
 * Decoder collects chunks from a stream and hands out whole frame bodies. Bodies may arrive
 * split anywhere, several may arrive in one chunk, and a multi-byte character may straddle two
 * chunks: lengths are counted in bytes, and text is decoded only once a body is complete.
 */
export class FrameDecoder {
	private buf: Buffer = Buffer.alloc(0);

	constructor(
		private readonly onBody: (body: string) => void,
		private readonly onError: (err: FrameError) => void = () => {},
	) {}

	push(chunk: Buffer): void {
		this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
		for (;;) {
			const end = this.buf.indexOf(HEADER_END);
			if (end < 0) {
				return;
			}
			const header = this.buf.subarray(0, end).toString('ascii');
			const length = contentLength(header);
			if (length === undefined) {
				this.buf = this.buf.subarray(end + HEADER_END.length);
				this.onError(new FrameError(`kin: unreadable frame header: ${JSON.stringify(header)}`));
				continue;
			}
			const start = end + HEADER_END.length;
			if (this.buf.length < start + length) {
				return;
			}
			const body = this.buf.subarray(start, start + length).toString('utf8');
			this.buf = this.buf.subarray(start + length);
			this.onBody(body);
		}
	}

	/** Bytes received but not yet part of a whole frame. */
	get buffered(): number {
		return this.buf.length;
	}
}

function contentLength(header: string): number | undefined {
	let length: number | undefined;
	for (const line of header.split('\r\n')) {
		const colon = line.indexOf(':');
		if (colon < 0) {
			continue;
		}
		if (line.slice(0, colon).trim().toLowerCase() === 'content-length') {
			const v = line.slice(colon + 1).trim();
			if (!/^\d+$/.test(v)) {
				return undefined;
			}
			length = Number(v);
		}
	}
	return length;
}

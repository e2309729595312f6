// One read of a hypivisor registry for `ghostwatch status`: open the WebSocket, take the first
// frame (the `init` snapshot), close. Built on node:http's upgrade instead of the ws package,
// whose loading alone (zlib, tls, deflate) costs ~30 ms of a status line budgeted at 200 ms.
// It only ever reads server frames (unmasked) and sends one masked close frame.
import { closeSync, openSync, readSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { crypto } from '../../os/builtins.js';
import { parseFrame, urlWithToken } from './wire.js';

export interface InitSnapshot {
  readonly nodes: readonly unknown[];
  /** Undefined for a stock hypivisor, whose init carries no claims. */
  readonly claims?: readonly unknown[] | undefined;
}

export class InitReadError extends Error {
  override readonly name = 'InitReadError';
}

/**
 * Random bytes for the handshake key and the close frame's mask: from /dev/urandom, the kernel's
 * generator node:crypto also draws on, read directly, since loading node:crypto is a few ms of a
 * status line; node:crypto where there is no /dev/urandom.
 */
function randomBytes(size: number): Buffer {
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      const out = Buffer.alloc(size);
      if (readSync(fd, out, 0, size, null) === size) return out;
    } finally {
      closeSync(fd);
    }
  } catch {
    // no /dev/urandom here
  }
  return crypto().randomBytes(size);
}

export async function readInitSnapshot(opts: {
  url: string;
  token?: string | undefined;
  ca?: string | Buffer | undefined;
  timeoutMs: number;
  maxPayload?: number;
}): Promise<InitSnapshot> {
  const url = urlWithToken(opts.url, opts.token);
  const secure = url.protocol === 'wss:';
  const { request } = secure ? await import('node:https') : await import('node:http');
  const maxPayload = opts.maxPayload ?? 16 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    let socket: Duplex | undefined;
    const fail = (why: string) => {
      clearTimeout(timer);
      req.destroy();
      socket?.destroy();
      reject(new InitReadError(why));
    };
    const timer = setTimeout(() => fail(`no answer within ${opts.timeoutMs} ms`), opts.timeoutMs);
    const req = request(url.toString().replace(/^ws/, 'http'), {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64') },
      ...(secure && opts.ca !== undefined ? { ca: opts.ca } : {}),
    });
    req.on('error', (err: NodeJS.ErrnoException) => fail(err.code === 'ECONNREFUSED' ? `nothing listens at the registry address (${err.message})` : err.message));
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      fail(res.statusCode === 401 ? 'the registry refused the token (HTTP 401)' : `the registry answered HTTP ${res.statusCode} instead of a WebSocket`);
    });
    req.on('upgrade', (_res, sock: Duplex, head: Buffer) => {
      socket = sock;
      const reader = new FrameReader(maxPayload);
      const onData = (chunk: Buffer) => {
        let text: string | undefined;
        try {
          text = reader.push(chunk);
        } catch (error) {
          return fail((error as Error).message);
        }
        if (text === undefined) return;
        clearTimeout(timer);
        sock.off('data', onData);
        // A masked close frame (code 1000), then the socket goes: we have what we came for.
        const mask = randomBytes(4);
        const code = Buffer.from([0x03 ^ mask[0]!, 0xe8 ^ mask[1]!]);
        sock.end(Buffer.concat([Buffer.from([0x88, 0x82]), mask, code]));
        const frame = parseFrame(text);
        if (frame.kind !== 'init') return reject(new InitReadError('the registry did not start with an init snapshot'));
        resolve({ nodes: frame.nodes, claims: frame.claims });
      };
      sock.on('data', onData);
      sock.on('error', (err) => fail(err.message));
      if (head.length > 0) onData(head);
    });
    req.end();
  });
}

/** Collects server frames until one whole text message is in: returns it, else undefined. */
class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxPayload: number) {}

  push(chunk: Buffer): string | undefined {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return undefined;
      const fin = (this.buffer[0]! & 0x80) !== 0;
      const opcode = this.buffer[0]! & 0x0f;
      let length = this.buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return undefined;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return undefined;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if ((this.buffer[1]! & 0x80) !== 0) throw new Error('the registry sent a masked frame');
      if (this.size + length > this.maxPayload) throw new Error(`a frame was larger than the max payload (${this.maxPayload} bytes)`);
      if (this.buffer.length < offset + length) return undefined;
      const payload = this.buffer.subarray(offset, offset + length);
      this.buffer = this.buffer.subarray(offset + length);
      if (opcode === 0x8) throw new Error('the registry closed the connection');
      if (opcode === 0x9 || opcode === 0xa) continue; // ping / pong: nothing to answer in one read
      if (opcode === 0x1 || opcode === 0x0) {
        this.parts.push(payload);
        this.size += length;
        if (fin) return Buffer.concat(this.parts).toString('utf8');
      }
    }
  }
}

// One read of a hypivisor registry for `ghostwatch status`: open the WebSocket, take the first
// frame (the `init` snapshot), close. Built on a bare TCP (or TLS) socket that sends the HTTP
// upgrade request itself, instead of the ws package, whose loading alone (zlib, tls, deflate)
// costs ~30 ms of a status line, or node:http, whose client and parser cost ~5 ms more of a line
// budgeted at 1.3 x a bare `node -e ''`. It only ever reads one HTTP response head and server
// frames (unmasked), and sends one masked close frame.
import { closeSync, openSync, readSync } from 'node:fs';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
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
  /** The socket's error code (ECONNREFUSED, ENOTFOUND, ...) when the connection itself failed. */
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
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
  const maxPayload = opts.maxPayload ?? 16 * 1024 * 1024;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (secure ? 443 : 80));
  const socket: Socket = secure
    ? (await import('node:tls')).connect({ host, port, ...(isIP(host) === 0 ? { servername: host } : {}), ...(opts.ca !== undefined ? { ca: opts.ca } : {}) })
    : connectTcp({ host, port });
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string, code?: string) => {
      clearTimeout(timer);
      socket.destroy();
      if (settled) return;
      settled = true;
      reject(new InitReadError(why, code));
    };
    const timer = setTimeout(() => fail(`no answer within ${opts.timeoutMs} ms`), opts.timeoutMs);
    socket.on('error', (err: NodeJS.ErrnoException) => fail(err.code === 'ECONNREFUSED' ? `nothing listens at the registry address (${err.message})` : err.message, err.code));
    // As node:http said it of a connection closed before its answer.
    socket.on('close', () => fail('socket hang up'));
    socket.write(
      [
        `GET ${url.pathname}${url.search} HTTP/1.1`,
        `Host: ${url.host}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        '',
        '',
      ].join('\r\n'),
    );
    let head: Buffer = Buffer.alloc(0);
    const onHead = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > MAX_RESPONSE_HEAD) fail('the registry answered with an overlong HTTP response head');
        return;
      }
      socket.off('data', onHead);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, Math.min(end, 64)).toString('latin1'));
      if (!status) return fail('the registry did not answer in HTTP');
      const code = Number(status[1]);
      if (code !== 101) return fail(code === 401 ? 'the registry refused the token (HTTP 401)' : `the registry answered HTTP ${code} instead of a WebSocket`);
      onUpgrade(socket, head.subarray(end + 4));
    };
    const onUpgrade = (sock: Duplex, rest: Buffer) => {
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
        settled = true;
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
      if (rest.length > 0) onData(rest);
    };
    socket.on('data', onHead);
  });
}

/** An HTTP response head longer than this is not a registry's. */
const MAX_RESPONSE_HEAD = 64 * 1024;

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

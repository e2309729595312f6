// The two WebSocket handshakes of the agent proxy, done here rather than by `ws` so that the
// proxy gets the bare sockets and relays frames as bytes (agent-proxy.ts): accepting Pi-DE's
// upgrade, and opening the agent's own server. Neither side is offered an extension or a
// subprotocol, so a frame means the same thing on both.
import { createHash, randomBytes } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export function acceptKey(key: string): string {
  return createHash('sha1').update(key + GUID).digest('base64');
}

function header(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return (Array.isArray(value) ? value.join(',') : (value ?? '')).trim();
}

/**
 * Answers a WebSocket upgrade with 101, or with 400 when it is not one (what `ws` checks): a GET
 * with `Upgrade: websocket`, version 13 (or 8) and a key of 16 bytes in base64.
 */
export function answerUpgrade(req: IncomingMessage, socket: Duplex): boolean {
  const key = header(req, 'sec-websocket-key');
  const version = header(req, 'sec-websocket-version');
  const problem =
    req.method !== 'GET'
      ? 'Invalid HTTP method'
      : header(req, 'upgrade').toLowerCase() !== 'websocket'
        ? 'Invalid Upgrade header'
        : !/^[+/0-9A-Za-z]{22}==$/.test(key)
          ? 'Missing or invalid Sec-WebSocket-Key header'
          : version !== '13' && version !== '8'
            ? 'Missing or invalid Sec-WebSocket-Version header'
            : undefined;
  if (problem !== undefined) {
    socket.on('error', () => {});
    socket.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(problem)}\r\n\r\n${problem}`);
    return false;
  }
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey(key)}\r\n\r\n`);
  return true;
}

export type AgentConnection = { readonly socket: Socket; readonly head: Buffer } | { readonly error: string };

/** Opens `ws://host:port/` as a client, with no extension, within `timeoutMs`: the bare socket, or the reason it failed (hypivisor's words). */
export function openAgentSocket(host: string, port: number, timeoutMs: number): { done: Promise<AgentConnection>; abort(): void } {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const key = randomBytes(16).toString('base64');
  const req = request({
    host: bare,
    port,
    path: '/',
    headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
  });
  let settle: (c: AgentConnection) => void = () => {};
  const done = new Promise<AgentConnection>((resolve) => (settle = resolve));
  let settled = false;
  const finish = (c: AgentConnection): void => {
    if (settled) {
      if ('socket' in c) c.socket.destroy();
      return;
    }
    settled = true;
    clearTimeout(timer);
    settle(c);
  };
  const timer = setTimeout(() => {
    finish({ error: `Cannot reach agent: no answer within ${timeoutMs} ms` });
    req.destroy();
  }, timeoutMs);
  req.on('error', (err) => finish({ error: `Cannot reach agent: ${err.message}` }));
  req.on('response', (res) => {
    finish({ error: `Agent handshake failed: HTTP ${res.statusCode ?? 0}` });
    res.resume();
    req.destroy();
  });
  req.on('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
    const fine =
      header(res, 'upgrade').toLowerCase() === 'websocket' &&
      header(res, 'sec-websocket-accept') === acceptKey(key) &&
      header(res, 'sec-websocket-extensions') === '' &&
      header(res, 'sec-websocket-protocol') === '';
    if (fine) return finish({ socket, head });
    socket.destroy();
    finish({ error: 'Agent handshake failed: invalid WebSocket answer' });
  });
  req.end();
  return {
    done,
    abort: () => {
      finish({ error: 'Pi-DE went away' });
      req.destroy();
    },
  };
}

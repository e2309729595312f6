// Does an agent's own WebSocket port answer? One upgrade request to this host's loopback
// (127.0.0.1, then ::1 when v4 refuses), and the time until an HTTP status line comes back.
//
// The request asks for a protocol version no server speaks (RFC 6455 4.4: the server must decline
// with an HTTP answer; the `ws` library's is a 400): answering it takes the same running event loop
// and the same upgrade code as a real handshake, but opens no connection. A completed handshake is
// a client to the agent: pi-socket builds and sends its whole session for every one and logs two
// lines, which a probe every 2 s must not cost anyone. A server that accepts anyway (101) gets the
// connection closed at once.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { HandshakeFacts } from '../core/types.js';
import { sanitize } from '../core/sanitize.js';
import { isLoopbackAddress } from './loopback.js';
import { listeningSockets } from './proc-net.js';
import { boundedConnect } from './bounded-connect.js';

/** The version asked for: none (13 is the only one in use); the answer must be a refusal. */
const NO_SUCH_VERSION = '0';
/** An answer's first line is read up to this many bytes; anything longer is not an HTTP status line. */
const MAX_STATUS_LINE = 256;

export interface UpgradeAnswer {
  readonly result: HandshakeFacts['result'];
  readonly detail?: string | undefined;
  readonly ms: number;
}

/** One upgrade request to host:port; resolves once, whatever happens (the socket and timer always released). */
export function askUpgrade(host: string, port: number, boundMs: number, signal?: AbortSignal): Promise<UpgradeAnswer & { readonly code?: string }> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const ends = { timeout: () => ({ result: 'timeout', detail: `no answer within ${boundMs} ms`, ms: elapsed() }) as const, aborted: () => ({ result: 'error', detail: 'aborted', ms: elapsed() }) as const };
  return boundedConnect<UpgradeAnswer & { readonly code?: string }>(host, port, boundMs, signal, ends, (socket, settle) => {
    let head = '';
    socket.once('connect', () => {
      const key = randomBytes(16).toString('base64');
      const where = host.includes(':') ? `[${host}]` : host;
      socket.write(
        `GET / HTTP/1.1\r\nHost: ${where}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: ${NO_SUCH_VERSION}\r\nUser-Agent: ghostwatch (is this agent answering?)\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n');
      if (end < 0 && head.length < MAX_STATUS_LINE) return;
      const line = (end < 0 ? head : head.slice(0, end)).slice(0, MAX_STATUS_LINE);
      const http = /^HTTP\/1\.[01] \d{3}\b/.test(line);
      settle({ result: 'answered', detail: http ? sanitize(line, 60) : 'an answer that is not HTTP', ms: elapsed() });
    });
    socket.once('end', () => settle({ result: 'closed', detail: 'closed without an answer', ms: elapsed() }));
    socket.once('error', (err: NodeJS.ErrnoException) => settle({ result: 'error', detail: err.code ?? err.message, code: err.code, ms: elapsed() }));
  });
}

/** On ::1 these mean "no IPv6 loopback here". */
const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'ENETUNREACH', 'EAFNOSUPPORT']);

/** Ask this host's port: 127.0.0.1, then ::1 when v4 refuses (an agent may listen on IPv6 loopback only). */
export async function probeUpgrade(port: number, boundMs: number, signal?: AbortSignal): Promise<UpgradeAnswer> {
  const v4 = await askUpgrade('127.0.0.1', port, boundMs, signal);
  if (v4.code !== 'ECONNREFUSED') return v4;
  const v6 = await askUpgrade('::1', port, boundMs, signal);
  if (v6.code !== undefined && NO_IPV6.has(v6.code)) return { result: 'error', detail: `127.0.0.1 refused; no IPv6 loopback (${v6.code})`, ms: v4.ms + v6.ms };
  return v6.code === 'ECONNREFUSED' ? { result: 'error', detail: '127.0.0.1 and ::1 refused', ms: v4.ms + v6.ms } : v6;
}

/** A listener that a connection to this host's loopback reaches: a loopback address, or any address. */
function reachedOnLoopback(address: string): boolean {
  return address === '0.0.0.0' || address === '::' || isLoopbackAddress(address);
}

/**
 * Which of `ports` something listens on where this host's loopback reaches it, from one read of
 * the socket table; undefined where the table cannot be read (not Linux): then every port is asked.
 * A port nothing listens on is not asked at all: its refusal says nothing about a hang, and 600
 * refused connects every 2 s would be most of an idle monitor's work.
 */
export async function loopbackListeners(ports: readonly number[]): Promise<Set<number> | undefined> {
  const table = await listeningSockets(ports);
  if (!table.ok) return undefined;
  const out = new Set<number>();
  for (const [port, sockets] of table.byPort) if (sockets.some((s) => reachedOnLoopback(s.address))) out.add(port);
  return out;
}

// Is anything listening on a localhost port? Tries 127.0.0.1, then ::1 when v4 refuses:
// an agent listening only on IPv6 localhost must not be reported as refused (a false ghost).
import type { PortFacts, PortResult } from '../core/types.js';
import { isUsablePort } from '../core/pid.js';
import { abortError, throwIfAborted } from './liveness.js';
import { boundedConnect } from './bounded-connect.js';

export interface PortProbeOptions {
  /** Budget for the whole probe (both address families). Default 300 ms. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

export const DEFAULT_PORT_TIMEOUT_MS = 300;
const DEFAULT_CONCURRENCY = 32;
/** On ::1 these mean "no IPv6 loopback here", which is as good as refused. */
const NO_IPV6 = new Set(['EADDRNOTAVAIL', 'ENETUNREACH', 'EAFNOSUPPORT']);

export type Attempt = { readonly kind: 'open' } | { readonly kind: 'timeout' } | { readonly kind: 'error'; readonly code: string } | { readonly kind: 'aborted' };

/**
 * One TCP connect (a name goes through the system resolver). Resolves exactly once; the socket, the
 * timer and the abort listener are always released. Also the remote port check's connect.
 */
export function tryConnect(host: string, port: number, timeoutMs: number, signal: AbortSignal | undefined): Promise<Attempt> {
  return boundedConnect<Attempt>(host, port, timeoutMs, signal, { timeout: () => ({ kind: 'timeout' }), aborted: () => ({ kind: 'aborted' }) }, (socket, settle) => {
    socket.once('connect', () => settle({ kind: 'open' }));
    // A name with several addresses fails with an AggregateError: its first coded error says why.
    socket.once('error', (err: NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] }) => {
      settle({ kind: 'error', code: err.code ?? err.errors?.find((e) => e.code)?.code ?? err.message });
    });
  });
}

export async function probePort(port: number, opts: PortProbeOptions = {}): Promise<PortFacts> {
  const now = opts.now ?? Date.now;
  const { signal } = opts;
  throwIfAborted(signal);
  if (!isUsablePort(port)) return { port, result: 'error', detail: 'not a usable port', checkedAt: now() };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_PORT_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  const facts = (result: PortResult, detail?: string): PortFacts => ({ port, result, detail, checkedAt: now() });

  const v4 = await tryConnect('127.0.0.1', port, timeoutMs, signal);
  if (v4.kind === 'aborted') throw abortError(signal);
  if (v4.kind === 'open') return facts('open', '127.0.0.1');
  if (v4.kind === 'timeout') return facts('timeout', `no answer from 127.0.0.1 within ${timeoutMs} ms`);
  if (v4.kind === 'error' && v4.code !== 'ECONNREFUSED') return facts('error', `127.0.0.1: ${v4.code}`);

  const v6 = await tryConnect('::1', port, deadline - performance.now(), signal);
  if (v6.kind === 'aborted') throw abortError(signal);
  if (v6.kind === 'open') return facts('open', '::1');
  if (v6.kind === 'timeout') return facts('timeout', `127.0.0.1 refused; no answer from ::1 within ${timeoutMs} ms`);
  if (v6.code === 'ECONNREFUSED') return facts('refused', '127.0.0.1 and ::1 refused');
  if (NO_IPV6.has(v6.code)) return facts('refused', `127.0.0.1 refused; no IPv6 loopback (${v6.code})`);
  return facts('error', `127.0.0.1 refused; ::1: ${v6.code}`);
}

/** Probe many ports concurrently, at most `concurrency` sockets at once. */
export async function probePorts(
  ports: readonly number[],
  opts: PortProbeOptions & { readonly concurrency?: number } = {},
): Promise<Map<number, PortFacts>> {
  const unique = [...new Set(ports)];
  const result = new Map<number, PortFacts>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < unique.length) {
      const port = unique[next++] as number;
      result.set(port, await probePort(port, opts));
    }
  };
  const width = Math.max(1, Math.min(opts.concurrency ?? DEFAULT_CONCURRENCY, unique.length));
  await Promise.all(Array.from({ length: width }, worker));
  // Keep the caller's order regardless of which probe finished first.
  return new Map(unique.map((p) => [p, result.get(p) as PortFacts]));
}

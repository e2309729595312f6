// A registry looked for (not named): nothing there is `absent`, quietly, until it appears; once
// read, losing it is an outage like any other. A real hypivisor (ghostwatch serve) on a real port.
import { freePort } from '../support/ports.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { agentctlNotThere, hypivisorNotThere, LookedForSource } from '../../src/sources/looked-for.js';
import type { Source, SourceState } from '../../src/sources/types.js';
import { until } from '../engine/helpers.js';

const open: (Source | RegistryServer)[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await ('stop' in x ? x.stop() : x.close());
});

function lookedFor(port: number): LookedForSource {
  const inner = new HypivisorSource({ url: `ws://127.0.0.1:${port}/ws`, backoffInitialMs: 20, backoffMaxMs: 100, requestTimeoutMs: 2000 });
  const source = new LookedForSource(inner, hypivisorNotThere);
  open.push(source);
  source.start();
  return source;
}

const state = (s: Source): SourceState => s.snapshot().state;

describe('a registry looked for, not named', () => {
  it('is absent while nothing listens, through its retries, and appears when a registry starts there', async () => {
    const port = await freePort();
    const source = lookedFor(port);
    await until(() => state(source).status === 'absent');
    expect(state(source)).toMatchObject({ status: 'absent', cause: undefined, downSince: undefined, retryAt: undefined });
    expect(state(source).lastError).toMatch(/^not on this host \(connection refused\)/);
    // Still absent after more attempts (each goes through "connecting" inside).
    const seen = new Set<string>();
    const stop = source.subscribe(() => seen.add(state(source).status));
    await new Promise((r) => setTimeout(r, 300));
    stop();
    expect([...seen].filter((s) => s !== 'absent')).toEqual([]);
    const server = await startRegistryServer({ host: '127.0.0.1', port, log: () => {} });
    open.push(server);
    await until(() => state(source).status === 'connected');
  });

  it('once read, losing it is an outage (unreachable, with its cause), not absence', async () => {
    const port = await freePort();
    const server = await startRegistryServer({ host: '127.0.0.1', port, log: () => {} });
    const source = lookedFor(port);
    await until(() => state(source).status === 'connected');
    await server.close();
    await until(() => state(source).status === 'unreachable');
    // Its retries then find nothing listening, as before it was read: still an outage, never "absent".
    await until(() => state(source).cause === 'connection refused');
    expect(['unreachable', 'connecting']).toContain(state(source).status);
    expect(state(source).downSince).toBeDefined();
  });

  it('only "nothing answers" is absence: a refused token, TLS or HTTP errors are not; agentctl unread is', () => {
    const s = (status: SourceState['status'], cause?: string) => ({ status, cause }) as SourceState;
    expect(hypivisorNotThere(s('unreachable', 'connection refused'))).toBe(true);
    expect(hypivisorNotThere(s('connecting', 'DNS lookup failed (registry.example)'))).toBe(true);
    expect(hypivisorNotThere(s('connecting'))).toBe(false);
    expect(hypivisorNotThere(s('auth-refused', 'token refused (401)'))).toBe(false);
    expect(hypivisorNotThere(s('unreachable', 'HTTP 404 instead of a WebSocket'))).toBe(false);
    expect(hypivisorNotThere(s('unreachable', 'TLS error: wrong version number'))).toBe(false);
    expect(agentctlNotThere(s('unreachable', 'connect ECONNREFUSED'))).toBe(true);
    expect(agentctlNotThere(s('files-only'))).toBe(false);
  });
});

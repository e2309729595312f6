// Every way a registry can fail to be read, each against a real socket on loopback: the state
// says the cause in words, since when, and when the next attempt is; the entries a dropped
// connection had are kept (the last known, with the time they were last current) until a new
// connection's snapshot replaces them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRegistryServer } from '../../src/server/index.js';
import { HypivisorSource, type HypivisorOptions } from '../../src/sources/hypivisor/index.js';
import type { SourceState } from '../../src/sources/types.js';
import { node, startScriptedRegistry } from '../support/scripted-registry.js';
import { until } from '../support/wait.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function client(url: string, opts: Partial<HypivisorOptions> = {}): HypivisorSource {
  const c = new HypivisorSource({ url, requestTimeoutMs: 1_000, resyncIntervalMs: 60_000, backoffInitialMs: 200, backoffMaxMs: 400, ...opts });
  cleanups.push(() => c.stop());
  c.start();
  return c;
}

const down = (c: HypivisorSource): Promise<SourceState> =>
  until(() => {
    const s = c.snapshot().state;
    return s.cause !== undefined && s.status !== 'connecting' ? s : undefined;
  }, 4000, 'a failure');

/** A plain TCP server on loopback; `onSocket` decides what each connection gets. */
async function tcpServer(onSocket: (s: Socket) => void): Promise<{ port: number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return { port: (server.address() as AddressInfo).port };
}

describe('a registry that cannot be read', () => {
  it('a wrong token: "token refused (401)", the time, the retry after the auth wait', async () => {
    const server = await startRegistryServer({ port: 0, token: 'the-right-one', log: () => {} });
    cleanups.push(() => server.close());
    const before = Date.now();
    const c = client(server.url, { token: 'a-wrong-one', authRetryMs: 30_000 });
    const s = await down(c);
    expect(s.status).toBe('auth-refused');
    expect(s.cause).toBe('token refused (401)');
    expect(s.downSince).toBeGreaterThanOrEqual(before);
    expect(s.retryAt! - s.downSince!).toBeGreaterThanOrEqual(30_000);
    expect(c.snapshot().sessions).toEqual([]);
    expect(s.confirmedAt).toBeUndefined(); // nothing was ever read: no entries to call stale
  });

  it('a closed port: "connection refused", and the outage keeps its start through the retries', async () => {
    const gone = await tcpServer(() => undefined);
    const port = gone.port;
    await cleanups.pop()!(); // closed: nothing listens there now
    const c = client(`ws://127.0.0.1:${port}/ws`);
    const first = await down(c);
    expect(first.status).toBe('unreachable');
    expect(first.cause).toBe('connection refused');
    expect(first.retryAt).toBeGreaterThan(first.downSince!);
    // Next attempt fails the same way: same cause, same start, a new retry time.
    await until(() => c.snapshot().state.reconnects >= 2, 4000, 'two retries');
    const later = await down(c);
    expect(later.cause).toBe('connection refused');
    expect(later.downSince).toBe(first.downSince);
  });

  it('a TLS failure: wss:// to a plain TCP server', async () => {
    const plain = await tcpServer((s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')));
    const c = client(`wss://127.0.0.1:${plain.port}/ws`);
    const s = await down(c);
    expect(s.cause).toBe('TLS error: wrong version number');
  });

  it('a connection the server drops: "connection dropped"; the entries stay, last known, until a new snapshot', async () => {
    let connections = 0;
    const r = await startScriptedRegistry({
      init: () => ({ event: 'init', protocol_version: '1', claims: [], nodes: connections++ === 0 ? [node('old-a'), node('old-b')] : [node('new-c')] }),
    });
    cleanups.push(() => r.close());
    // The first retry waits long enough to look at the kept entries.
    const c = client(r.url, { backoffInitialMs: 1_500, backoffMaxMs: 1_500 });
    await until(() => c.snapshot().state.status === 'connected', 3000, 'connected');
    const t0 = Date.now();
    for (const ws of r.sockets()) ws.terminate();
    const s = await down(c);
    expect(s.cause).toBe('connection dropped');
    expect(s.confirmedAt).toBeGreaterThanOrEqual(t0);
    expect(c.snapshot().sessions.map((e) => e.id)).toEqual(['old-a', 'old-b']);
    // Reconnected: the new snapshot replaces the old entries whole, and nothing is stale any more.
    await until(() => c.snapshot().state.status === 'connected', 5000, 'reconnected');
    const again = c.snapshot();
    expect(again.sessions.map((e) => e.id)).toEqual(['new-c']);
    expect(again.state).toMatchObject({ cause: undefined, downSince: undefined, confirmedAt: undefined, retryAt: undefined });
  });

  it('a server that accepts and hangs up before the handshake: "connection dropped"', async () => {
    const rude = await tcpServer((s) => s.once('data', () => s.destroy()));
    const c = client(`ws://127.0.0.1:${rude.port}/ws`);
    expect((await down(c)).cause).toBe('connection dropped');
  });
});

// A name under the reserved .invalid TLD, resolved inside a network namespace of our own with
// no interfaces: the lookup fails without a packet leaving the namespace.
const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/sources/hypivisor/index.js'));
const unshare = spawnSync('unshare', ['-rn', 'true']).status === 0;

describe.runIf(built && unshare)('a registry name that does not resolve', () => {
  it('says "DNS lookup failed (host)"', () => {
    const script = `
      const { HypivisorSource } = await import(${JSON.stringify(join(ROOT, 'dist/src/sources/hypivisor/index.js'))});
      const c = new HypivisorSource({ url: 'ws://registry.invalid:31415/ws', backoffInitialMs: 60000 });
      c.subscribe(() => {
        const s = c.snapshot().state;
        if (s.cause) { console.log(JSON.stringify(s)); void c.stop().then(() => process.exit(0)); }
      });
      c.start();
      setTimeout(() => process.exit(3), 5000);`;
    const r = spawnSync('unshare', ['-rn', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status, r.stderr).toBe(0);
    const state = JSON.parse(r.stdout.trim().split('\n')[0]!);
    expect(state).toMatchObject({ status: 'unreachable', cause: 'DNS lookup failed (registry.invalid)' });
  });
});

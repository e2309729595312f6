import { afterEach, describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { HypivisorSource, type HypivisorOptions } from '../../src/sources/hypivisor/index.js';
import { node, startScriptedRegistry, type Script, type ScriptedRegistry } from '../support/scripted-registry.js';
import { until } from '../support/wait.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function registry(script: Script = {}): Promise<ScriptedRegistry> {
  const r = await startScriptedRegistry(script);
  cleanups.push(() => r.close());
  return r;
}

function client(url: string, opts: Partial<HypivisorOptions> = {}): HypivisorSource {
  const c = new HypivisorSource({ url, requestTimeoutMs: 500, resyncIntervalMs: 60_000, ...opts });
  cleanups.push(() => c.stop());
  c.start();
  return c;
}

const connected = (c: HypivisorSource) => until(() => c.snapshot().state.status === 'connected', 3000, 'connected');

describe('HypivisorSource against a scripted registry', () => {
  it('turns the init snapshot into entries (seconds to ms, joined together)', async () => {
    const r = await registry({
      init: () => ({
        event: 'init',
        protocol_version: '1',
        nodes: [node('a', { pid: 4242, registered_at: 1_800_000_001, pid_started_at: 1_799_999_990_123 }), node('b', { status: 'offline', offline_since: 1_800_000_005 })],
        claims: [{ resource: '/repo', holder: 'a', acquired_at: 1_800_000_002 }],
      }),
    });
    const c = client(r.url, { now: () => 42 });
    await connected(c);
    const snap = c.snapshot();
    expect(snap.sessions.map((s) => s.id)).toEqual(['a', 'b']);
    expect(snap.sessions[0]).toMatchObject({
      source: 'hypivisor',
      machine: 'devbox',
      pid: 4242,
      lastSeen: 1_800_000_000_000,
      registeredAt: 1_800_000_001_000,
      pidStartedAt: 1_799_999_990_123,
      offline: false,
      joinSeq: 0,
      firstObservedAt: 42,
    });
    expect(snap.sessions[1]).toMatchObject({ offline: true, offlineSince: 1_800_000_005_000 });
    expect(snap.claims).toEqual([expect.objectContaining({ resource: '/repo', holder: 'a', acquiredAt: 1_800_000_002_000 })]);
    expect(snap.state).toMatchObject({ status: 'connected', claims: true, url: r.url });
  });

  it('applies node_joined, node_offline, node_removed and claim events in order', async () => {
    const r = await registry();
    const c = client(r.url);
    await connected(c);
    r.send({ event: 'node_joined', node: node('x', { pid: 10 }) });
    r.send({ event: 'node_joined', node: node('y', { pid: 10 }) });
    await until(() => c.snapshot().sessions.length === 2);
    const [x, y] = c.snapshot().sessions;
    expect(y!.joinSeq).toBeGreaterThan(x!.joinSeq!);
    r.send({ event: 'node_offline', id: 'x' });
    await until(() => c.snapshot().sessions.find((s) => s.id === 'x')?.offline);
    expect(c.snapshot().sessions.find((s) => s.id === 'x')).toMatchObject({ status: 'offline', offline: true });
    r.send({ event: 'claim_acquired', claim: { resource: 'db', holder: 'y' } });
    await until(() => c.snapshot().claims.length === 1);
    r.send({ event: 'claim_released', resource: 'db' });
    r.send({ event: 'node_removed', id: 'x' });
    await until(() => c.snapshot().sessions.length === 1 && c.snapshot().claims.length === 0);
    expect(c.snapshot().sessions[0]!.id).toBe('y');
  });

  it('sends the token only as a URL-encoded ?token= and never shows it', async () => {
    const r = await registry();
    const c = client(r.url, { token: 'a b&c=d/é' });
    await connected(c);
    // Percent-encoded (a space is %20, never '+': hypivisor decodes only %XX escapes).
    expect(r.upgrades[0]).toBe('/ws?token=a%20b%26c%3Dd%2F%C3%A9');
    expect(decodeURIComponent(r.upgrades[0]!.split('token=')[1]!)).toBe('a b&c=d/é');
    expect(JSON.stringify(c.snapshot().state)).not.toContain('token');
  });

  it('asks list_claims when init has none, and takes "Method not found" as no claims', async () => {
    const r = await registry({
      init: () => ({ event: 'init', nodes: [], protocol_version: '1' }),
      answer: (q) => (q.method === 'list_claims' ? { id: q.id, error: 'Method not found: list_claims' } : undefined),
    });
    const c = client(r.url);
    await until(() => c.snapshot().state.claims === false);
    expect(r.requests.map((q) => q.method)).toEqual(['list_claims']);
  });

  it('uses string request ids and never sends register', async () => {
    const r = await registry({
      answer: (q) => (q.method === 'list_nodes' ? { id: q.id, result: [] } : { id: q.id, result: [] }),
    });
    const c = client(r.url);
    await connected(c);
    await c.resync();
    await c.evict({ type: 'deregister', source: 'hypivisor', id: 'z' });
    expect(r.requests.length).toBeGreaterThan(0);
    for (const q of r.requests) {
      expect(typeof q.id).toBe('string');
      expect(q.method).not.toBe('register');
    }
  });

  it('re-syncs with list_nodes and counts the drift it repaired', async () => {
    let listing = [node('a'), node('b')];
    const r = await registry({
      init: () => ({ event: 'init', nodes: [node('a'), node('stale')], protocol_version: '1', claims: [] }),
      answer: (q) =>
        q.method === 'list_nodes' ? { id: q.id, result: listing } : q.method === 'list_claims' ? { id: q.id, result: [] } : undefined,
    });
    const c = client(r.url);
    await connected(c);
    await c.resync();
    expect(c.snapshot().sessions.map((s) => s.id).sort()).toEqual(['a', 'b']);
    expect(c.snapshot().state).toMatchObject({ repaired: 2, resyncs: 1 }); // b added, stale removed
    listing = [node('a', { last_seen: 1_800_000_099 }), node('b')];
    await c.resync();
    expect(c.snapshot().state.repaired).toBe(2); // a heartbeat moving last_seen is not drift
  });

  it('applies a re-sync answer before the events read after it: an event in the same read is not rolled back', async () => {
    // The list_nodes answer and a node_joined right behind it, in one TCP write: the client reads
    // both in one chunk. The list is older than the event; the event must stand.
    const r = await registry({
      init: () => ({ event: 'init', nodes: [node('a')], protocol_version: '1', claims: [] }),
      answer: (q, ws) => {
        if (q.method === 'list_claims') return { id: q.id, result: [] };
        if (q.method !== 'list_nodes') return undefined;
        const socket = (ws as unknown as { _socket: Socket })._socket;
        socket.cork();
        ws.send(JSON.stringify({ id: q.id, result: [node('a')] }));
        ws.send(JSON.stringify({ event: 'node_joined', node: node('b') }));
        process.nextTick(() => socket.uncork());
        return undefined;
      },
    });
    const c = client(r.url);
    await connected(c);
    await c.resync();
    await until(() => c.snapshot().state.counters.frames >= 3, 3000, 'the answer and the event read');
    expect(c.snapshot().sessions.map((s) => s.id)).toEqual(['a', 'b']);
    expect(c.snapshot().state.repaired).toBe(0);
  });

  it('times out a request the registry drops silently, and says so', async () => {
    const r = await registry(); // answers nothing
    const c = client(r.url, { requestTimeoutMs: 150 });
    await connected(c);
    const outcome = await c.evict({ type: 'deregister', source: 'hypivisor', id: 'a' });
    expect(outcome).toEqual({ outcome: 'failed', error: 'no answer to deregister within 150 ms' });
    expect(c.snapshot().state.counters.requestTimeouts).toBe(1);
  });

  it('reports every eviction outcome: evicted, already gone, refused (sanitized), failed', async () => {
    const r = await registry({
      init: () => ({ event: 'init', nodes: [node('a'), node('b')], protocol_version: '1', claims: [{ resource: 'r', holder: 'a' }] }),
      answer: (q) => {
        const id = (q.params as { id?: string } | undefined)?.id;
        if (q.method === 'deregister' && id === 'a') return { id: q.id, result: { status: 'deregistered' } };
        if (q.method === 'deregister' && id === 'gone') return { id: q.id, result: { status: 'not_found' } };
        if (q.method === 'deregister') return { id: q.id, error: 'Unauthorized: cannot deregister another node\u001b[2J' };
        if (q.method === 'release_claim') return { id: q.id, result: { status: 'released' } };
        return undefined;
      },
    });
    const c = client(r.url);
    await connected(c);
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'a' })).toEqual({ outcome: 'evicted' });
    expect(c.snapshot().sessions.map((s) => s.id)).toEqual(['b']);
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'gone' })).toEqual({ outcome: 'already-gone' });
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'b' })).toEqual({
      outcome: 'refused',
      error: 'Unauthorized: cannot deregister another node^[[2J',
    });
    expect(await c.evict({ type: 'release-claim', source: 'hypivisor', resource: 'r' })).toEqual({ outcome: 'evicted' });
    await c.stop();
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'b' })).toEqual({ outcome: 'failed', error: 'not connected to the registry' });
  });

  it('on HTTP 401 says the token was refused and does not retry in a storm', async () => {
    const r = await registry({ refuse: 401 });
    const c = client(r.url, { token: 'wrong', authRetryMs: 60_000, backoffInitialMs: 10 });
    await until(() => c.snapshot().state.status === 'auth-refused');
    await new Promise((res) => setTimeout(res, 500));
    expect(r.upgrades).toHaveLength(1);
    expect(c.snapshot().state.lastError).toMatch(/refused the token \(HTTP 401\)/);
  });

  it('backs off exponentially with jitter while the registry is unreachable', async () => {
    const r = await registry();
    const url = r.url;
    await r.close();
    const c = client(url, { backoffInitialMs: 40, backoffMaxMs: 200, random: () => 1 });
    await new Promise((res) => setTimeout(res, 700));
    const s = c.snapshot().state;
    expect(s.status === 'unreachable' || s.status === 'connecting').toBe(true);
    expect(c.snapshot().state.lastError).toMatch(/nothing listens|ECONNREFUSED/);
    // 40 + 80 + 160 + 200 + 200 ... ms: about 4-6 attempts in 700 ms, never dozens.
    expect(s.reconnects).toBeGreaterThanOrEqual(3);
    expect(s.reconnects).toBeLessThanOrEqual(7);
  });

  it('after a registry restart the new snapshot replaces the old view whole', async () => {
    let generation = 1;
    const first = await registry({ init: () => ({ event: 'init', nodes: [node(`gen${generation}`)], protocol_version: '1', claims: [] }) });
    const c = client(first.url, { backoffInitialMs: 20 });
    await until(() => c.snapshot().sessions[0]?.id === 'gen1');
    const port = first.port;
    await first.close();
    await until(() => c.snapshot().state.status !== 'connected');
    generation = 2;
    const second = await startScriptedRegistry({ init: () => ({ event: 'init', nodes: [node(`gen${generation}`)], protocol_version: '1', claims: [] }) }, port);
    cleanups.push(() => second.close());
    await until(() => c.snapshot().state.status === 'connected' && c.snapshot().sessions[0]?.id === 'gen2', 5000, 'reconnect');
    expect(c.snapshot().sessions.map((s) => s.id)).toEqual(['gen2']);
  });

  it('a frame over the max payload is counted, and the client reconnects', async () => {
    const r = await registry();
    const c = client(r.url, { maxPayload: 2048, backoffInitialMs: 20 });
    await connected(c);
    r.send({ event: 'node_joined', node: node('big', { cwd: 'x'.repeat(4096) }) });
    await until(() => c.snapshot().state.counters.oversize === 1);
    expect(c.snapshot().state.lastError).toMatch(/larger than the max payload \(2048 bytes\)/);
    await until(() => c.snapshot().state.status === 'connected' && c.snapshot().state.reconnects === 1, 3000, 'reconnect');
  });

  it('estimates the registry clock offset from fresh registrations', async () => {
    const r = await registry();
    const c = client(r.url, { now: () => 1_800_000_000_000 });
    await connected(c);
    for (let i = 0; i < 5; i++) r.send({ event: 'node_joined', node: node(`n${i}`, { registered_at: 1_800_000_300 + i * 0 }) });
    await until(() => c.snapshot().sessions.length === 5);
    expect(c.snapshot().state.clockOffsetMs).toBe(300_000);
  });
});

describe('quiet when nothing changed', () => {
  async function resyncWith(answer: ReturnType<typeof node>[], check: (c: HypivisorSource, before: readonly unknown[], notified: () => number) => void): Promise<void> {
    const r = await startScriptedRegistry({
      init: () => ({ event: 'init', nodes: [node('a'), node('b')], protocol_version: '1', claims: [] }),
      answer: (q) => (q.method === 'list_nodes' ? { id: q.id, result: answer } : { id: q.id, result: [] }),
    });
    const c = new HypivisorSource({ url: r.url, resyncIntervalMs: 60_000 });
    c.start();
    try {
      await until(() => c.snapshot().state.status === 'connected');
      const before = c.snapshot().sessions;
      let notified = 0;
      c.subscribe(() => notified++);
      await c.resync();
      check(c, before, () => notified);
    } finally {
      await c.stop();
      await r.close();
    }
  }

  it('a re-sync that finds the view right notifies nobody and keeps the same entry objects', async () => {
    await resyncWith([node('a'), node('b')], (c, before, notified) => {
      expect(notified()).toBe(0);
      expect(c.snapshot().sessions).toBe(before);
      expect(c.snapshot().state.resyncs).toBe(1);
    });
  });

  it("a re-sync that finds a node's last_seen moved (a heartbeat) shows it: one notification, that entry new, no drift counted (issue 27)", async () => {
    await resyncWith([node('a', { last_seen: 1_800_000_050 }), node('b')], (c, before, notified) => {
      expect(notified()).toBe(1);
      const [a, b] = c.snapshot().sessions;
      expect(a).not.toBe(before[0]);
      expect(a?.lastSeen).toBe(1_800_000_050_000);
      expect(b).toBe(before[1]);
      expect(c.snapshot().state.repaired).toBe(0);
    });
  });
});

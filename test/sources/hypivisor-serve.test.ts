// The client against the real `ghostwatch serve`, with agents that register the way pi-socket does.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer } from '../../src/server/index.js';
import { HypivisorSource, type HypivisorOptions } from '../../src/sources/hypivisor/index.js';
import { until } from '../support/wait.js';

type Server = Awaited<ReturnType<typeof startRegistryServer>>;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(opts: Parameters<typeof startRegistryServer>[0] = {}): Promise<Server> {
  const s = await startRegistryServer({ port: 0, log: () => {}, ...opts });
  cleanups.push(() => s.close());
  return s;
}

function source(url: string, opts: Partial<HypivisorOptions> = {}): HypivisorSource {
  const c = new HypivisorSource({ url, requestTimeoutMs: 1000, resyncIntervalMs: 60_000, backoffInitialMs: 20, ...opts });
  cleanups.push(() => c.stop());
  c.start();
  return c;
}

/** A pi-socket-like agent: its own connection, registers itself, keeps the socket open. */
async function agent(url: string, id: string, fields: Record<string, unknown> = {}): Promise<WebSocket> {
  const ws = new WebSocket(url);
  cleanups.push(async () => ws.terminate());
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const answered = new Promise<unknown>((resolve) => ws.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.id === `reg-${id}`) resolve(m);
  }));
  ws.send(JSON.stringify({ id: `reg-${id}`, method: 'register', params: { id, machine: 'devbox', cwd: '/repo', port: 7000 + Number(id.replace(/\D/g, '') || 0), status: 'active', pid: process.pid, ...fields } }));
  await answered;
  return ws;
}

async function call(ws: WebSocket, method: string, params?: unknown): Promise<{ result?: unknown; error?: string }> {
  const id = `c-${Math.random()}`;
  return new Promise((resolve) => {
    const on = (d: WebSocket.RawData) => {
      const m = JSON.parse(String(d));
      if (m.id === id) {
        ws.off('message', on);
        resolve(m);
      }
    };
    ws.on('message', on);
    ws.send(JSON.stringify({ id, method, ...(params ? { params } : {}) }));
  });
}

async function listNodes(url: string): Promise<string[]> {
  const ws = new WebSocket(url);
  await new Promise((r) => ws.once('open', r));
  const res = await call(ws, 'list_nodes');
  ws.terminate();
  return (res.result as { id: string }[]).map((n) => n.id).sort();
}

const ids = (c: HypivisorSource) => c.snapshot().sessions.map((s) => s.id).sort();

describe('HypivisorSource ↔ ghostwatch serve', () => {
  it('follows the snapshot and every event, with the §2 extensions', async () => {
    const s = await serve();
    await agent(s.url, 'a1');
    const c = source(s.url);
    await until(() => ids(c).join() === 'a1');
    expect(c.snapshot().sessions[0]).toMatchObject({ pid: process.pid, status: 'active' });
    expect(c.snapshot().sessions[0]!.registeredAt).toBeGreaterThan(0);
    expect(c.snapshot().state.claims).toBe(true);

    const b = await agent(s.url, 'b2', { pid_started_at: 1_700_000_000_123 });
    await until(() => ids(c).join() === 'a1,b2');
    expect(c.snapshot().sessions.find((e) => e.id === 'b2')?.pidStartedAt).toBe(1_700_000_000_123);

    expect(await call(b, 'claim', { resource: '/repo', holder: 'b2' })).toEqual(expect.objectContaining({ result: { status: 'claimed' } }));
    await until(() => c.snapshot().claims.length === 1);
    expect(c.snapshot().claims[0]).toMatchObject({ resource: '/repo', holder: 'b2' });

    b.close();
    await until(() => c.snapshot().sessions.find((e) => e.id === 'b2')?.offline);

    expect(await c.evict({ type: 'release-claim', source: 'hypivisor', resource: '/repo' })).toEqual({ outcome: 'evicted' });
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'b2' })).toEqual({ outcome: 'evicted' });
    expect(await c.evict({ type: 'deregister', source: 'hypivisor', id: 'b2' })).toEqual({ outcome: 'already-gone' });
    await until(() => ids(c).join() === 'a1' && c.snapshot().claims.length === 0);
    expect(await listNodes(s.url)).toEqual(['a1']);
  });

  it('a registry restart leaves no stale row: the new snapshot replaces the old', async () => {
    const first = await serve();
    await agent(first.url, 'old1');
    await agent(first.url, 'old2');
    const c = source(first.url);
    await until(() => ids(c).join() === 'old1,old2');
    const port = first.port;
    await first.close();
    await until(() => c.snapshot().state.status !== 'connected');
    const second = await serve({ port });
    await agent(second.url, 'new3');
    await until(() => c.snapshot().state.status === 'connected' && ids(c).join() === 'new3', 8000, 'resync after restart');
    expect(ids(c)).toEqual(await listNodes(second.url));
  });

  it('a wrong token gives one clear state and no retry storm', async () => {
    const s = await serve({ token: 'right token' });
    const bad = source(s.url, { token: 'wrong', authRetryMs: 60_000 });
    await until(() => bad.snapshot().state.status === 'auth-refused');
    await new Promise((r) => setTimeout(r, 600));
    expect(bad.snapshot().state).toMatchObject({ status: 'auth-refused', reconnects: 0 });
    expect(bad.snapshot().state.lastError).toMatch(/HTTP 401/);
    const good = source(s.url, { token: 'right token' });
    await until(() => good.snapshot().state.status === 'connected');
  });

  it('repairs within one re-sync interval when the registry drops half of its events', async () => {
    let n = 0;
    const s = await serve({ eventFilter: () => n++ % 2 === 0 });
    const c = source(s.url, { resyncIntervalMs: 400 });
    await until(() => c.snapshot().state.status === 'connected');
    const agents: WebSocket[] = [];
    for (let i = 0; i < 12; i++) agents.push(await agent(s.url, `n${i}`));
    for (const a of agents.slice(0, 4)) await call(a, 'deregister', { id: `n${agents.indexOf(a)}` });
    const expected = await listNodes(s.url);
    expect(expected).toHaveLength(8);
    const t0 = Date.now();
    await until(() => ids(c).join() === expected.join(), 2000, 'repair');
    expect(Date.now() - t0).toBeLessThan(1000); // within one interval (400 ms), plus slack for a busy machine
    expect(c.snapshot().state.repaired).toBeGreaterThan(0);
  });
});

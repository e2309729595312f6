// The engine's store against a real registry and real processes: verdicts arrive at the
// cadence design.md promises, an idle engine does nothing, bursts are coalesced, time-driven
// verdicts need no other input, and stop() leaves nothing running.
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { VERDICTS } from '../../src/core/types.js';
import { createEngine } from '../../src/engine/index.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { startScriptedRegistry } from '../support/scripted-registry.js';
import {
  HOST,
  agent,
  call,
  countPublishes,
  engineFor,
  finding,
  killAndReap,
  onCleanup,
  register,
  serve,
  sleeper,
  sleepMs,
  source,
  tempDir,
  track,
  until,
  verdictOf,
} from './helpers.js';
import { itOn } from '../support/platform.js';

describe('engine store: verdicts at the promised cadence', () => {
  it('a registered child that is SIGKILLed becomes ghost within 1 s at the default cadence', async () => {
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 'doomed', { pid: child.pid });
    const engine = engineFor([source(s.url)]);
    await engine.settled(3000);
    expect(verdictOf(engine, 'doomed')).toBe('live');

    await killAndReap(child);
    const t0 = Date.now();
    await until(() => verdictOf(engine, 'doomed') === 'ghost', 2000, 'ghost');
    expect(Date.now() - t0).toBeLessThan(1000);
    const f = finding(engine.getSnapshot(), 'doomed')!;
    expect(f.evidence.kill).toBe('ESRCH');
    expect(f.evidence.state).toBeUndefined(); // a pid that turned ESRCH drops its old state
    expect(engine.getSnapshot().counts.ghost).toBe(1);
    expect(engine.getSnapshot().problems).toBe(1);
  });

  itOn(['linux'], 'zombie state is read from /proc')('a child that becomes a real zombie turns zombie within 3 s; a live child stays live', async () => {
    const s = await serve();
    // sh backgrounds a short sleep, prints its pid and execs a long sleep that never reaps it.
    const sh = track(spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] }));
    const zombiePid = Number(await new Promise<string>((r) => createInterface({ input: sh.stdout! }).once('line', r)));
    const alive = sleeper();
    await agent(s.url, 'undead', { pid: zombiePid });
    await agent(s.url, 'fine', { pid: alive.pid });
    const engine = engineFor([source(s.url)]);
    await until(() => verdictOf(engine, 'undead') === 'live' && verdictOf(engine, 'fine') === 'live', 2000, 'both live');

    const t0 = Date.now();
    await until(() => verdictOf(engine, 'undead') === 'zombie', 4000, 'zombie');
    expect(Date.now() - t0).toBeLessThan(3000 + 300);
    expect(finding(engine.getSnapshot(), 'undead')?.evidence.state).toBe('Z');
    expect(verdictOf(engine, 'fine')).toBe('live');
    const snap = engine.getSnapshot();
    expect(Object.keys(snap.counts).sort()).toEqual([...VERDICTS].sort());
    expect(snap).toMatchObject({ host: HOST, problems: 1, settled: true });
    expect(snap.counts).toMatchObject({ live: 1, zombie: 1, ghost: 0 });
    expect(snap.sources[0]).toMatchObject({ name: 'hypivisor', status: 'connected' });
  });

  it('settles once the source has its snapshot and every local pid one full probe', async () => {
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 'a1', { pid: child.pid });
    await agent(s.url, 'far', { pid: 4242, machine: 'elsewhere.example' });
    const engine = engineFor([source(s.url)]);
    expect(engine.getSnapshot().settled).toBe(false);
    const snap = await engine.settled(3000);
    expect(snap.settled).toBe(true);
    expect(snap).toBe(engine.getSnapshot());
    const f = finding(snap, 'a1')!;
    expect(f.verdict).toBe('live');
    expect(f.evidence.start).toBeDefined(); // settled means the full probe (start time) is in
    expect(verdictOf(engine, 'far')).toBe('remote');
    expect(engine.getSnapshot().os.lastProbeAt).toBeGreaterThan(0);
  });

  it('settles with an unreachable source rather than waiting forever', async () => {
    const s = await serve();
    const url = s.url;
    await s.close();
    const engine = engineFor([source(url)]);
    const snap = await engine.settled(3000);
    expect(snap.settled).toBe(true);
    expect(snap.sources[0]?.status).toBe('unreachable');
  });
});

describe('engine store: ports and sources', () => {
  it('judges a local entry with no pid by its port: live while something listens, ghost once nothing does', async () => {
    const s = await serve();
    const listener = createServer();
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as AddressInfo).port;
    await agent(s.url, 'portonly', { port });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await engine.settled(3000);
    expect(verdictOf(engine, 'portonly')).toBe('live');
    await new Promise((r) => listener.close(r));
    await until(() => verdictOf(engine, 'portonly') === 'ghost', 2000, 'ghost by port');
    expect(finding(engine.getSnapshot(), 'portonly')?.evidence.port).toMatchObject({ port, result: 'refused' });
  });

  it('merges several sources: sessions of each in order, then claims, each with its own state', async () => {
    const [one, two] = [await serve(), await serve()];
    const ws = await agent(one.url, 'x1', { pid: sleeper().pid });
    await call(ws, 'claim', { resource: '/r', holder: 'x1' });
    await agent(two.url, 'y1', { pid: sleeper().pid });
    await agent(two.url, 'y2', { pid: sleeper().pid });
    const sources = [one, two].map(
      (r, i) => new HypivisorSource({ name: `reg${i + 1}`, url: r.url, resyncIntervalMs: 60_000, requestTimeoutMs: 2000 }),
    );
    const engine = engineFor(sources);
    const snap = await until(() => {
      const sn = engine.getSnapshot();
      return sn.settled && sn.findings.length === 4 && sn;
    }, 3000, 'both sources');
    expect(snap.findings.map((f) => `${f.kind} ${f.source} ${f.id} ${f.verdict}`)).toEqual([
      'session reg1 x1 live',
      'session reg2 y1 live',
      'session reg2 y2 live',
      'claim reg1 /r held',
    ]);
    expect(snap.sources.map((st) => [st.name, st.status])).toEqual([
      ['reg1', 'connected'],
      ['reg2', 'connected'],
    ]);
  });
});

describe('engine store: work only when something changed', () => {
  it('an idle, settled engine publishes nothing and does not reconcile again', async () => {
    const s = await serve();
    const children = [sleeper(), sleeper(), sleeper()];
    for (const [i, c] of children.entries()) await agent(s.url, `idle${i}`, { pid: c.pid });
    const engine = engineFor([source(s.url)]);
    await engine.settled(3000);
    // Wait for the process table to be attached too: that is the last first-time fact.
    await until(() => engine.getSnapshot().findings.every((f) => f.evidence.process !== undefined), 3000, 'process info');
    // First-time facts that land late on a loaded machine (the process rows, a pane lookup) are
    // not idleness: wait until one whole second passes with no publish, then watch 1.5 s more.
    await until(async () => {
      const quiet = countPublishes(engine);
      await sleepMs(1000);
      return quiet.count === 0 ? true : undefined;
    }, 15_000, 'a quiet second');
    const publishes = countPublishes(engine);
    const before = engine.stats();
    const snap = engine.getSnapshot();
    await sleepMs(1500);
    const after = engine.stats();
    expect(publishes.count).toBe(0);
    expect(after.recomputes).toBe(before.recomputes);
    expect(engine.getSnapshot()).toBe(snap);
    // ...while the probes kept running (about six kill-only rounds in 1.5 s on an idle machine).
    expect(after.probes.kill - before.probes.kill).toBeGreaterThanOrEqual(1);
    expect(engine.processInfo(children[0]!.pid)?.name).toBe('sleep');
  });

  it('folds a burst of 300 registrations into at most ~30 publishes a second', async () => {
    const s = await serve();
    const engine = engineFor([source(s.url)]);
    await engine.settled(3000);
    const publishes = countPublishes(engine);
    const before = engine.stats().recomputes;
    // serve takes at most 64 nodes a connection: five agents' connections, 60 each.
    const sockets = await Promise.all(Array.from({ length: 5 }, (_, k) => agent(s.url, `burst-${k * 60}`, { pid: process.pid })));
    for (const ws of sockets) ws.setMaxListeners(100);
    const t0 = performance.now();
    await Promise.all(
      sockets.flatMap((ws, k) => Array.from({ length: 59 }, (_, i) => register(ws, `burst-${k * 60 + i + 1}`, { pid: process.pid }))),
    );
    await until(() => engine.getSnapshot().findings.length === 300, 5000, '300 findings');
    const elapsed = performance.now() - t0;
    expect(publishes.count).toBeGreaterThan(0);
    expect(publishes.count).toBeLessThanOrEqual(Math.ceil((elapsed / 1000) * 30) + 2);
    expect(publishes.count).toBeLessThan(100);
    expect(engine.stats().recomputes - before).toBeLessThanOrEqual(Math.ceil((elapsed / 1000) * 30) + 2);
    // One live pid, 300 entries: all but the newest registrations are superseded.
    const { counts } = await until(() => {
      const snap = engine.getSnapshot();
      return snap.counts.live + snap.counts.superseded === 300 && snap;
    }, 3000, 'probed');
    expect(counts.superseded).toBeGreaterThan(0);
  });

  it('a young pending entry turns pending right after the TTL, with no other input', async () => {
    const s = await serve();
    const child = sleeper();
    const id = `pending-${child.pid}`;
    // intervalScale 1000: no probe tick in this test; only the TTL timer can change the verdict.
    const engine = engineFor([source(s.url)], { pendingTtlMs: 1500, intervalScale: 1000 });
    await engine.settled(3000);
    await agent(s.url, id, { pid: child.pid });
    await until(() => {
      const f = finding(engine.getSnapshot(), id);
      return f?.verdict === 'live' && f.note === 'resolving';
    }, 2000, 'live and resolving');
    const young = finding(engine.getSnapshot(), id)!;
    const expectedAt = engine.getSnapshot().computedAt + (1500 - young.evidence.pending!.ageMs);
    const probesBefore = engine.stats().probes;

    await until(() => verdictOf(engine, id) === 'pending', 3000, 'pending');
    const flippedAt = engine.getSnapshot().computedAt;
    expect(flippedAt).toBeGreaterThanOrEqual(expectedAt);
    expect(flippedAt - expectedAt).toBeLessThan(200);
    expect(finding(engine.getSnapshot(), id)?.reason).toMatch(/placeholder never resolved/);
    expect(engine.stats().probes).toEqual(probesBefore);
  });
});

describe('engine lifecycle', () => {
  it('settled(timeout) gives up with what is known when a source never sends its snapshot', async () => {
    const silent = await startScriptedRegistry({ init: () => undefined });
    onCleanup(() => silent.close());
    const engine = engineFor([source(silent.url)]);
    const t0 = Date.now();
    const snap = await engine.settled(300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(snap.settled).toBe(false);
    expect(snap.sources[0]?.status).toBe('connecting');
  });

  it('refresh() probes everything and re-syncs every source, then resolves', async () => {
    const s = await serve();
    await agent(s.url, 'r1', { pid: sleeper().pid });
    const src = source(s.url);
    const engine = engineFor([src], { intervalScale: 1000 });
    await engine.settled(3000);
    const before = engine.stats().probes;
    const resyncs = src.snapshot().state.resyncs;
    await engine.refresh();
    const after = engine.stats().probes;
    expect(after.full).toBeGreaterThan(before.full);
    expect(after.table).toBeGreaterThan(before.table);
    // A re-sync that finds nothing new wakes nobody: the source's own state has the count.
    expect(src.snapshot().state.resyncs).toBe(resyncs + 1);
  });

  it('stop() leaves no timer of its own behind', async () => {
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 's1', { pid: child.pid });
    const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await sleepMs(50);
    const before = timeouts();
    const engine = createEngine({
      sources: [source(s.url)],
      hostName: HOST,
      auditLogPath: `${tempDir()}/audit.jsonl`,
      intervalScale: 0.2,
    });
    engine.start();
    await engine.settled(3000);
    expect(timeouts()).toBeGreaterThan(before);
    await engine.stop();
    await sleepMs(20);
    expect(timeouts()).toBeLessThanOrEqual(before);
    const stats = engine.stats();
    await sleepMs(200);
    expect(engine.stats()).toEqual(stats); // nothing runs after stop
    expect((await engine.settled(1000)).settled).toBe(true);
  });
});

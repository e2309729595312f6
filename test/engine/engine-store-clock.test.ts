// The engine's store on a hand-driven clock: settled waits for every source, the TTL timer
// follows the findings (re-armed, cleared when its entry leaves), each publish is one version
// more, a refresh publishes at once, an audit log that cannot be opened is said in the snapshot,
// and a stopped engine answers without waiting.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type EngineOptions, type LiveEngine } from '../../src/engine/index.js';
import type { Source } from '../../src/sources/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

const HOST = 'fakehost';

function setup(opts: Partial<EngineOptions> = {}, extra: (clock: FakeClock) => Source[] = () => []) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const source = new FakeSource(clock);
  const others = extra(clock);
  const engine = createEngine({ sources: [source, ...others], hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes, clock, ...opts });
  onCleanup(() => engine.stop());
  return { clock, probes, source, others, engine };
}

const row = (engine: LiveEngine, id: string) => engine.getSnapshot().findings.find((f) => f.id === id);

describe('engine store on a fake clock', () => {
  it('settles only once every source has its first snapshot', async () => {
    const { clock, source, others, engine } = setup({}, (c) => [new FakeSource(c, 'other')]);
    const other = others[0] as FakeSource;
    engine.start();
    source.set([]);
    await clock.advance(5_000);
    expect(engine.getSnapshot().settled).toBe(false);
    other.set([]);
    await clock.advance(100);
    expect(engine.getSnapshot().settled).toBe(true);
  });

  it('each publish is exactly one version more, and counted', async () => {
    const { clock, probes, source, engine } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 60_000 });
    engine.start();
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(1_000);
    const v = engine.getSnapshot().version;
    const published = engine.stats().publishes;
    expect(v).toBeGreaterThan(0);
    expect(published).toBeGreaterThan(0);
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 }), FakeSource.session('b', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(row(engine, 'b')).toBeDefined();
    const after = engine.getSnapshot().version;
    expect(after).toBeGreaterThan(v);
    expect(engine.stats().publishes - published).toBe(after - v);
  });

  it('the TTL timer is cleared when its entry leaves, and re-armed for a new one', async () => {
    const ttl = 10_000;
    const { clock, probes, source, engine } = setup({ pendingTtlMs: ttl, intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    source.set([FakeSource.session('pending-100', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(clock.timeouts()).toContain(ttl + 1);
    source.set([]);
    await clock.advance(100);
    expect(clock.timeouts()).not.toContain(ttl + 1);
    // A new young one at 200 ms: its own crossing.
    source.set([FakeSource.session('pending-100', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(clock.timeouts()).toContain(200 + ttl + 1);
    expect(clock.timeouts().filter((t) => t > 1_000 && t < 1_000_000)).toEqual([200 + ttl + 1]);
    await clock.advanceTo(200 + ttl + 1);
    expect(row(engine, 'pending-100')?.verdict).toBe('pending');
  });

  it('refresh() publishes at once, without waiting for the gap', async () => {
    const { clock, probes, source, engine } = setup({ intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 60_000 });
    engine.start();
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(1_000);
    expect(row(engine, 'a')?.verdict).toBe('live');
    probes.processes.delete(100);
    source.poke();
    await engine.refresh();
    expect(row(engine, 'a')?.verdict).toBe('ghost');
  });

  it('settled(timeout) on a stopped engine answers at once', async () => {
    const { clock, engine } = setup();
    engine.start();
    await engine.stop();
    const snap = await engine.settled(60_000);
    expect(snap).toBe(engine.getSnapshot());
    expect(clock.t).toBe(0);
  });

  it('an audit log that cannot be opened (a FIFO) is said in the snapshot, in one line', async () => {
    const dir = tempDir();
    const path = join(dir, 'evictions.jsonl');
    execFileSync('mkfifo', ['-m', '600', path]);
    const { clock, source, engine } = setup({ auditLogPath: path });
    engine.start();
    source.set([]);
    // The check reads the real file system: wait for it in real time, moving the engine's clock on.
    const end = Date.now() + 5_000;
    while (engine.getSnapshot().os.notices === undefined && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 10));
      await clock.advance(100);
    }
    expect(engine.getSnapshot().os.notices).toEqual([`audit log: the audit log ${path} is not a regular file; refusing to write to it`]);
  });

  it('the actor of an eviction is the given one, in its audit lines', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const { clock, source, engine } = setup({ actor: 'ana@fakehost', auditLogPath: path });
    engine.start();
    source.set([FakeSource.session('g', { machine: HOST, pid: 4242 })]);
    await clock.advance(1_000);
    const ghost = row(engine, 'g')!;
    expect(ghost.verdict).toBe('ghost');
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]?.outcome).toBe('evicted');
    expect(source.evicted).toEqual([{ type: 'deregister', source: 'fake', id: 'g' }]);
    const intent = JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    expect(intent).toMatchObject({ kind: 'intent', actor: 'ana@fakehost', host: HOST });
  });

  it('start() twice subscribes and arms once: one tick timer besides the four probe cadences', async () => {
    const { clock, source, engine } = setup();
    engine.start();
    engine.start();
    expect(clock.intervals()).toHaveLength(5);
    let publishes = 0;
    engine.subscribe(() => publishes++);
    source.set([]);
    await clock.advance(100);
    const before = engine.stats().recomputes;
    source.poke();
    await clock.advance(100);
    // One subscription: one recompute for one change.
    expect(engine.stats().recomputes - before).toBe(1);
    expect(publishes).toBeGreaterThan(0);
  });

  it('without an actor, evictions are audited as user@host', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const { clock, source, engine } = setup({ auditLogPath: path });
    engine.start();
    source.set([FakeSource.session('g', { machine: HOST, pid: 4242 })]);
    await clock.advance(1_000);
    await engine.evict({ selection: [row(engine, 'g')!], force: false });
    const intent = JSON.parse(readFileSync(path, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    expect(intent.actor).toBe(`${userInfo().username}@${HOST}`);
  });
});

// The whole engine on a hand-driven clock with scripted probes and a scripted source: the
// moments it acts at are exact. A pending entry turns `pending` at the very millisecond its TTL
// is outlived, a death is published at the kill tick that sees it, settled is a latch, bursts
// are coalesced, and the eviction re-check reads the same provider as the live loop.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type EngineOptions, type LiveEngine } from '../../src/engine/index.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

const HOST = 'fakehost';

function setup(opts: Partial<EngineOptions> = {}) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const source = new FakeSource(clock);
  const engine = createEngine({
    sources: [source],
    hostName: HOST,
    auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'),
    probes,
    clock,
    ...opts,
  });
  onCleanup(() => engine.stop());
  return { clock, probes, source, engine };
}

const row = (engine: LiveEngine, id: string) => engine.getSnapshot().findings.find((f) => f.id === id);

describe('engine on a fake clock: time-driven verdicts', () => {
  it.each([
    ['1.5 s', 1_500],
    ['120 s (the default --pending-ttl)', 120_000],
  ])('a young pending entry with a TTL of %s turns pending at exactly TTL + 1 ms, woken by its own timer', async (_, ttl) => {
    // intervalScale 1000: no probe tick and no minute tick in the window; only the TTL timer can act.
    const { clock, probes, source, engine } = setup({ pendingTtlMs: ttl, intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    source.set([FakeSource.session('pending-100', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(row(engine, 'pending-100')).toMatchObject({ verdict: 'live', note: 'resolving' });
    // One timer, armed for the crossing: reconcile calls an age stale once it is strictly over the TTL.
    expect(clock.timeouts()).toContain(ttl + 1);
    const calls = probes.calls.length;

    await clock.advanceTo(ttl);
    expect(row(engine, 'pending-100')?.verdict).toBe('live');
    await clock.advanceTo(ttl + 1);
    expect(row(engine, 'pending-100')).toMatchObject({ verdict: 'pending', reason: expect.stringMatching(/placeholder never resolved/) });
    expect(engine.getSnapshot().computedAt).toBe(clock.wallStart + ttl + 1);
    expect(probes.calls.length).toBe(calls);
  });

  it('a death is published at the kill tick that sees it, not a millisecond later', async () => {
    const { clock, probes, source, engine } = setup();
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(1_010);
    expect(row(engine, 'a1')?.verdict).toBe('live');
    probes.processes.delete(100);
    await clock.advanceTo(1_249);
    expect(row(engine, 'a1')?.verdict).toBe('live');
    await clock.advanceTo(1_250);
    expect(row(engine, 'a1')).toMatchObject({ verdict: 'ghost', evidence: { kill: 'ESRCH' } });
    expect(engine.getSnapshot().computedAt).toBe(clock.wallStart + 1_250);
  });

  it('--interval scales every timer of the engine: probes and the minute re-check', async () => {
    const { clock, engine } = setup({ intervalScale: 2 });
    engine.start();
    expect(clock.intervals()).toEqual([500, 4_000, 4_000, 10_000, 120_000]);
  });

  it('the minute re-check never runs more than once a second, however small the scale', async () => {
    const { clock, engine } = setup({ intervalScale: 0.001 });
    engine.start();
    expect(clock.intervals()).toEqual([10, 10, 10, 10, 1_000]);
  });
});

describe('engine on a fake clock: settling, probing, coalescing', () => {
  it('settled is a latch: a new pid waiting for its first probe does not unsettle the snapshot', async () => {
    const { clock, probes, source, engine } = setup({ intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok' });
    probes.processes.set(101, { kill: 'ok' });
    engine.start();
    await clock.advance(100);
    expect(engine.getSnapshot().settled).toBe(false); // the source has not read its registry yet
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(engine.getSnapshot().settled).toBe(true);

    probes.hold('full');
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 }), FakeSource.session('a2', { machine: HOST, pid: 101 })]);
    await clock.advance(100);
    expect(row(engine, 'a2')).toBeDefined();
    expect(engine.getSnapshot().settled).toBe(true);
    probes.release('full');
  });

  it('settled(timeout) resolves with what is known once the timeout passes on the engine clock', async () => {
    const { clock, engine } = setup();
    engine.start();
    let answer: boolean | undefined;
    void engine.settled(5_000).then((s) => (answer = s.settled));
    await clock.advanceTo(4_999);
    expect(answer).toBeUndefined();
    await clock.advanceTo(5_000);
    expect(answer).toBe(false);
  });

  it('a new pid is probed fully the moment its entry arrives, not at the next 2 s tick', async () => {
    const { clock, probes, source, engine } = setup();
    probes.processes.set(100, { kill: 'ok' });
    probes.processes.set(101, { kill: 'ok', startedAt: clock.now() - 1_000 });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(700);
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 }), FakeSource.session('a2', { machine: HOST, pid: 101 })]);
    await clock.advanceTo(750);
    expect(probes.of('full').filter((c) => c.items.includes(101)).map((c) => c.t)).toEqual([700]);
    // The state is read by a full probe only: the row shows it well before any 2 s tick.
    expect(row(engine, 'a2')?.evidence).toMatchObject({ kill: 'ok', state: 'S' });
  });

  it('an event after a quiet spell is recomputed at once; a burst during the next 33 ms costs one more, at its end', async () => {
    const { clock, probes, source, engine } = setup({ intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(1_000);
    const before = engine.stats().recomputes;
    source.poke();
    await clock.advance(0);
    expect(engine.stats().recomputes).toBe(before + 1);
    for (let i = 0; i < 50; i++) source.poke();
    await clock.advance(32);
    expect(engine.stats().recomputes).toBe(before + 1);
    await clock.advance(1);
    expect(engine.stats().recomputes).toBe(before + 2);
  });

  it('stop() clears every timer the engine armed on its clock', async () => {
    const { clock, probes, source, engine } = setup();
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(500);
    expect(clock.armed).toBeGreaterThan(4);
    await engine.stop();
    expect(clock.armed).toBe(0);
  });
});

describe('engine on a fake clock: the eviction re-check', () => {
  // Far above any kernel's pid_max: the machine's own kill(0) could only ever say ESRCH.
  const PID = 2_000_000_000;

  it('re-probes through the injected provider: a ghost that is alive again is not evicted', async () => {
    const { clock, probes, source, engine } = setup({ intervalScale: 1000 });
    engine.start();
    source.set([FakeSource.session('g1', { machine: HOST, pid: PID })]);
    await clock.advance(100);
    const ghost = row(engine, 'g1')!;
    expect(ghost.verdict).toBe('ghost');

    probes.processes.set(PID, { kill: 'ok' });
    const before = probes.of('full').length;
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(probes.of('full').slice(before).map((c) => c.items)).toEqual([[PID]]);
    expect(summary.results[0]).toMatchObject({ outcome: 'skipped', detail: expect.stringMatching(/now live/) });
    expect(source.evicted).toEqual([]);
  });

  it('a ghost the provider still finds gone is evicted', async () => {
    const { clock, source, engine } = setup({ intervalScale: 1000 });
    engine.start();
    source.set([FakeSource.session('g1', { machine: HOST, pid: PID })]);
    await clock.advance(100);
    const summary = await engine.evict({ selection: [row(engine, 'g1')!], force: false });
    expect(summary.counts.evicted).toBe(1);
    expect(source.evicted).toEqual([{ type: 'deregister', source: 'fake', id: 'g1' }]);
  });
});

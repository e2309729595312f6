// The whole engine on a hand-driven clock with scripted probes and a scripted source: the
// moments it acts at are exact. A pending entry turns `pending` at the very millisecond its TTL
// is outlived, a death is published at the kill tick that sees it, settled is a latch, bursts
// are coalesced, and the eviction re-check reads the same provider as the live loop. Also which
// source changes are read (one source of several, claims alone, sessions alone), the minute
// re-check that recomputes but publishes nothing when nothing shows, a TTL timer that leaves no
// stray wake-up behind, settled() waiters told on stop, unsubscribe, stop before start, `o` from a
// provider that cannot switch panes, and our evictions in the events.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type EngineOptions, type LiveEngine } from '../../src/engine/index.js';
import { FakeClock, settle } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';
import { chmodSync, writeFileSync } from 'node:fs';
import type { TmuxPane } from '../../src/core/tmux.js';
import type { ClaimEntry, SessionEntry } from '../../src/core/types.js';
import type { PaneLookup } from '../../src/os/tmux.js';
import { emptyCounters, type Source, type SourceSnapshot, type SourceState } from '../../src/sources/types.js';

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


/** A source whose session and claim lists are replaced one at a time: the other list keeps its object. */
class HandSource implements Source {
  private sessions: readonly SessionEntry[] = [];
  private claims: readonly ClaimEntry[] = [];
  private readonly state: SourceState;
  private readonly listeners = new Set<() => void>();

  constructor(readonly name: string) {
    this.state = { name, url: 'hand://registry', status: 'connected', since: 0, repaired: 0, resyncs: 0, reconnects: 0, counters: emptyCounters(), clockOffsetMs: 0 };
  }

  start(): void {}
  async stop(): Promise<void> {}
  async resync(): Promise<void> {}
  async evict(): ReturnType<Source['evict']> {
    return { outcome: 'evicted' };
  }

  snapshot(): SourceSnapshot {
    return { sessions: this.sessions, claims: this.claims, state: this.state };
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setSessions(sessions: readonly SessionEntry[]): void {
    this.sessions = sessions;
    for (const l of [...this.listeners]) l();
  }

  setClaims(claims: readonly ClaimEntry[]): void {
    this.claims = claims;
    for (const l of [...this.listeners]) l();
  }
}

function setupSources(sources: (clock: FakeClock) => Source[], opts: Partial<EngineOptions> = {}, probes?: (clock: FakeClock) => FakeProbes) {
  const clock = new FakeClock();
  const p = probes ? probes(clock) : new FakeProbes(clock);
  const list = sources(clock);
  const engine = createEngine({ sources: list, hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes: p, clock, ...opts });
  onCleanup(() => engine.stop());
  return { clock, probes: p, sources: list, engine };
}

const ids = (engine: ReturnType<typeof createEngine>) => engine.getSnapshot().findings.map((f) => `${f.kind}:${f.id}`);
const session = (source: string, id: string, pid: number): SessionEntry => ({ source, id, machine: HOST, pid });

describe('engine: what a source change is', () => {
  it('one source of two changing is read: its new row shows, the other source’s rows stay', async () => {
    const { clock, probes, sources, engine } = setupSources(() => [new HandSource('one'), new HandSource('two')]);
    const [one, two] = sources as [HandSource, HandSource];
    probes.processes.set(100, { kill: 'ok' });
    probes.processes.set(200, { kill: 'ok' });
    engine.start();
    one.setSessions([session('one', 'a', 100)]);
    two.setSessions([session('two', 'b', 200)]);
    await clock.advance(100);
    expect(ids(engine)).toEqual(['session:a', 'session:b']);
    two.setSessions([session('two', 'b', 200), session('two', 'c', 200)]);
    await clock.advance(100);
    expect(ids(engine)).toEqual(['session:a', 'session:b', 'session:c']);
  });

  it('a claim arriving alone (the sessions list the same object) shows; so does a session arriving alone', async () => {
    const { clock, probes, sources, engine } = setupSources(() => [new HandSource('hand')]);
    const hand = sources[0] as HandSource;
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    hand.setSessions([session('hand', 'a', 100)]);
    await clock.advance(100);
    expect(ids(engine)).toEqual(['session:a']);
    hand.setClaims([{ source: 'hand', resource: 'src/app.ts', holder: 'a', machine: HOST, pid: 100 }]);
    await clock.advance(100);
    expect(ids(engine)).toEqual(['session:a', 'claim:src/app.ts']);
    hand.setSessions([session('hand', 'a', 100), session('hand', 'b', 100)]);
    await clock.advance(100);
    expect(ids(engine)).toEqual(['session:a', 'session:b', 'claim:src/app.ts']);
  });
});

describe('engine: time and work', () => {
  it('the minute re-check recomputes once and publishes nothing when nothing shows; nothing else runs in between', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    const source = sources[0] as FakeSource;
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 600_000 });
    engine.start();
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(1_000);
    expect(engine.getSnapshot().settled).toBe(true);
    const version = engine.getSnapshot().version;
    const recomputes = engine.stats().recomputes;
    let told = 0;
    onCleanup(engine.subscribe(() => told++));
    // Every probe keeps finding the same: no recompute until the minute tick.
    await clock.advanceTo(59_999);
    expect(engine.stats().recomputes).toBe(recomputes);
    await clock.advanceTo(60_100);
    expect(engine.stats().recomputes).toBe(recomputes + 1);
    expect(engine.stats().publishes).toBe(version);
    expect(engine.getSnapshot().version).toBe(version);
    expect(told).toBe(0);
  });

  it('an entry whose TTL timer was armed leaving costs one recompute, and no wake-up is left behind', async () => {
    const ttl = 10_000;
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)], { pendingTtlMs: ttl, intervalScale: 1000 });
    const source = sources[0] as FakeSource;
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    source.set([FakeSource.session('pending-100', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(clock.timeouts()).toContain(ttl + 1);
    const before = engine.stats().recomputes;
    source.set([]);
    await clock.advance(100);
    expect(engine.stats().recomputes - before).toBe(1);
    await clock.advanceTo(ttl + 5_000);
    expect(engine.stats().recomputes - before).toBe(1);
    expect(engine.getSnapshot().findings).toEqual([]);
  });
});

describe('engine: listeners, waiters, stop', () => {
  it('stop() with a TTL crossing armed clears that timer too', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)], { pendingTtlMs: 10_000, intervalScale: 1000 });
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    (sources[0] as FakeSource).set([FakeSource.session('pending-100', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(clock.timeouts()).toContain(10_001);
    await engine.stop();
    expect(clock.armed).toBe(0);
  });

  it('an unsubscribed listener is told nothing more', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    const source = sources[0] as FakeSource;
    probes.processes.set(100, { kill: 'ok' });
    let a = 0;
    let b = 0;
    const offA = engine.subscribe(() => a++);
    onCleanup(engine.subscribe(() => b++));
    engine.start();
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(a).toBeGreaterThan(0);
    expect(a).toBe(b);
    offA();
    source.set([FakeSource.session('a', { machine: HOST, pid: 100 }), FakeSource.session('b', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(b).toBeGreaterThan(a);
    const told = a;
    source.set([]);
    await clock.advance(100);
    expect(a).toBe(told);
  });

  it('stop() answers every settled() waiter at once, with the last snapshot', async () => {
    const { clock, engine } = setupSources((c) => [new FakeSource(c)]);
    engine.start();
    await clock.advance(100);
    let answer: unknown;
    const waiting = engine.settled(60_000).then((s) => (answer = s));
    await clock.advance(100);
    expect(answer).toBeUndefined();
    await engine.stop();
    await waiting;
    expect(answer).toBe(engine.getSnapshot());
    expect(engine.getSnapshot().settled).toBe(false);
    expect(clock.t).toBe(200);
  });

  it('settled() on a settled engine answers at once, without a timer', async () => {
    const { clock, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    engine.start();
    (sources[0] as FakeSource).set([]);
    await clock.advance(100);
    expect(engine.getSnapshot().settled).toBe(true);
    const armed = clock.timeouts();
    const snap = await engine.settled(60_000);
    expect(snap).toBe(engine.getSnapshot());
    expect(clock.timeouts()).toEqual(armed);
  });

  it('an engine stopped before it was started stops cleanly, and cannot be started after', async () => {
    const { clock, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    await engine.stop();
    engine.start();
    expect(clock.armed).toBe(0);
    (sources[0] as FakeSource).set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(1_000);
    expect(engine.getSnapshot().version).toBe(0);
    expect(engine.stats().recomputes).toBe(0);
  });
});

describe('engine: panes', () => {
  const PANE: TmuxPane = { pid: 900, target: 'work:1.0', id: '%3' };

  /** tmux that can list panes but has no way to switch to one. */
  class ListOnlyTmux extends FakeProbes {
    async findPanes(pids: readonly number[]): Promise<PaneLookup> {
      return { available: true, panes: [PANE], byPid: new Map(pids.filter((p) => p === 100).map((p) => [p, PANE])) };
    }
  }

  it('`o` for a pid in a known pane, from a provider that cannot switch panes, says so', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)], {}, (c) => new ListOnlyTmux(c));
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    (sources[0] as FakeSource).set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(1_100);
    expect(engine.getSnapshot().panes?.get(100)).toEqual(PANE);
    await expect(engine.jumpToPane(100)).resolves.toEqual({ ok: false, text: 'tmux panes cannot be switched to from here' });
  });
});

describe('engine: the snapshot before start, settling, problems told, last checks', () => {
  it('before start: version 0, not settled, no rows, computed at construction, the table pending and no notices', () => {
    const { clock, engine } = setupSources((c) => [new FakeSource(c)]);
    const snap = engine.getSnapshot();
    expect(snap).toMatchObject({ findings: [], host: HOST, version: 0, settled: false, computedAt: clock.now(), problems: 0, checking: 0 });
    expect(snap.os).toEqual({ processTable: 'pending', processTableError: undefined, lastProbeAt: undefined });
    expect(snap.panes).toBeUndefined();
    expect(engine.stats()).toEqual({ recomputes: 0, publishes: 0, probes: { kill: 0, full: 0, ports: 0, table: 0 } });
  });

  it('a settled() waiter is answered by the publish that settles, and its timer goes with it', async () => {
    const { clock, sources, engine } = setupSources((c) => [new FakeSource(c)], { intervalScale: 1000 });
    engine.start();
    await clock.advance(100);
    let at: number | undefined;
    void engine.settled(60_000).then((s) => {
      expect(s.settled).toBe(true);
      at = clock.t;
    });
    expect(clock.timeouts()).toContain(60_100);
    await clock.advanceTo(500);
    expect(at).toBeUndefined();
    (sources[0] as FakeSource).set([]);
    await clock.advanceTo(600);
    expect(at).toBe(500);
    expect(clock.timeouts()).not.toContain(60_100);
  });

  class TellingSource extends FakeSource {
    readonly told: boolean[] = [];
    showProblems(shown: boolean): void {
      this.told.push(shown);
    }
  }

  it('a source that asks is told whether a problem of its own is shown, on change only', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new TellingSource(c, 'fake'), new TellingSource(c, 'other'), new FakeSource(c, 'plain')]);
    const [mine, other] = sources as [TellingSource, TellingSource];
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    mine.set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(mine.told).toEqual([false]);
    expect(other.told).toEqual([false]);
    // Pid 100 dies: a ghost of `fake`, none of `other`.
    probes.processes.delete(100);
    await clock.advanceTo(2_000);
    expect(engine.getSnapshot().findings.map((f) => [f.source, f.verdict])).toEqual([['fake', 'ghost']]);
    expect(mine.told).toEqual([false, true]);
    expect(other.told).toEqual([false]);
    await clock.advanceTo(70_000); // recomputes with the ghost still shown: not told again
    expect(mine.told).toEqual([false, true]);
    mine.set([]);
    await clock.advance(100);
    expect(mine.told).toEqual([false, true, false]);
    expect(other.told).toEqual([false]);
  });

  it('a pid-less entry on a port is last checked when the pid serving that port was', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    probes.processes.set(500, { kill: 'ok', startedAt: clock.now() - 60_000 });
    probes.openPorts.set(7002, [500]);
    engine.start();
    (sources[0] as FakeSource).set([FakeSource.session('p1', { machine: HOST, port: 7002 })]);
    await clock.advanceTo(61_000);
    const f = engine.getSnapshot().findings.find((x) => x.id === 'p1')!;
    expect(f.verdict).toBe('live');
    // The port was last probed at 60 s; its owner by the kill tick at 61 s.
    expect(engine.lastChecked(f)).toBe(clock.wallStart + 61_000);
  });
});

describe('engine: our evictions in the events', () => {
  /** A fake registry whose answer to an eviction is scripted, with a hook when one is sent. */
  class AnsweringSource extends FakeSource {
    answer: Awaited<ReturnType<Source['evict']>> = { outcome: 'evicted' };
    onSend: (() => void) | undefined;
    /** When set, the answer waits for this. */
    gate: Promise<void> | undefined;
    readonly log: string[] = [];
    override async evict(action: Parameters<Source['evict']>[0]): ReturnType<Source['evict']> {
      this.evicted.push(action);
      this.onSend?.();
      await this.gate;
      this.log.push('answered');
      return this.answer;
    }
    override async stop(): Promise<void> {
      this.log.push('stopped');
    }
  }

  const texts = (engine: ReturnType<typeof createEngine>) => (engine.getSnapshot().events ?? []).map((e) => `${e.kind}:${e.id ?? ''}`);

  async function withGhost() {
    const env = setupSources((c) => [new AnsweringSource(c)]);
    const source = env.sources[0] as AnsweringSource;
    env.engine.start();
    source.set([FakeSource.session('g1', { machine: HOST, pid: 300 })]);
    await env.clock.advance(100);
    const ghost = env.engine.getSnapshot().findings.find((f) => f.id === 'g1')!;
    expect(ghost.verdict).toBe('ghost');
    return { ...env, source, ghost };
  }

  it('an eviction is told at once, before the registry’s list says the row is gone', async () => {
    const { clock, source, engine, ghost } = await withGhost();
    const version = engine.getSnapshot().version;
    await engine.evict({ selection: [ghost], force: false });
    await clock.advance(100);
    expect(engine.getSnapshot().version).toBe(version + 1);
    expect(texts(engine).at(-1)).toBe('evicted:g1');
    // The registry's list catches up: the row leaving is ours, not told again.
    source.set([]);
    await clock.advance(100);
    expect(texts(engine).slice(1)).toEqual(['evicted:g1']);
  });

  it('a refused eviction’s row leaving later is told as it left', async () => {
    const { clock, source, engine, ghost } = await withGhost();
    source.answer = { outcome: 'refused', error: 'not yours' };
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]?.outcome).toBe('refused');
    source.set([]);
    await clock.advance(100);
    expect(texts(engine).slice(1)).toEqual(['left:g1']);
  });

  it('an evicted row that comes back and leaves again is told leaving the second time', async () => {
    const { clock, source, engine, ghost } = await withGhost();
    await engine.evict({ selection: [ghost], force: false });
    source.set([]);
    await clock.advance(100);
    source.set([FakeSource.session('g1', { machine: HOST, pid: 300 })]);
    await clock.advance(100);
    source.set([]);
    await clock.advance(100);
    expect(texts(engine).slice(1)).toEqual(['evicted:g1', 'joined:g1', 'left:g1']);
  });

  it('an eviction answered while the engine stops is not told, and leaves no timer behind', async () => {
    const { clock, source, engine, ghost } = await withGhost();
    const events = texts(engine);
    let stopping: Promise<void> | undefined;
    source.onSend = () => {
      stopping = engine.stop();
    };
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]?.outcome).toBe('evicted');
    await stopping;
    expect(clock.armed).toBe(0);
    expect(texts(engine)).toEqual(events);
  });

  it('stop() during an eviction lets the registry answer before it closes the source', async () => {
    const { source, engine, ghost } = await withGhost();
    let answer!: () => void;
    source.gate = new Promise<void>((resolve) => (answer = resolve));
    let stopped = false;
    const sent = new Promise<void>((resolve) => {
      source.onSend = () => {
        void engine.stop().then(() => (stopped = true));
        resolve();
      };
    });
    const evicting = engine.evict({ selection: [ghost], force: false });
    await sent;
    await settle();
    expect(stopped).toBe(false);
    expect(source.log).toEqual([]);
    answer();
    await evicting;
    await settle();
    expect(stopped).toBe(true);
    expect(source.log).toEqual(['answered', 'stopped']);
  });
});

describe('engine: options', () => {
  it('an entry on one of the host’s aliases is judged here; one on another machine is remote and never probed', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)], { hostAliases: ['fakehost.lan', '10.9.8.7'] });
    engine.start();
    (sources[0] as FakeSource).set([
      FakeSource.session('alias', { machine: 'fakehost.lan', pid: 300 }),
      FakeSource.session('ip', { machine: '10.9.8.7', pid: 301 }),
      FakeSource.session('far', { machine: 'elsewhere', pid: 302 }),
    ]);
    await clock.advance(100);
    const verdicts = Object.fromEntries(engine.getSnapshot().findings.map((f) => [f.id, f.verdict]));
    expect(verdicts).toEqual({ alias: 'ghost', ip: 'ghost', far: 'remote' });
    expect(probes.of('full').flatMap((c) => c.items).sort()).toEqual([300, 301]);
  });

  it('the wall clock given is the one snapshots are computed at and facts stamped with', async () => {
    const wall = Date.UTC(2030, 5, 1);
    const clockRef: { c?: FakeClock } = {};
    const { clock, probes, sources, engine } = setupSources(
      (c) => {
        clockRef.c = c;
        return [new FakeSource(c)];
      },
      { now: () => wall + clockRef.c!.t },
    );
    probes.processes.set(100, { kill: 'ok' });
    expect(engine.getSnapshot().computedAt).toBe(wall);
    engine.start();
    (sources[0] as FakeSource).set([FakeSource.session('a', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(300);
    const snap = engine.getSnapshot();
    expect(snap.computedAt).toBeGreaterThan(wall);
    expect(snap.computedAt).toBeLessThanOrEqual(wall + 300);
    expect(snap.findings[0]?.evidence.checkedAt).toBe(wall);
  });
});

describe('engine: no sources, first status, stop twice, fresh facts, last checks', () => {
  it('an engine with no source settles with no rows', async () => {
    const { clock, engine } = setupSources(() => []);
    engine.start();
    await clock.advance(100);
    expect(engine.getSnapshot()).toMatchObject({ findings: [], sources: [], settled: true });
  });

  it('a source already connected before start is shown as it is, not as connecting', () => {
    const { engine } = setupSources(() => [new HandSource('hand')]);
    expect(engine.getSnapshot().sources.map((s) => s.status)).toEqual(['connected']);
  });

  it('stop() twice stops each source once', async () => {
    let stops = 0;
    class CountingSource extends HandSource {
      override async stop(): Promise<void> {
        stops++;
      }
    }
    const { engine } = setupSources(() => [new CountingSource('hand')]);
    engine.start();
    await engine.stop();
    await engine.stop();
    expect(stops).toBe(1);
  });

  it('what the eviction re-check finds is shown at once: a ghost alive again turns live without a tick', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)], { intervalScale: 1000 });
    engine.start();
    (sources[0] as FakeSource).set([FakeSource.session('g1', { machine: HOST, pid: 300 })]);
    await clock.advance(100);
    const ghost = engine.getSnapshot().findings[0]!;
    expect(ghost.verdict).toBe('ghost');
    probes.processes.set(300, { kill: 'ok', startedAt: clock.now() - 60_000 });
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]?.outcome).toBe('skipped');
    await clock.advance(100);
    expect(engine.getSnapshot().findings[0]?.verdict).toBe('live');
  });

  it('a remote entry has no check of ours even when its pid number is one watched here; a local entry with neither pid nor port has none', async () => {
    const { clock, probes, sources, engine } = setupSources((c) => [new FakeSource(c)]);
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    (sources[0] as FakeSource).set([
      FakeSource.session('here', { machine: HOST, pid: 100 }),
      FakeSource.session('there', { machine: 'elsewhere', pid: 100 }),
      FakeSource.session('bare', { machine: HOST }),
    ]);
    await clock.advance(1_000);
    const by = (id: string) => engine.getSnapshot().findings.find((f) => f.id === id)!;
    expect(engine.lastChecked(by('here'))).toBe(clock.now());
    expect(engine.lastChecked(by('there'))).toBeUndefined();
    expect(engine.lastChecked(by('bare'))).toBeUndefined();
  });
});

describe('engine: the audit log check', () => {
  it('a warning that arrives after stop() is not taken, and arms nothing', async () => {
    const dir = tempDir();
    const path = join(dir, 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent"}\n', { mode: 0o644 });
    chmodSync(path, 0o644);
    const { clock, engine } = setupSources((c) => [new FakeSource(c)], { auditLogPath: path });
    engine.start();
    await engine.stop();
    // The check reads the real file system: give it real time (the engine's clock stands still).
    await new Promise((r) => setTimeout(r, 200));
    expect(clock.armed).toBe(0);
    expect(engine.getSnapshot().os.notices).toBeUndefined();
  });
});

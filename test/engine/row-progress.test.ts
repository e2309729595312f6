// What the engine knows beyond reconcile, carried to the rows: an entry whose process has not had
// its first probe is `checking` (never flashed `unverified`), and a problem whose process is gone
// says since when the OS has said so (the first probe that found it gone, kept while it stays gone).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, type LiveEngine } from '../../src/engine/index.js';
import { checkingOf, deadSinceOf, goneAtFirstProbeOf } from '../../src/engine/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { FAKE_HOST as HOST, fakeEngine } from './fake-engine.js';
import { tempDir } from './helpers.js';

const row = (engine: LiveEngine, id: string) => engine.getSnapshot().findings.find((f) => f.id === id);

describe('rows before their first probe', () => {
  it('the sources are "connecting" before start, not "stopped"', async () => {
    // The real sources say "stopped" until started.
    const { HypivisorSource } = await import('../../src/sources/hypivisor/index.js');
    const real = new HypivisorSource({ url: 'ws://127.0.0.1:1/ws' });
    expect(real.snapshot().state.status).toBe('stopped');
    const clock = new FakeClock();
    const engine = createEngine({ sources: [real], hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes: new FakeProbes(clock), clock });
    expect(engine.getSnapshot().sources.map((s) => s.status)).toEqual(['connecting']);
  });

  it('a new entry is checking until its first full probe, then judged; never published as plain unverified', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    const seen: string[] = [];
    engine.subscribe(() => {
      const f = row(engine, 'a1');
      if (f) seen.push(checkingOf(f) ? `checking(${f.verdict})` : f.verdict);
    });
    probes.hold('full');
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(row(engine, 'a1')).toMatchObject({ verdict: 'unverified', checking: true });
    expect(engine.getSnapshot().checking).toBe(1);
    probes.release('full');
    await clock.advance(100);
    expect(checkingOf(row(engine, 'a1')!)).toBe(false);
    expect(row(engine, 'a1')?.verdict).toBe('live');
    expect(engine.getSnapshot().checking).toBe(0);
    expect(seen.filter((v) => v === 'unverified')).toEqual([]);
    expect(seen[0]).toBe('checking(unverified)');

    // A second entry joining later is checking too, while the first stays judged.
    probes.hold('full');
    probes.processes.set(200, { kill: 'ok', startedAt: clock.now() - 1_000 });
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 }), FakeSource.session('b2', { machine: HOST, pid: 200 })]);
    await clock.advance(50);
    expect(checkingOf(row(engine, 'b2')!)).toBe(true);
    expect(checkingOf(row(engine, 'a1')!)).toBe(false);
    probes.release('full');
    await clock.advance(100);
    expect(row(engine, 'b2')?.verdict).toBe('live');
  });

  it('an entry that stays unverified after its probe is no longer "checking"', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    engine.start();
    // No pid, a port whose probe fails: unverified for a reason, not for want of a probe.
    probes.hold('ports');
    source.set([FakeSource.session('p1', { machine: HOST, port: 7001 })]);
    await clock.advance(50);
    expect(checkingOf(row(engine, 'p1')!)).toBe(true);
    probes.release('ports');
    await clock.advance(50);
    expect(checkingOf(row(engine, 'p1')!)).toBe(false);
  });
});

describe('dead since', () => {
  it('a ghost carries the time of the first probe that found its process gone, kept while it stays gone', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advanceTo(1_010);
    expect(deadSinceOf(row(engine, 'a1')!)).toBeUndefined();
    probes.processes.delete(100);
    await clock.advanceTo(1_250);
    expect(row(engine, 'a1')).toMatchObject({ verdict: 'ghost', deadSince: clock.wallStart + 1_250 });
    // Minutes of probes later, it is still the first time.
    await clock.advanceTo(5 * 60_000);
    expect(deadSinceOf(row(engine, 'a1')!)).toBe(clock.wallStart + 1_250);
  });

  it('a process already gone at its first probe is marked so (its end is before deadSince, not at it); one seen alive first is not', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(200, { kill: 'ok' });
    engine.start();
    // 100 was never alive while this engine looked; 200 dies while it looks.
    source.set([FakeSource.session('before', { machine: HOST, pid: 100 }), FakeSource.session('watched', { machine: HOST, pid: 200 })]);
    await clock.advanceTo(1_010);
    probes.processes.delete(200);
    await clock.advanceTo(1_250);
    expect([row(engine, 'before'), row(engine, 'watched')].map((f) => [f?.verdict, goneAtFirstProbeOf(f!)])).toEqual([
      ['ghost', true],
      ['ghost', false],
    ]);
    // Minutes of full probes later (each a new reading of the same death): still so.
    await clock.advanceTo(3 * 60_000);
    expect(goneAtFirstProbeOf(row(engine, 'before')!)).toBe(true);
    expect(goneAtFirstProbeOf(row(engine, 'watched')!)).toBe(false);
  });

  it('a zombie at its first probe, reaped later: still never seen alive here', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok', state: 'Z' });
    engine.start();
    source.set([FakeSource.session('z', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    expect(row(engine, 'z')).toMatchObject({ verdict: 'zombie', goneAtFirstProbe: true });
    probes.processes.delete(100);
    await clock.advanceTo(5_000);
    expect(row(engine, 'z')).toMatchObject({ verdict: 'ghost', goneAtFirstProbe: true });
  });

  it('a live row and a problem whose process lives (reused) carry none', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() + 60_000 });
    engine.start();
    source.set([FakeSource.session('r1', { machine: HOST, pid: 100, registeredAt: clock.now() })]);
    await clock.advance(100);
    expect(row(engine, 'r1')?.verdict).toBe('reused');
    expect(deadSinceOf(row(engine, 'r1')!)).toBeUndefined();
  });
});

describe('claims before the evidence of their verdict', () => {
  it('a claim whose own pid has not had its first probe is checking, never a premature held (a recycled pid: stale at once after)', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    // The holder lives; the claim's own pid is a process started long after the claim was taken.
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 60_000 });
    probes.processes.set(300, { kill: 'ok', startedAt: clock.now() + 3_600_000 });
    const seen: string[] = [];
    engine.subscribe(() => {
      const f = row(engine, 'repo:/w');
      if (f) seen.push(checkingOf(f) ? 'checking' : f.verdict);
    });
    engine.start();
    source.set([FakeSource.session('agent-1', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    probes.hold('full');
    const claim = { source: 'fake', resource: 'repo:/w', holder: 'agent-1', pid: 300, machine: HOST, acquiredAt: clock.now() };
    source.set([FakeSource.session('agent-1', { machine: HOST, pid: 100 })], 'connected', [claim]);
    await clock.advance(50);
    expect(row(engine, 'repo:/w')).toMatchObject({ verdict: 'held', checking: true });
    expect(engine.getSnapshot().checking).toBe(1);
    probes.release('full');
    await clock.advance(100);
    expect(row(engine, 'repo:/w')?.verdict).toBe('stale-claim');
    expect(seen).not.toContain('held');
    expect(seen.at(-1)).toBe('stale-claim');
  });

  it("a claim whose holder is still checking is checking too; judged once the holder is", async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.hold('full');
    engine.start();
    source.set([FakeSource.session('agent-1', { machine: HOST, pid: 100 })], 'connected', [{ source: 'fake', resource: 'lock', holder: 'agent-1' }]);
    await clock.advance(50);
    expect(checkingOf(row(engine, 'agent-1')!)).toBe(true);
    expect(checkingOf(row(engine, 'lock')!)).toBe(true);
    // pid 100 is gone: the holder is a ghost, the claim stale.
    probes.release('full');
    await clock.advance(100);
    expect(row(engine, 'agent-1')?.verdict).toBe('ghost');
    expect(row(engine, 'lock')).toMatchObject({ verdict: 'stale-claim' });
    expect(checkingOf(row(engine, 'lock')!)).toBe(false);
  });
});

describe('when a row was last checked', () => {
  it('a live pid re-checked every tick says so, although its facts (unchanged) keep their first time', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    source.set([FakeSource.session('a1', { machine: HOST, pid: 100 })]);
    await clock.advance(100);
    const first = row(engine, 'a1')!.evidence.checkedAt!;
    await clock.advanceTo(5 * 60_000 + 42_000);
    const f = row(engine, 'a1')!;
    // The evidence is the facts' first reading (nothing changed since) ...
    expect(f.evidence.checkedAt).toBe(first);
    // ... but the OS was asked a moment ago, at the last kill tick (every 250 ms).
    const last = engine.lastChecked(f)!;
    expect(clock.now() - last).toBeLessThan(250);
    expect(last).toBeGreaterThan(first + 5 * 60_000);
  });

  it('a gone pid is checked by the full probe (every 2 s), a port by the port probe', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    engine.start();
    source.set([FakeSource.session('g1', { machine: HOST, pid: 300 }), FakeSource.session('p1', { machine: HOST, port: 7002 })]);
    await clock.advanceTo(60_000);
    for (const id of ['g1', 'p1']) {
      const f = row(engine, id)!;
      expect(f.verdict).toBe('ghost');
      expect(clock.now() - engine.lastChecked(f)!).toBeLessThanOrEqual(2_000);
      expect(clock.now() - f.evidence.checkedAt!).toBeGreaterThan(50_000);
    }
  });

  it('a remote row has no check of ours', async () => {
    const { clock, source, engine } = fakeEngine();
    engine.start();
    source.set([FakeSource.session('r1', { machine: 'elsewhere', pid: 100 })]);
    await clock.advance(100);
    expect(engine.lastChecked(row(engine, 'r1')!)).toBeUndefined();
  });
});

// The OS facts tracker's edges on a hand-driven clock: start() twice arms its timers once; the
// "soon" table scan keeps a second of cadence at every scale; the R key probes everything now and
// reads every row; when each pid and port was last checked, and since when a pid is gone; what is
// known of a pid the tracker does not watch; fresh facts are news only while it runs.
import { afterEach, describe, expect, it } from 'vitest';
import { OsFactsTracker } from '../../src/engine/os-facts.js';
import { FakeClock, settle } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';

const trackers: OsFactsTracker[] = [];
afterEach(async () => {
  for (const t of trackers.splice(0)) await t.stop();
});

function setup(intervalScale = 1) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const changes: number[] = [];
  const tracker = new OsFactsTracker({ intervalScale, probes, clock, now: () => clock.now(), onChange: () => changes.push(clock.t) });
  trackers.push(tracker);
  return { clock, probes, tracker, changes };
}

const targets = (pids: number[], ports: number[] = []) => ({ pids: new Set(pids), ports: new Set(ports) });

describe('OsFactsTracker edges', () => {
  it('start() twice arms its four cadences once', () => {
    const { clock, tracker } = setup();
    tracker.start();
    tracker.start();
    expect(clock.intervals()).toHaveLength(4);
  });

  it('a new pid at scale 2: its row is read two seconds after the last scan', async () => {
    const { clock, probes, tracker } = setup(2);
    tracker.start();
    await clock.advanceTo(300);
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100]));
    await settle();
    expect(clock.timeouts()).toEqual([2_000]);
    await clock.advanceTo(1_999);
    expect(probes.of('table').map((c) => c.t)).toEqual([0]);
    await clock.advanceTo(2_000);
    expect(probes.of('table').at(-1)).toEqual({ kind: 'table', t: 2_000, items: [100] });
  });

  it('a second new pid while a soon-scan is armed does not arm another', async () => {
    const { clock, probes, tracker } = setup();
    tracker.start();
    await clock.advanceTo(300);
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.processes.set(200, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100]));
    await settle();
    tracker.setTargets(targets([100, 200]));
    await settle();
    expect(clock.timeouts()).toEqual([1_000]);
    await clock.advanceTo(1_000);
    expect(probes.of('table').map((c) => [c.t, c.items])).toEqual([
      [0, []],
      [1_000, [100, 200]],
    ]);
  });

  it('the R key: a full probe, every port and a table scan that reads every live row, all now', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.openPorts.set(4000, []);
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    await clock.advanceTo(5_000); // the table tick read pid 100's row
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100 });
    probes.calls.splice(0);
    await clock.advanceTo(5_500);
    await tracker.probeAllNow();
    expect(probes.calls.map((c) => [c.kind, c.t, c.items])).toEqual([
      ['full', 5_500, [100]],
      ['ports', 5_500, [4000]],
      ['table', 5_500, [100]],
    ]);
    expect(tracker.counts.table).toBe(3);
  });

  it('when a pid and a port were last checked; since when a pid is gone', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.openPorts.set(4000, []);
    tracker.setTargets(targets([100, 200], [4000]));
    tracker.start();
    await settle();
    const t0 = clock.wallStart;
    expect(tracker.pidCheckedAt(100)).toBe(t0);
    expect(tracker.deadSince(200)).toBe(t0);
    expect(tracker.deadSince(100)).toBeUndefined();
    expect(tracker.deadSince(999)).toBeUndefined();
    expect(tracker.pidCheckedAt(999)).toBeUndefined();
    expect(tracker.portCheckedAt(999)).toBeUndefined();
    // The fast path off: a kill tick asks about pid 100 (alive) and skips 200 (known gone).
    probes.fastPath = false;
    await clock.advanceTo(250);
    expect(tracker.pidCheckedAt(100)).toBe(t0 + 250);
    expect(tracker.pidCheckedAt(200)).toBe(t0);
    // The full sweep covers both; the port probe its port.
    await clock.advanceTo(2_000);
    expect(tracker.pidCheckedAt(200)).toBe(t0 + 2_000);
    expect(tracker.portCheckedAt(4000)).toBe(t0 + 2_000);
    expect(tracker.deadSince(200)).toBe(t0);
  });

  it('a zombie is dead since the probe that first saw it so', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', state: 'S', startedAt: 5 });
    tracker.setTargets(targets([100]));
    tracker.start();
    await settle();
    expect(tracker.deadSince(100)).toBeUndefined();
    probes.processes.set(100, { kill: 'ok', state: 'Z', startedAt: 5 });
    await clock.advanceTo(2_000);
    expect(tracker.deadSince(100)).toBe(clock.wallStart + 2_000);
    await clock.advanceTo(4_000);
    expect(tracker.deadSince(100)).toBe(clock.wallStart + 2_000);
  });

  it('nothing known of a pid it does not watch; a row without a table falls back to the facts', async () => {
    const { clock, probes, tracker } = setup();
    expect(tracker.processInfo(12345)).toBeUndefined();
    probes.processes.set(100, { kill: 'ok', startedAt: 5, name: 'pi' });
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advanceTo(5_000);
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100, name: 'pi' });
    probes.tableAvailable = false;
    await clock.advanceTo(10_000);
    expect(tracker.state.processTable).toBe('unavailable');
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100, name: 'pi' });
  });

  it('fresh facts from the eviction re-check are news while it runs, ignored before start and after stop', async () => {
    const { clock, tracker, changes } = setup();
    tracker.setTargets(targets([100]));
    const fresh = new Map([[100, { pid: 100, kill: 'ESRCH' as const, checkedAt: clock.now() }]]);
    tracker.applyFresh(fresh, new Map());
    expect(tracker.facts.pids.get(100)).toBeUndefined();
    expect(changes).toEqual([]);
    tracker.start();
    await settle();
    const before = changes.length;
    await clock.advanceTo(100);
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'ok' as const, state: 'S', startedAt: 5, checkedAt: clock.now() }]]), new Map());
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ok' });
    expect(changes.length).toBe(before + 1);
    // Nothing new: no news.
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'ok' as const, state: 'S', startedAt: 5, checkedAt: clock.now() }]]), new Map());
    expect(changes.length).toBe(before + 1);
    await tracker.stop();
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'ESRCH' as const, checkedAt: clock.now() + 1 }]]), new Map());
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ok' });
  });
});

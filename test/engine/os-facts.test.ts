// The OS facts tracker on a hand-driven clock with scripted probes: every cadence at every scale
// to the millisecond, no probe overlapping itself, new pids probed at once, the pids serving
// watched ports watched and dropped, the table refresh, and stop() leaving no timer behind;
// start() twice arms its timers once; the "soon" table scan keeps a second of cadence at every
// scale; the R key probes everything now and reads every row; when each pid and port was last
// checked, and since when a pid is gone; fresh facts are news only while it runs.
import { afterEach, describe, expect, it } from 'vitest';
import { CADENCE, OsFactsTracker, PUSHED_POLL_FACTOR } from '../../src/engine/os-facts.js';
import { TABLE_REFRESH_EVERY } from '../../src/engine/process-rows.js';
import { FakeClock, settle } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';

const trackers: OsFactsTracker[] = [];
afterEach(async () => {
  for (const t of trackers.splice(0)) await t.stop();
});

function setup(intervalScale = 1, pushed = false) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const changes: number[] = [];
  const tracker = new OsFactsTracker({ intervalScale, probes, clock, now: () => clock.now(), onChange: () => changes.push(clock.t), pushed });
  trackers.push(tracker);
  return { clock, probes, tracker, changes };
}

const targets = (pids: number[], ports: number[] = []) => ({ pids: new Set(pids), ports: new Set(ports) });
/** Multiples of `step` in (from, to]. */
const ticks = (step: number, to: number, from = 0): number[] => {
  const out: number[] = [];
  for (let t = from + step; t <= to; t += step) out.push(t);
  return out;
};

describe('OsFactsTracker cadences (fake clock)', () => {
  it.each([1, 0.5, 3])('at intervalScale %s: kill every 250 ms, full and ports every 2 s, table every 5 s, to the ms', async (scale) => {
    const { clock, probes, tracker } = setup(scale);
    probes.processes.set(100, { kill: 'ok', startedAt: 1 });
    probes.openPorts.set(4000, []);
    // The fast path off: every kill tick asks the provider, so each tick is a call to see.
    probes.fastPath = false;
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    expect(clock.intervals()).toEqual([CADENCE.kill, CADENCE.full, CADENCE.ports, CADENCE.table].map((ms) => ms * scale).sort((a, b) => a - b));
    const span = 10_000 * scale;
    await clock.advance(span);
    expect(probes.times('kill')).toEqual(ticks(250 * scale, span));
    // At 0: the urgent first probe of a new pid and port; then the cadence.
    expect(probes.times('full')).toEqual([0, ...ticks(2_000 * scale, span)]);
    expect(probes.times('ports')).toEqual([0, ...ticks(2_000 * scale, span)]);
    // At 0: the one scan up front (an unavailable table is reported from the start).
    expect(probes.times('table')).toEqual([0, ...ticks(5_000 * scale, span)]);
    expect(tracker.counts).toEqual({ kill: 40, full: 6, ports: 6, table: 3 });
  });

  it('a provider that pushes changes (ssh watchers): no kill tick, full and port probes PUSHED_POLL_FACTOR times slower, pushes folded in', async () => {
    const { clock, probes, tracker, changes } = setup(2, true);
    probes.processes.set(100, { kill: 'ok', startedAt: 1 });
    probes.openPorts.set(4000, []);
    probes.fastPath = false;
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    const slow = 2_000 * 2 * PUSHED_POLL_FACTOR;
    expect(clock.intervals()).toEqual([CADENCE.table * 2, slow, slow].sort((a, b) => a - b));
    await clock.advance(slow);
    expect(probes.times('kill')).toEqual([]);
    expect(probes.times('full')).toEqual([0, slow]);
    expect(probes.times('ports')).toEqual([0, slow]);
    // A pushed death is news at once, without any probe.
    const before = changes.length;
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'ESRCH', checkedAt: clock.now() }]]), new Map());
    expect(changes.length).toBe(before + 1);
    expect(tracker.facts.pids.get(100)?.kill).toBe('ESRCH');
  });

  it('no cadence is shorter than 10 ms, whatever the scale', async () => {
    const { clock, tracker } = setup(0.0001);
    tracker.start();
    expect(clock.intervals()).toEqual([10, 10, 10, 10]);
  });

  it('a kill tick skips pids known gone and pids the fast path finds still running', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    probes.processes.set(101, { kill: 'EPERM' });
    tracker.setTargets(targets([100, 101, 102]));
    tracker.start();
    await clock.advance(250);
    // 100: alive and still running (fast path); 102: ESRCH since its first probe; 101: someone else's, asked.
    expect(probes.of('kill').map((c) => c.items)).toEqual([[101]]);
    probes.processes.delete(100);
    await clock.advance(250);
    expect(probes.of('kill').map((c) => c.items)).toEqual([[101], [100, 101]]);
    expect(tracker.facts.pids.get(100)?.kill).toBe('ESRCH');
  });

  it('a kill probe never overlaps itself: ticks during a slow run are no-ops', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    probes.fastPath = false;
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advance(1);
    probes.hold('kill');
    await clock.advanceTo(2_000);
    expect(probes.times('kill')).toEqual([250]);
    probes.release('kill');
    await clock.advanceTo(2_600);
    expect(probes.times('kill')).toEqual([250, 2_250, 2_500]);
    expect(tracker.counts.kill).toBe(3);
  });

  it('full, port and table probes never overlap themselves either', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    probes.openPorts.set(4000, []);
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    await clock.advance(1);
    probes.hold('full');
    probes.hold('ports');
    probes.hold('table');
    await clock.advanceTo(11_000);
    expect(probes.times('full')).toEqual([0, 2_000]);
    expect(probes.times('ports')).toEqual([0, 2_000]);
    expect(probes.times('table')).toEqual([0, 5_000]);
    probes.release('full');
    probes.release('ports');
    probes.release('table');
    await clock.advanceTo(15_000);
    expect(probes.times('full')).toEqual([0, 2_000, 12_000, 14_000]);
    expect(probes.times('table')).toEqual([0, 5_000, 15_000]);
  });
});

describe('OsFactsTracker targets (fake clock)', () => {
  it('a new pid is probed fully at once, and its table row is read a second (of cadence) after the last scan', async () => {
    const { clock, probes, tracker, changes } = setup();
    tracker.start();
    await clock.advanceTo(300);
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100]));
    await settle();
    expect(probes.of('full')).toEqual([{ kind: 'full', t: 300, items: [100] }]);
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ok', state: 'S', startedAt: 5 });
    expect(changes.filter((t) => t > 0)).toEqual([300]);
    // The up-front scan was at 0: the next may come at 1000, not before, not at the 5 s tick.
    expect(clock.timeouts()).toEqual([1_000]);
    await clock.advanceTo(1_000);
    expect(probes.of('table').at(-1)).toEqual({ kind: 'table', t: 1_000, items: [100] });
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100, name: 'agent' });
  });

  it('a pid that reappears alive after an error is probed fully at the kill tick that sees it', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'error' });
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advanceTo(400);
    expect(probes.times('full')).toEqual([0]);
    probes.processes.set(100, { kill: 'ok', startedAt: 9 });
    await clock.advanceTo(500);
    expect(probes.times('full')).toEqual([0, 500]);
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ok', startedAt: 9 });
  });

  it('firstProbesDone waits for every pid and port; onChange says when they complete', async () => {
    const { clock, probes, tracker, changes } = setup();
    probes.processes.set(100, { kill: 'ok' });
    probes.hold('full');
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    await clock.advance(100);
    expect(tracker.firstProbesDone).toBe(false);
    expect(tracker.facts.ports.get(4000)?.result).toBe('refused');
    const before = changes.length;
    probes.release('full');
    await settle();
    expect(tracker.firstProbesDone).toBe(true);
    expect(changes.length).toBe(before + 1);
  });

  it('the first full probe is news even when it only confirms what a kill tick already stored', async () => {
    const { clock, probes, tracker, changes } = setup();
    probes.hold('full');
    tracker.setTargets(targets([100])); // pid 100 is gone
    tracker.start();
    await clock.advanceTo(250);
    expect(tracker.facts.pids.get(100)?.kill).toBe('ESRCH'); // stored by the kill tick
    expect(tracker.firstProbesDone).toBe(false);
    const before = changes.length;
    probes.release('full');
    await settle();
    expect(tracker.firstProbesDone).toBe(true);
    expect(changes.length).toBe(before + 1);
  });

  it('watches the pids that serve watched ports, and forgets them when they stop serving', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(200, { kill: 'ok', startedAt: 3 });
    probes.openPorts.set(4000, [200]);
    tracker.setTargets(targets([], [4000]));
    tracker.start();
    await settle();
    // The owner is probed fully right after the port probe that named it.
    expect(probes.of('full')).toEqual([{ kind: 'full', t: 0, items: [200] }]);
    expect(tracker.facts.pids.get(200)).toMatchObject({ kill: 'ok', startedAt: 3 });
    probes.openPorts.set(4000, []);
    await clock.advanceTo(2_000);
    expect(tracker.facts.ports.get(4000)?.owners).toBeUndefined();
    expect(tracker.facts.pids.has(200)).toBe(false);
    await clock.advanceTo(10_000);
    // Forgotten: no probe of any kind asks about it after the port probe at 2 s.
    expect(probes.calls.filter((c) => c.t > 2_000 && c.items.includes(200))).toEqual([]);
  });

  it('an owner the view also watches stays watched when it stops serving', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(200, { kill: 'ok' });
    probes.openPorts.set(4000, [200]);
    tracker.setTargets(targets([200], [4000]));
    tracker.start();
    await settle();
    probes.openPorts.delete(4000);
    await clock.advanceTo(2_000);
    expect(tracker.facts.ports.get(4000)?.result).toBe('refused');
    expect(tracker.facts.pids.get(200)?.kill).toBe('ok');
  });

  it('dropped targets are forgotten at once', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    await settle();
    tracker.setTargets(targets([], []));
    expect(tracker.facts.pids.size).toBe(0);
    expect(tracker.facts.ports.size).toBe(0);
    await clock.advanceTo(10_000);
    // Nothing tracked: no tick asks anything, not even the table.
    expect(probes.calls.filter((c) => c.t > 0)).toEqual([]);
  });

  it(`reads only rowless pids between table refreshes, and every live pid every ${TABLE_REFRESH_EVERY}th scan`, async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advanceTo(65_000);
    const scans = probes.of('table').map((c) => [c.t, c.items]);
    expect(scans[0]).toEqual([0, []]); // up front, before the pid's first full probe
    expect(scans[1]).toEqual([5_000, [100]]);
    for (let i = 2; i <= TABLE_REFRESH_EVERY; i++) expect(scans[i]).toEqual([i * 5_000, []]);
    expect(scans[TABLE_REFRESH_EVERY + 1]).toEqual([(TABLE_REFRESH_EVERY + 1) * 5_000, [100]]);
  });

  it('an unavailable process table is reported once from the first scan; liveness goes on', async () => {
    const { clock, probes, tracker, changes } = setup();
    probes.tableAvailable = false;
    probes.processes.set(100, { kill: 'ok' });
    tracker.setTargets(targets([100]));
    tracker.start();
    await settle();
    expect(tracker.state).toMatchObject({ processTable: 'unavailable', processTableError: expect.stringMatching(/no \/proc/) });
    const after = changes.length;
    await clock.advanceTo(10_000);
    expect(changes.length).toBe(after);
    expect(tracker.state.lastProbeAt).toBe(clock.now());
  });

  it('applyFresh folds facts read elsewhere and watches the owners they name', async () => {
    const { clock, probes, tracker, changes } = setup();
    probes.processes.set(300, { kill: 'ok' });
    tracker.setTargets(targets([], [4000]));
    tracker.start();
    await settle();
    const before = changes.length;
    tracker.applyFresh(new Map(), new Map([[4000, { port: 4000, result: 'open' as const, checkedAt: clock.now() + 1, owners: [300] }]]));
    expect(changes.length).toBe(before + 1);
    await settle();
    expect(tracker.facts.pids.get(300)?.kill).toBe('ok');
  });

  it('stop() clears every timer it armed; nothing is probed after it', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    tracker.start();
    tracker.setTargets(targets([100]));
    expect(clock.armed).toBe(5); // four cadences and the table-soon timeout
    await tracker.stop();
    expect(clock.armed).toBe(0);
    const calls = probes.calls.length;
    await clock.advance(60_000);
    expect(probes.calls.length).toBe(calls);
  });
});

describe('OsFactsTracker: start twice, the soon scan, the R key, last checks, fresh facts', () => {
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

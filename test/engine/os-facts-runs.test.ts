// The OS facts tracker's runs on a hand-driven clock: the state before any scan, facts stamped
// with the wall clock it is given (not the timer clock), a kill tick with nothing to ask asks
// nothing, results that come back after stop() or for targets dropped meanwhile are not taken,
// the R key waiting for a run in flight and then probing afresh, owners swapped at one port, and
// stable ports and pids costing no onChange.
import { afterEach, describe, expect, it } from 'vitest';
import { OsFactsTracker } from '../../src/engine/os-facts.js';
import { FakeClock, settle } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';

const trackers: OsFactsTracker[] = [];
afterEach(async () => {
  for (const t of trackers.splice(0)) await t.stop();
});

/** The wall clock of the facts runs this far ahead of the timer clock's own `now`. */
const WALL_AHEAD = 7_000_000;

function setup() {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const changes: number[] = [];
  const tracker = new OsFactsTracker({ intervalScale: 1, probes, clock, now: () => clock.now() + WALL_AHEAD, onChange: () => changes.push(clock.t) });
  trackers.push(tracker);
  return { clock, probes, tracker, changes };
}

const targets = (pids: number[], ports: number[] = []) => ({ pids: new Set(pids), ports: new Set(ports) });

/** Tracking pid 100 (alive, started at 5) and port 4000 (served by it), the fast path off, started. */
function startedOnLivePidAndPort(): ReturnType<typeof setup> {
  const made = setup();
  made.probes.processes.set(100, { kill: 'ok', startedAt: 5 });
  made.probes.openPorts.set(4000, [100]);
  made.probes.fastPath = false;
  made.tracker.setTargets(targets([100], [4000]));
  made.tracker.start();
  return made;
}

/** Pid 100 alive (started at 5), the fast path off, started with nothing to track, at 300 ms. */
async function runningBeforeTargets(): Promise<ReturnType<typeof setup>> {
  const made = setup();
  made.probes.processes.set(100, { kill: 'ok', startedAt: 5 });
  made.probes.fastPath = false;
  made.tracker.start();
  await made.clock.advanceTo(300);
  return made;
}

describe('OsFactsTracker: state and stamps', () => {
  it('before any scan the process table is pending and nothing has been probed', () => {
    const { tracker } = setup();
    expect(tracker.state).toEqual({ processTable: 'pending', processTableError: undefined, lastProbeAt: undefined });
    expect(tracker.firstProbesDone).toBe(true);
  });

  it('every probe, urgent or on its cadence, stamps its facts with the wall clock it was given', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.processes.set(101, { kill: 'ok', state: 'S', startedAt: 5 });
    probes.openPorts.set(4000, []);
    tracker.setTargets(targets([100, 101], [4000]));
    tracker.start();
    await settle();
    // The urgent first probes.
    expect(tracker.facts.pids.get(100)?.checkedAt).toBe(clock.wallStart + WALL_AHEAD);
    expect(tracker.facts.ports.get(4000)?.checkedAt).toBe(clock.wallStart + WALL_AHEAD);
    expect(tracker.state.lastProbeAt).toBe(clock.wallStart + WALL_AHEAD);
    // No sweep yet: checked when those first probes ran.
    expect(tracker.pidCheckedAt(100)).toBe(clock.wallStart + WALL_AHEAD);
    expect(tracker.portCheckedAt(4000)).toBe(clock.wallStart + WALL_AHEAD);
    // The cadence: one pid dies, the other turns zombie, the port closes.
    probes.processes.delete(100);
    probes.fastPath = false;
    probes.openPorts.delete(4000);
    probes.processes.set(101, { kill: 'ok', state: 'Z', startedAt: 5 });
    await clock.advanceTo(250);
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ESRCH', checkedAt: clock.wallStart + 250 + WALL_AHEAD });
    await clock.advanceTo(2_000);
    expect(tracker.facts.ports.get(4000)).toMatchObject({ result: 'refused', checkedAt: clock.wallStart + 2_000 + WALL_AHEAD });
    expect(tracker.facts.pids.get(101)).toMatchObject({ state: 'Z', checkedAt: clock.wallStart + 2_000 + WALL_AHEAD });
    expect(tracker.portCheckedAt(4000)).toBe(clock.wallStart + 2_000 + WALL_AHEAD);
    expect(tracker.pidCheckedAt(100)).toBe(clock.wallStart + 2_000 + WALL_AHEAD);
  });
});

describe('OsFactsTracker: runs', () => {
  it('a kill tick with every pid known alive on the fast path asks the provider nothing, but still counts as a sweep', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok' });
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advanceTo(1_000);
    expect(probes.of('kill')).toEqual([]);
    expect(tracker.counts.kill).toBe(4);
    expect(tracker.pidCheckedAt(100)).toBe(clock.wallStart + 1_000 + WALL_AHEAD);
    // The last probe of any kind was that kill tick (the full one ran at 0).
    expect(tracker.state.lastProbeAt).toBe(clock.wallStart + 1_000 + WALL_AHEAD);
  });

  it('with nothing tracked no tick runs at all: nothing counted, no probe time', async () => {
    const { clock, probes, tracker } = setup();
    tracker.start();
    await clock.advanceTo(10_000);
    expect(tracker.counts).toEqual({ kill: 0, full: 0, ports: 0, table: 1 });
    expect(probes.calls.map((c) => c.kind)).toEqual(['table']);
    expect(tracker.state.lastProbeAt).toBeUndefined();
  });

  it.each([
    ['kill', 5_250],
    ['full', 6_000],
    ['ports', 6_000],
    ['table', 10_000],
  ] as const)('a %s result that comes back after stop() is not taken', async (kind, at) => {
    const { clock, probes, tracker, changes } = startedOnLivePidAndPort();
    await clock.advanceTo(5_000);
    probes.hold(kind);
    await clock.advanceTo(at);
    expect(probes.times(kind).at(-1)).toBe(at);
    const counts = { ...tracker.counts };
    const facts = { pid: tracker.facts.pids.get(100), port: tracker.facts.ports.get(4000) };
    const state = tracker.state;
    const told = changes.length;
    // What the held run finds once released: all of it different.
    probes.processes.set(100, { kill: 'ESRCH' });
    probes.openPorts.delete(4000);
    probes.tableAvailable = false;
    const stopped = tracker.stop();
    probes.release(kind);
    await stopped;
    expect(tracker.counts).toEqual(counts);
    expect(tracker.facts.pids.get(100)).toBe(facts.pid);
    expect(tracker.facts.ports.get(4000)).toBe(facts.port);
    expect(tracker.state).toBe(state);
    expect(changes.length).toBe(told);
  });

  it('a kill result for a pid dropped while it was asked is not kept', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.processes.set(101, { kill: 'ok', startedAt: 5 });
    probes.fastPath = false;
    tracker.setTargets(targets([100, 101]));
    tracker.start();
    await settle();
    probes.processes.delete(100);
    probes.processes.delete(101);
    probes.hold('kill');
    await clock.advanceTo(250);
    tracker.setTargets(targets([101]));
    probes.release('kill');
    await settle();
    expect([...tracker.facts.pids.keys()]).toEqual([101]);
    expect(tracker.facts.pids.get(101)?.kill).toBe('ESRCH');
  });

  it('the R key waits for a full probe in flight, then probes afresh', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100]));
    tracker.start();
    await settle();
    probes.hold('full');
    await clock.advanceTo(2_000);
    expect(probes.times('full')).toEqual([0, 2_000]);
    let done = false;
    const r = tracker.probeAllNow().then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    expect(probes.times('full')).toEqual([0, 2_000]);
    probes.release('full');
    await r;
    expect(probes.times('full')).toEqual([0, 2_000, 2_000]);
    expect(tracker.counts.full).toBe(3);
  });

  it.each(['ports', 'table'] as const)('the R key waits for a %s run in flight, then runs afresh', async (kind) => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.openPorts.set(4000, []);
    tracker.setTargets(targets([100], [4000]));
    tracker.start();
    await settle();
    probes.hold(kind);
    const at = kind === 'ports' ? 2_000 : 5_000;
    await clock.advanceTo(at);
    const before = probes.times(kind).length;
    const r = tracker.probeAllNow();
    await settle();
    expect(probes.times(kind).length).toBe(before);
    probes.release(kind);
    await r;
    expect(probes.times(kind).slice(before)).toEqual([at]);
  });
});

describe('OsFactsTracker: owners and quiet', () => {
  it('one of two owners of a port swapped for another: the new one is watched, the old one dropped', async () => {
    const { clock, probes, tracker } = setup();
    for (const pid of [200, 201, 300]) probes.processes.set(pid, { kill: 'ok', startedAt: 3 });
    probes.openPorts.set(4000, [200, 201]);
    tracker.setTargets(targets([], [4000]));
    tracker.start();
    await settle();
    expect([...tracker.facts.pids.keys()].sort()).toEqual([200, 201]);
    probes.openPorts.set(4000, [200, 300]);
    await clock.advanceTo(2_000);
    await settle();
    expect([...tracker.facts.pids.keys()].sort()).toEqual([200, 300]);
    expect(tracker.facts.pids.get(300)).toMatchObject({ kill: 'ok', startedAt: 3 });
  });

  it('stable pids and ports cost no onChange once their first probes are in', async () => {
    const { clock, probes, tracker, changes } = startedOnLivePidAndPort();
    // The first table scan (5 s) attaches the pid's row: news; from then on nothing is.
    await clock.advanceTo(5_100);
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100 });
    const told = changes.length;
    // Past the table refresh that reads every row again (the 12th scan after the first, at 65 s).
    await clock.advanceTo(70_000);
    expect(tracker.counts.ports).toBeGreaterThanOrEqual(10);
    expect(tracker.counts.full).toBeGreaterThanOrEqual(10);
    expect(changes.length).toBe(told);
  });

  it('a row read for a pid whose start time disagrees is still what the table knows of the pid', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5_000 });
    tracker.setTargets(targets([100]));
    tracker.start();
    await clock.advanceTo(4_500);
    // Another process took the pid between the last full probe (4 s) and the scan (5 s).
    probes.processes.set(100, { kill: 'ok', startedAt: 90_000, name: 'other' });
    await clock.advanceTo(5_000);
    expect(probes.of('table').at(-1)).toEqual({ kind: 'table', t: 5_000, items: [100] });
    expect(tracker.facts.pids.get(100)?.process).toBeUndefined();
    expect(tracker.processInfo(100)).toMatchObject({ pid: 100, name: 'other', startedAt: 90_000 });
  });
});

describe('OsFactsTracker: soon scans, restarts, waits', () => {
  it('each new pid gets its soon scan: a second one a while after the first is read a second after that scan', async () => {
    const { clock, probes, tracker } = setup();
    tracker.start();
    await clock.advanceTo(300);
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100]));
    await clock.advanceTo(1_500);
    probes.processes.set(200, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100, 200]));
    await clock.advanceTo(2_500);
    expect(probes.of('table').map((c) => [c.t, c.items])).toEqual([
      [0, []],
      [1_000, [100]],
      [2_000, [200]],
    ]);
  });

  it('the same targets given again arm no scan and probe nothing', async () => {
    const { clock, probes, tracker } = setup();
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    tracker.start();
    await clock.advanceTo(300);
    tracker.setTargets(targets([100], [4000]));
    await clock.advanceTo(1_000);
    const calls = probes.calls.length;
    tracker.setTargets(targets([100], [4000]));
    await settle();
    expect(clock.timeouts()).toEqual([]);
    expect(probes.calls.length).toBe(calls);
  });

  it('stopped and started again, it probes as before: deaths seen, new pids read soon', async () => {
    const { clock, probes, tracker } = await runningBeforeTargets();
    tracker.setTargets(targets([100]));
    await settle();
    expect(clock.timeouts()).toEqual([1_000]);
    await tracker.stop();
    tracker.start();
    probes.processes.delete(100);
    await clock.advanceTo(600);
    expect(tracker.facts.pids.get(100)?.kill).toBe('ESRCH');
    probes.processes.set(200, { kill: 'ok', startedAt: 5 });
    tracker.setTargets(targets([100, 200]));
    await settle();
    expect(tracker.facts.pids.get(200)?.kill).toBe('ok');
    // The restart's own up-front scan was at 300: 200's row is read at 1300.
    await clock.advanceTo(1_300);
    expect(probes.of('table').at(-1)).toEqual({ kind: 'table', t: 1_300, items: [200] });
  });

  it('a kill tick that finds alive a pid still waiting for its first full probe does not queue another', async () => {
    const { clock, probes, tracker } = await runningBeforeTargets();
    probes.hold('full');
    tracker.setTargets(targets([100]));
    await clock.advanceTo(600);
    expect(probes.times('kill')).toEqual([500]);
    probes.release('full');
    await clock.advanceTo(1_900);
    expect(probes.times('full')).toEqual([300]);
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'ok', startedAt: 5 });
  });

  it('a failing probe never makes a pid dead, whatever state it read', async () => {
    const { clock, tracker } = setup();
    tracker.setTargets(targets([100]));
    tracker.start();
    await settle();
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'error' as const, error: 'EIO', state: 'Z', checkedAt: clock.now() + WALL_AHEAD + 1 }]]), new Map());
    expect(tracker.facts.pids.get(100)).toMatchObject({ kill: 'error', state: 'Z' });
    expect(tracker.deadSince(100)).toBeUndefined();
    tracker.applyFresh(new Map([[100, { pid: 100, kill: 'ok' as const, state: 'Z', checkedAt: clock.now() + WALL_AHEAD + 2 }]]), new Map());
    expect(tracker.deadSince(100)).toBe(clock.now() + WALL_AHEAD + 2);
  });

  it('with nothing tracked, tmux is never asked', async () => {
    const clock = new FakeClock();
    const asked: number[][] = [];
    class TmuxProbes extends FakeProbes {
      async findPanes(pids: readonly number[]) {
        asked.push([...pids]);
        return { available: true as const, panes: [], byPid: new Map() };
      }
    }
    const probes = new TmuxProbes(clock);
    probes.processes.set(100, { kill: 'ok' });
    const tracker = new OsFactsTracker({ intervalScale: 1, probes, clock, now: () => clock.now(), onChange: () => {} });
    trackers.push(tracker);
    tracker.start();
    await clock.advanceTo(20_000);
    expect(asked).toEqual([]);
    tracker.setTargets(targets([100]));
    await clock.advanceTo(25_000);
    expect(asked[0]).toEqual([100]);
  });
});

describe('OsFactsTracker: tmux panes', () => {
  const PANE = { pid: 900, target: 'work:1.0', id: '%3' };

  /** tmux that places pid 100 in PANE; lookups can be held until released. */
  class TmuxProbes extends FakeProbes {
    readonly asked: { t: number; pids: number[] }[] = [];
    private paneGate: Promise<void> | undefined;
    private open: (() => void) | undefined;
    constructor(private readonly c: FakeClock) {
      super(c);
    }
    holdPanes(): void {
      this.paneGate = new Promise((resolve) => (this.open = resolve));
    }
    releasePanes(): void {
      this.open?.();
      this.paneGate = undefined;
    }
    async findPanes(pids: readonly number[]) {
      this.asked.push({ t: this.c.t, pids: [...pids] });
      await this.paneGate;
      const byPid = new Map(pids.filter((p) => p === 100 && this.processes.has(p)).map((p) => [p, PANE]));
      return { available: true as const, panes: [PANE], byPid };
    }
  }

  function tmuxSetup() {
    const clock = new FakeClock();
    const probes = new TmuxProbes(clock);
    const changes: number[] = [];
    const tracker = new OsFactsTracker({ intervalScale: 1, probes, clock, now: () => clock.now(), onChange: () => changes.push(clock.t) });
    trackers.push(tracker);
    probes.processes.set(100, { kill: 'ok', startedAt: 5 });
    probes.processes.set(101, { kill: 'ok', startedAt: 5 });
    return { clock, probes, tracker, changes };
  }

  it('the R key looks every live pid up again, placed ones too', async () => {
    const { clock, probes, tracker } = tmuxSetup();
    tracker.start();
    await clock.advanceTo(300);
    tracker.setTargets(targets([100, 101]));
    await clock.advanceTo(5_000);
    expect(probes.asked.map((a) => [a.t, a.pids])).toEqual([
      [1_000, [100, 101]],
      [5_000, []],
    ]);
    expect(tracker.panes.get(100)).toEqual(PANE);
    await tracker.probeAllNow();
    expect(probes.asked.at(-1)).toEqual({ t: 5_000, pids: [100, 101] });
  });

  it('the R key waits for a pane lookup in flight, then looks up afresh', async () => {
    const { clock, probes, tracker } = tmuxSetup();
    tracker.start();
    await clock.advanceTo(300);
    tracker.setTargets(targets([100, 101]));
    await clock.advanceTo(4_000);
    probes.holdPanes();
    await clock.advanceTo(5_000);
    expect(probes.asked).toHaveLength(2);
    const r = tracker.probeAllNow();
    await settle();
    expect(probes.asked).toHaveLength(2);
    probes.releasePanes();
    await r;
    expect(probes.asked.map((a) => a.pids)).toEqual([[100, 101], [], [100, 101]]);
  });

  it('a pane lookup that comes back after stop() is not taken', async () => {
    const { clock, probes, tracker, changes } = tmuxSetup();
    tracker.start();
    await clock.advanceTo(300);
    probes.holdPanes();
    tracker.setTargets(targets([100]));
    await clock.advanceTo(1_000);
    expect(probes.asked.map((a) => a.t)).toEqual([1_000]);
    const told = changes.length;
    const stopped = tracker.stop();
    probes.releasePanes();
    await stopped;
    expect(tracker.panes.size).toBe(0);
    expect(changes.length).toBe(told);
  });
});

// The engine's tmux panes on a hand-driven clock with a scripted provider: one lookup for every
// pid at once (never one per row), new pids looked up soon, a dead agent keeps the pane it ran in
// while that pane exists, no tmux means no panes, and `o` goes through the provider.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TmuxPane } from '../../src/core/tmux.js';
import { createEngine } from '../../src/engine/index.js';
import type { PaneJump, PaneLookup } from '../../src/os/tmux.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

const HOST = 'fakehost';
const WORK: TmuxPane = { pid: 900, target: 'work:2.1', id: '%7' };
const OTHER: TmuxPane = { pid: 901, target: 'other:0.0', id: '%9' };

/** Scripted tmux: the panes that exist, and which pane each live pid runs in. */
class TmuxProbes extends FakeProbes {
  panes: TmuxPane[] = [WORK, OTHER];
  available = true;
  readonly home = new Map<number, TmuxPane>();
  readonly lookups: number[][] = [];
  readonly jumps: TmuxPane[] = [];

  async findPanes(pids: readonly number[]): Promise<PaneLookup> {
    this.lookups.push([...pids]);
    if (!this.available) return { available: false, why: 'tmux is not installed' };
    const byPid = new Map<number, TmuxPane>();
    for (const pid of pids) {
      const pane = this.home.get(pid);
      const live = (this.processes.get(pid)?.kill ?? 'ESRCH') === 'ok';
      if (pane && live && this.panes.some((p) => p.id === pane.id)) byPid.set(pid, pane);
    }
    return { available: true, panes: [...this.panes], byPid };
  }

  async jumpToPane(pane: TmuxPane): Promise<PaneJump> {
    this.jumps.push(pane);
    return { ok: true, text: `switched to tmux pane ${pane.target}` };
  }
}

function setup() {
  const clock = new FakeClock();
  const probes = new TmuxProbes(clock);
  const source = new FakeSource(clock);
  const engine = createEngine({ sources: [source], hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes, clock });
  onCleanup(() => engine.stop());
  for (const pid of [100, 101, 102]) probes.processes.set(pid, { kill: 'ok' });
  probes.home.set(100, WORK);
  probes.home.set(101, OTHER);
  engine.start();
  source.set([100, 101, 102].map((pid) => FakeSource.session(`a${pid}`, { machine: HOST, pid })));
  return { clock, probes, source, engine };
}

const panes = (engine: ReturnType<typeof setup>['engine']) => Object.fromEntries(engine.getSnapshot().panes ?? []);

describe('engine: the tmux pane of each agent', () => {
  it('looks every new pid up in one call, soon, and publishes their panes', async () => {
    const { clock, probes, engine } = setup();
    await clock.advanceTo(1_100);
    expect(probes.lookups).toEqual([[100, 101, 102]]);
    expect(panes(engine)).toEqual({ 100: WORK, 101: OTHER });
    // Found ones (and ones found in no pane) are not walked again at the next cadence...
    await clock.advanceTo(5_100);
    expect(probes.lookups.at(-1)).toEqual([]);
    // ...but every twelfth lookup walks every live pid again.
    await clock.advanceTo(5_000 * 12 + 100);
    expect(probes.lookups.filter((l) => l.length === 3).length).toBe(2);
    expect(probes.lookups.length).toBeLessThanOrEqual(14);
  });

  it('a dead agent keeps the pane it ran in while the pane exists, then loses it', async () => {
    const { clock, probes, engine } = setup();
    await clock.advanceTo(1_100);
    probes.processes.delete(100);
    await clock.advanceTo(5_100);
    expect(engine.getSnapshot().findings.find((f) => f.id === 'a100')?.verdict).toBe('ghost');
    expect(panes(engine)[100]).toEqual(WORK);
    // The window is renumbered: the pane (same id) is shown where it is now.
    probes.panes = [{ ...WORK, target: 'work:3.1' }, OTHER];
    await clock.advanceTo(10_100);
    expect(panes(engine)[100]).toEqual({ ...WORK, target: 'work:3.1' });
    probes.panes = [OTHER];
    await clock.advanceTo(15_100);
    expect(panes(engine)).toEqual({ 101: OTHER });
  });

  it('without tmux there are no panes, and nothing breaks', async () => {
    const { clock, probes, engine } = setup();
    await clock.advanceTo(1_100);
    probes.available = false;
    await clock.advanceTo(5_100);
    expect(engine.getSnapshot().panes).toBeUndefined();
    expect(engine.getSnapshot().findings.map((f) => f.verdict)).toEqual(['live', 'live', 'live']);
  });

  it('o switches through the provider to the pid’s pane, and says when there is none', async () => {
    const { clock, probes, engine } = setup();
    await clock.advanceTo(1_100);
    await expect(engine.jumpToPane(101)).resolves.toEqual({ ok: true, text: 'switched to tmux pane other:0.0' });
    expect(probes.jumps).toEqual([OTHER]);
    await expect(engine.jumpToPane(102)).resolves.toEqual({ ok: false, text: 'pid 102 runs in no tmux pane known here' });
    expect(probes.jumps).toHaveLength(1);
  });
});

// What a dead agent leaves behind, with real process trees: an agent (a real child) starts a dev
// server on a real TCP port and a CPU burner that ignores SIGTERM, and is SIGKILLed. Its children
// are reparented (to init, or to a subreaper) and are its leftovers; K ends them (SIGTERM, then
// SIGKILL for the one that ignores it), each re-verified and audited. A leftover that a live agent
// also started is never listed; another user's process only as root.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Leftover } from '../../src/core/leftovers.js';
import { leftoverTargets } from '../../src/engine/leftover-rows.js';
import { leftoversOf } from '../../src/engine/types.js';
import { leftoverConfirmLines } from '../../src/ui/leftover-dialog.js';
import { describeOn } from '../support/platform.js';
import { alive } from '../support/processes.js';
import { killAndReap, onCleanup, tempDir, until } from './helpers.js';
import { bothLeftoversUnder, learned, leftoverPids, ppidOf, rowOf, session, startAgent, watch } from './leftover-trees.js';

describeOn(['linux'], 'leftovers are read from Linux /proc')('what a dead agent leaves behind', () => {
  it('an agent SIGKILLed leaves its listener (reparented to init) and burner: listed under its ghost row with the port, CPU and memory; nothing while it lived', async () => {
    const a = await startAgent();
    const { engine } = watch([session('agent-1', a.agent)]);
    await learned(engine, 2);
    expect(leftoversOf(rowOf(engine.getSnapshot(), 'agent-1')!)).toBeUndefined();

    process.kill(a.agent, 'SIGKILL');
    await until(() => ppidOf(a.listener) !== a.agent, 5_000, 'the listener reparented');
    const snap = await bothLeftoversUnder(engine, 'agent-1');
    const row = rowOf(snap, 'agent-1')!;
    expect(row.verdict).toBe('ghost');
    const byPid = new Map((leftoversOf(row) ?? []).map((l) => [l.pid, l]));
    expect(leftoverPids(snap, 'agent-1')).toEqual([a.listener, a.burner].sort((x, y) => x - y));
    expect(byPid.get(a.listener)).toMatchObject({ ports: [a.port], agentPid: a.agent, otherUser: false, uid: process.getuid!() });
    expect(byPid.get(a.listener)!.ppid).not.toBe(a.agent);
    expect(byPid.get(a.burner)).toMatchObject({ ports: [], state: expect.stringMatching(/^[RS]$/) });
    for (const l of byPid.values()) {
      expect(l.cmd).toContain(process.execPath);
      expect(l.rssBytes).toBeGreaterThan(0);
      expect(l.cpuPct).toBeGreaterThanOrEqual(0);
      expect(l.startTicks).toBeGreaterThan(0);
    }
    // Told once in the events pane, when first seen.
    const told = (engine.getSnapshot().events ?? []).filter((e) => e.kind === 'leftovers');
    expect(told).toEqual([expect.objectContaining({ id: 'agent-1', rows: 2, detail: expect.stringContaining(`:${a.port}`) })]);
  }, 30_000);

  it('reparented to a subreaper (PR_SET_CHILD_SUBREAPER), they are leftovers too; K ends them: SIGTERM, then SIGKILL for the one that ignores it, each audited before its signal', async () => {
    const a = await startAgent({ subreaper: true });
    const { engine, audit } = watch([session('agent-2', a.agent)], { killGraceMs: 1_000 });
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await until(() => ppidOf(a.listener) === a.holder.pid, 5_000, 'the listener reparented to the subreaper');
    await bothLeftoversUnder(engine, 'agent-2');

    const targets = leftoverTargets([rowOf(engine.getSnapshot(), 'agent-2')!]);
    const summary = await engine.endLeftovers({ selection: targets });
    const outcome = new Map(summary.results.map((r) => [r.target.leftover.pid, r.outcome]));
    expect(outcome).toEqual(new Map([[a.listener, 'ended'], [a.burner, 'killed']]));
    // Gone for good once the subreaper has reaped them (a zombie waits for its parent's wait()).
    await until(() => !alive(a.listener) && !alive(a.burner), 5_000, 'both reaped');
    await until(() => rowOf(engine.getSnapshot(), 'agent-2') && leftoverPids(engine.getSnapshot(), 'agent-2').length === 0, 10_000, 'the row without leftovers');

    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const signals = lines.filter((l) => l.kind === 'intent').map((l) => `${l.action.signal} ${l.action.pid}`);
    expect(signals.sort()).toEqual([`SIGTERM ${a.listener}`, `SIGTERM ${a.burner}`, `SIGKILL ${a.burner}`].sort());
    // Each intent is on disk before its outcome; the burner's SIGTERM was sent, it lived on, then SIGKILL.
    for (const intent of lines.filter((l) => l.kind === 'intent')) {
      const after = lines.slice(lines.indexOf(intent) + 1).filter((l) => l.id === intent.id).map((l) => l.outcome);
      expect(after[0]).toBe('signalled');
      expect(intent.process).toMatchObject({ pid: intent.action.pid, otherUser: false });
      expect(intent.agent).toEqual({ source: 'fake', id: 'agent-2', pid: a.agent });
    }
    const last = (pid: number, signal: string) => lines.filter((l) => l.id === lines.find((x) => x.kind === 'intent' && x.action.pid === pid && x.action.signal === signal)!.id).at(-1)!.outcome;
    expect([last(a.listener, 'SIGTERM'), last(a.burner, 'SIGKILL')]).toEqual(['ended', 'killed']);
  }, 40_000);

  it('a leftover that a live agent also started is never listed: under a live agent (a subreaper that is registered), or learned by it', async () => {
    const a = await startAgent({ subreaper: true });
    const { engine } = watch([session('outer', a.holder.pid!), session('inner', a.agent)]);
    await learned(engine, 3);
    process.kill(a.agent, 'SIGKILL');
    await until(() => ppidOf(a.listener) === a.holder.pid, 5_000, 'the listener reparented to the live outer agent');
    await until(() => rowOf(engine.getSnapshot(), 'inner')?.verdict === 'ghost', 10_000, 'the inner agent a ghost');
    const runs = engine.stats().leftovers!.runs;
    await until(() => engine.stats().leftovers!.runs >= runs + 2, 10_000, 'two more walks');
    expect(leftoversOf(rowOf(engine.getSnapshot(), 'inner')!)).toBeUndefined();
    expect(engine.getSnapshot().departed).toBeUndefined();
  }, 30_000);

  it('out of the live agent\'s tree (reparented to init past a parent that is no subreaper), a process the live agent learned is still never listed', async () => {
    const a = await startAgent({ shell: true });
    const { engine } = watch([session('outer', a.holder.pid!), session('inner', a.agent)]);
    await learned(engine, 3);
    process.kill(a.agent, 'SIGKILL');
    await until(() => ppidOf(a.listener) !== a.agent && ppidOf(a.listener) !== a.holder.pid, 5_000, 'the listener reparented past the live outer agent');
    await until(() => rowOf(engine.getSnapshot(), 'inner')?.verdict === 'ghost', 10_000, 'the inner agent a ghost');
    const runs = engine.stats().leftovers!.runs;
    await until(() => engine.stats().leftovers!.runs >= runs + 2, 10_000, 'two more walks');
    expect(leftoversOf(rowOf(engine.getSnapshot(), 'inner')!)).toBeUndefined();
  }, 30_000);

  it.runIf(process.getuid?.() === 0)("another user's process is listed as such when ghostwatch runs as root, and the dialog says it will be signalled", async () => {
    const a = await startAgent({ nobody: true });
    const { engine } = watch([session('agent-3', a.agent)]);
    await learned(engine, 3);
    process.kill(a.agent, 'SIGKILL');
    const row = await until(() => (leftoverPids(engine.getSnapshot(), 'agent-3').length === 3 ? rowOf(engine.getSnapshot(), 'agent-3') : undefined), 10_000, 'three leftovers');
    const nobody = (leftoversOf(row!) ?? []).find((l) => l.pid === a.nobody) as Leftover;
    expect(nobody).toMatchObject({ uid: 65534, otherUser: true });
    const dialog = leftoverConfirmLines(leftoverTargets([row!]), 5_000, false);
    expect(dialog.head.map((l) => l.text).join('\n')).toMatch(/ghostwatch runs as root: one of them belongs to another user \((nobody|uid 65534)\) and will be signalled too/);
    expect(dialog.list.find((l) => l.text.includes(`pid ${a.nobody} `))!.text).toContain('(another user)');
  }, 30_000);

  it('an agent gone from its registry keeps a row (departed, not a problem, nothing to evict) while its leftovers run', async () => {
    const a = await startAgent();
    const { engine, source } = watch([session('agent-4', a.agent)]);
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await bothLeftoversUnder(engine, 'agent-4');
    source.set([]);
    const snap = await until(() => (engine.getSnapshot().departed?.length ? engine.getSnapshot() : undefined), 10_000, 'the departed row');
    expect(snap.findings.find((f) => f.id === 'agent-4')).toBeUndefined();
    expect(snap.departed![0]).toMatchObject({ id: 'agent-4', source: 'fake', verdict: 'ghost', problem: false, evictable: false, departed: true });
    expect(leftoverPids(snap, 'agent-4')).toEqual([a.listener, a.burner].sort((x, y) => x - y));
    expect(snap.counts.ghost).toBe(0);
    // K on it: its agent is dead (no row names its pid any more), so what it learned is no live agent's.
    const ended = await engine.endLeftovers({ selection: leftoverTargets(snap.departed!), graceMs: 500 });
    expect(ended.counts).toMatchObject({ ended: 1, killed: 1, skipped: 0 });
    await until(() => engine.getSnapshot().departed === undefined, 10_000, 'the departed row gone with its leftovers');
  }, 30_000);
});

describeOn(['linux'], 'pid namespaces and ns_last_pid are Linux')('a leftover whose pid is recycled between the dialog and the signal', () => {
  it.runIf(process.getuid?.() === 0)('is not signalled: the new process on its pid lives on, and the result says the pid is now another process', async () => {
    const dir = tempDir();
    const script = join(import.meta.dirname, '../support/leftover-reuse.mjs');
    // A pid namespace of its own: its ns_last_pid is wound back without touching the machine's other processes.
    const arena = spawn('unshare', ['--fork', '--pid', '--mount-proc', process.execPath, script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    onCleanup(() => killAndReap(arena));
    let out = '';
    arena.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('\n'), 20_000, 'the arena to report');
    const r = JSON.parse(out.split('\n')[0]!) as { error?: string; pid: number; reusedPid: number; listedStart: number; reusedStart: number; results: { outcome: string; detail: string }[]; stillAlive: boolean; audit: string };
    expect(r.error).toBeUndefined();
    expect(r.reusedPid).toBe(r.pid);
    expect(r.reusedStart).not.toBe(r.listedStart);
    expect(r.results).toEqual([{ pid: r.pid, outcome: 'skipped', detail: expect.stringMatching(new RegExp(`^pid ${r.pid} is now another process \\(sleep, started at tick ${r.reusedStart}, not ${r.listedStart}\\): not signalled$`)) }]);
    expect(r.stillAlive).toBe(true);
    // Nothing was about to be sent: no intent in the audit log.
    expect(r.audit).toBe('');
  }, 30_000);
});

// K's checks at the moment of each signal, with real process trees (test/engine/leftover-trees.ts):
// what the dialog listed may be a live agent's by the time the person confirms (the subreaper they
// were reparented to registers as an agent; a live agent learns them, through the zombie agent that
// started them, without being their ancestor); the audit log cannot take the intent line; Esc after
// SIGTERM (and before it); a SIGKILL that does not end the process (a frozen cgroup, root only);
// and an agent that is a zombie (exited, its parent never reaps it) leaving processes behind.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { eventText } from '../../src/core/events.js';
import { leftoverSummaryText } from '../../src/engine/end-leftovers.js';
import { leftoverTargets } from '../../src/engine/leftover-rows.js';
import { leftoversOf } from '../../src/engine/types.js';
import { ancestorsOf } from '../../src/os/process-tree.js';
import { describeOn } from '../support/platform.js';
import { alive } from '../support/processes.js';
import { onCleanup, sleepMs, tempDir, until } from './helpers.js';
import { bothLeftoversUnder, learned, leftoverPids, ppidOf, rowOf, session, startAgent, stateOf, watch } from './leftover-trees.js';

type AuditLine = Record<string, any>;

/** The audit log's lines; none when it was never written. */
function auditLines(path: string): AuditLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditLine);
}

/** Still running: there, and not a zombie. */
const running = (pid: number): boolean => alive(pid) && stateOf(pid) !== 'Z';

/** Whether a TCP connect to 127.0.0.1:port is accepted. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const byPid = (results: readonly { target: { leftover: { pid: number } }; outcome: string; detail?: string | undefined }[]) =>
  new Map(results.map((r) => [r.target.leftover.pid, { outcome: r.outcome, detail: r.detail }]));

describeOn(['linux'], 'leftovers are read from Linux /proc')('K re-checks each leftover right before its signal', () => {
  it('one that now runs under a live agent (the subreaper it was reparented to registered after the dialog listed it) is not signalled, and nothing is audited', async () => {
    const a = await startAgent({ subreaper: true });
    const outer = a.holder.pid!;
    const { engine, source, audit } = watch([session('inner', a.agent)], { killGraceMs: 500 });
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await until(() => ppidOf(a.listener) === outer && ppidOf(a.burner) === outer, 5_000, 'both reparented to the subreaper');
    await bothLeftoversUnder(engine, 'inner');
    // The list as the K dialog showed it.
    const targets = leftoverTargets([rowOf(engine.getSnapshot(), 'inner')!]);
    expect(targets.map((t) => t.leftover.pid).sort((x, y) => x - y)).toEqual([a.listener, a.burner].sort((x, y) => x - y));

    // Before the person confirms, the subreaper they run under registers as an agent of its own.
    source.set([session('inner', a.agent), session('outer', outer)]);
    await until(() => rowOf(engine.getSnapshot(), 'outer')?.verdict === 'live', 10_000, 'the outer agent live');
    const summary = await engine.endLeftovers({ selection: targets });

    expect(byPid(summary.results)).toEqual(
      new Map([a.listener, a.burner].map((pid) => [pid, { outcome: 'skipped', detail: `pid ${pid} now runs under the live agent pid ${outer}: not signalled` }])),
    );
    expect(summary.counts).toMatchObject({ ended: 0, killed: 0, skipped: 2 });
    // Nothing was about to be sent: no intent line; and both live on, the listener still serving.
    expect(auditLines(audit).filter((l) => l.kind === 'intent')).toEqual([]);
    await sleepMs(700);
    expect([running(a.listener), running(a.burner), await answers(a.port)]).toEqual([true, true, true]);
    // And the list drops them: the live agent's walk finds them under it now (reparented since first seen).
    await until(() => leftoverPids(engine.getSnapshot(), 'inner').length === 0, 15_000, () => `no longer listed under the dead agent: ${leftoverPids(engine.getSnapshot(), 'inner').join(', ')}`);
  }, 40_000);

  it('one a live agent learned after the dialog listed it (through the zombie agent it was started by), not its descendant, is not signalled: "started by a live agent too"', async () => {
    // sh (outer, registered later) → a parent that never reaps → the agent → its listener and burner.
    const a = await startAgent({ neverReapedUnderShell: true });
    const outer = a.holder.pid!;
    const { engine, source, audit } = watch([session('inner', a.agent)], { killGraceMs: 500 });
    await learned(engine, 2);
    // The agent dies and stays a zombie: its children are reparented (out of the sh's tree), but the
    // processes the agent started are still found below it, as they were first seen.
    process.kill(a.agent, 'SIGKILL');
    await until(() => stateOf(a.agent) === 'Z' && ppidOf(a.listener) !== a.agent && ppidOf(a.burner) !== a.agent, 5_000, 'the agent a zombie, its children reparented');
    await bothLeftoversUnder(engine, 'inner', 'the leftovers under the zombie');
    const targets = leftoverTargets([rowOf(engine.getSnapshot(), 'inner')!]);
    expect(targets).toHaveLength(2);

    // Before the confirm, the sh registers as an agent and learns them (so they are no longer listed).
    source.set([session('inner', a.agent), session('outer', outer)]);
    await until(() => rowOf(engine.getSnapshot(), 'outer')?.verdict === 'live' && leftoverPids(engine.getSnapshot(), 'inner').length === 0, 10_000, 'the outer agent to learn them');
    // They do not run under it: only the check of what live agents learned stands between them and K.
    for (const pid of [a.listener, a.burner]) expect(ancestorsOf(pid)).not.toContain(outer);

    const summary = await engine.endLeftovers({ selection: targets });
    expect(byPid(summary.results)).toEqual(new Map([a.listener, a.burner].map((pid) => [pid, { outcome: 'skipped', detail: `pid ${pid} was started by a live agent too: not signalled` }])));
    expect(auditLines(audit).filter((l) => l.kind === 'intent')).toEqual([]);
    await sleepMs(700);
    expect([running(a.listener), running(a.burner), await answers(a.port)]).toEqual([true, true, true]);
  }, 40_000);

  it('no signal is sent when the intent line cannot be written (the audit log path is a directory): each fails, says why, and lives on', async () => {
    const a = await startAgent();
    const auditPath = tempDir();
    const { engine } = watch([session('agent-a', a.agent)], { auditLogPath: auditPath, killGraceMs: 500 });
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await bothLeftoversUnder(engine, 'agent-a');
    const targets = leftoverTargets([rowOf(engine.getSnapshot(), 'agent-a')!]);

    const summary = await engine.endLeftovers({ selection: targets });
    const why = `cannot write the audit log (${auditPath}): EISDIR: illegal operation on a directory`;
    for (const pid of [a.listener, a.burner]) {
      const r = byPid(summary.results).get(pid)!;
      expect(r.outcome).toBe('failed');
      expect(r.detail?.startsWith(why)).toBe(true);
      expect(r.detail?.endsWith('; not signalled')).toBe(true);
    }
    expect(summary.counts).toMatchObject({ ended: 0, killed: 0, failed: 2 });
    expect(leftoverSummaryText(summary)).toMatchObject({ tone: 'error', text: expect.stringContaining(`failed: ${why}`) });
    // The listener exits on SIGTERM: had one been sent, it would be gone by now.
    await sleepMs(700);
    expect([running(a.listener), running(a.burner), await answers(a.port)]).toEqual([true, true, true]);
    expect(leftoverPids(engine.getSnapshot(), 'agent-a')).toEqual([a.listener, a.burner].sort((x, y) => x - y));
  }, 30_000);

  it('Esc after SIGTERM, before SIGKILL: the one that ignores SIGTERM gets no SIGKILL (not then, not later), the grace is not waited out, and the result says so', async () => {
    const a = await startAgent();
    const { engine, audit } = watch([session('agent-b', a.agent)]);
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await bothLeftoversUnder(engine, 'agent-b');
    const targets = leftoverTargets([rowOf(engine.getSnapshot(), 'agent-b')!]);
    const burner = targets.filter((t) => t.leftover.pid === a.burner);
    const listener = targets.filter((t) => t.leftover.pid === a.listener);

    const esc = new AbortController();
    const phases: string[] = [];
    const started = performance.now();
    const summary = await engine.endLeftovers({
      selection: burner,
      graceMs: 20_000,
      signal: esc.signal,
      onProgress: (p) => {
        phases.push(p.phase);
        if (p.phase === 'waiting') esc.abort();
      },
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(summary.results).toEqual([{ target: burner[0], outcome: 'skipped', detail: 'cancelled after SIGTERM: still running, no SIGKILL sent' }]);
    expect(phases).toEqual(['term', 'waiting']);
    await sleepMs(1_000);
    expect(running(a.burner)).toBe(true);
    const lines = auditLines(audit);
    const intents = lines.filter((l) => l.kind === 'intent');
    expect(intents.map((l) => `${l.action.signal} ${l.action.pid}`)).toEqual([`SIGTERM ${a.burner}`]);
    expect(lines.filter((l) => l.id === intents[0]!.id).map((l) => l.outcome ?? l.kind)).toEqual(['intent', 'signalled']);

    // Esc before the first SIGTERM: nothing is signalled or audited.
    const before = new AbortController();
    before.abort();
    const none = await engine.endLeftovers({ selection: listener, signal: before.signal });
    expect(none.results).toEqual([{ target: listener[0], outcome: 'skipped', detail: 'cancelled before it was signalled' }]);
    expect(auditLines(audit)).toHaveLength(lines.length);
    expect([running(a.listener), await answers(a.port)]).toEqual([true, true]);
  }, 30_000);

  it('a leftover that SIGKILL does not end (frozen by the cgroup v1 freezer): "SIGKILL sent, and it is still there", audited as failed (needs root and the v1 freezer)', async (ctx) => {
    const needs = freezerRequirement();
    if (needs !== undefined && process.env.CI !== 'true') return ctx.skip(needs);
    if (needs !== undefined) throw new Error(`CI=true and this test ${needs}`);
    const a = await startAgent();
    const { engine, audit } = watch([session('agent-c', a.agent)]);
    await learned(engine, 2);
    process.kill(a.agent, 'SIGKILL');
    await bothLeftoversUnder(engine, 'agent-c');
    const burner = leftoverTargets([rowOf(engine.getSnapshot(), 'agent-c')!]).filter((t) => t.leftover.pid === a.burner);
    const thaw = freeze(a.burner);

    const summary = await engine.endLeftovers({ selection: burner, graceMs: 300 });
    expect(summary.results).toEqual([{ target: burner[0], outcome: 'failed', detail: 'SIGKILL sent, and it is still there (uninterruptible?)' }]);
    expect(leftoverSummaryText(summary).tone).toBe('error');
    expect(stateOf(a.burner)).toBe('D');
    const lines = auditLines(audit);
    const kill = lines.find((l) => l.kind === 'intent' && l.action.signal === 'SIGKILL')!;
    expect(kill.action.pid).toBe(a.burner);
    expect(lines.filter((l) => l.id === kill.id).map((l) => l.outcome ?? l.kind)).toEqual(['intent', 'signalled', 'failed']);
    // Thawed, the pending SIGKILL ends it.
    thaw();
    await until(() => !running(a.burner), 5_000, 'the burner ended once thawed');
  }, 30_000);
});

/** Where a cgroup v1 freezer hierarchy is mounted, from /proc/self/mountinfo (fs type cgroup, option freezer). */
function mountedFreezer(): string | undefined {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [mount, fs] = line.split(' - ');
    const [type, , options] = (fs ?? '').split(' ');
    if (type === 'cgroup' && (options ?? '').split(',').includes('freezer')) return mount!.split(' ')[4];
  }
  return undefined;
}

/**
 * The v1 freezer's mount point: the host's (/sys/fs/cgroup/freezer on a hybrid layout), else one
 * mounted for these tests (root on a cgroup v2 host may still mount the v1 freezer, which v2 does
 * not use), unmounted when the file's tests end.
 */
const FREEZER = ((): string | undefined => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined;
  const found = mountedFreezer();
  if (found !== undefined) return found;
  const dir = mkdtempSync(join(tmpdir(), 'gw-freezer-'));
  try {
    execFileSync('mount', ['-t', 'cgroup', '-o', 'freezer', 'gw-freezer', dir], { stdio: 'ignore' });
    afterAll(() => {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
})();

/** Why a process cannot be frozen here (a cgroup v1 freezer, as root), or undefined. */
function freezerRequirement(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (to freeze a process in a cgroup v1 freezer)';
  if (FREEZER === undefined) return 'needs the cgroup v1 freezer (none mounted, and mounting one failed)';
  return undefined;
}

/** Freezes `pid` in a freezer cgroup of its own; the returned function (also run when the test ends) thaws it and removes the cgroup. */
function freeze(pid: number): () => void {
  const root = FREEZER!;
  const dir = join(root, `gw-test-${process.pid}-${pid}`);
  mkdirSync(dir);
  let done = false;
  const thaw = (): void => {
    if (done) return;
    done = true;
    writeFileSync(join(dir, 'freezer.state'), 'THAWED');
    // Empty once what was in it has ended (or was moved back to the root cgroup).
    for (let i = 0; i < 100; i++) {
      try {
        rmdirSync(dir);
        return;
      } catch {
        try {
          for (const p of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) writeFileSync(join(root, 'cgroup.procs'), p);
        } catch {
          // gone meanwhile
        }
        execFileSync('sleep', ['0.02']);
      }
    }
  };
  onCleanup(thaw);
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  writeFileSync(join(dir, 'freezer.state'), 'FROZEN');
  const state = (): string => readFileSync(join(dir, 'freezer.state'), 'utf8').trim();
  for (let i = 0; i < 200 && state() !== 'FROZEN'; i++) execFileSync('sleep', ['0.01']);
  if (state() !== 'FROZEN') throw new Error(`pid ${pid} did not freeze (${state()})`);
  return thaw;
}

describeOn(['linux'], 'leftovers are read from Linux /proc')('an agent that is a zombie (exited, its parent never reaps it)', () => {
  it('its leftovers show under its zombie row and in the events pane; K ends them (a zombie is no live agent)', async () => {
    const a = await startAgent({ neverReaped: true });
    const { engine } = watch([session('agent-z', a.agent)]);
    await learned(engine, 2);
    expect(leftoversOf(rowOf(engine.getSnapshot(), 'agent-z')!)).toBeUndefined();

    process.kill(a.agent, 'SIGKILL');
    await until(() => stateOf(a.agent) === 'Z', 5_000, 'the agent a zombie');
    expect(ppidOf(a.agent)).toBe(a.holder.pid);
    const snap = await bothLeftoversUnder(engine, 'agent-z', 'the leftovers under the zombie');
    const row = rowOf(snap, 'agent-z')!;
    expect(row.verdict).toBe('zombie');
    expect(stateOf(a.agent)).toBe('Z');
    const list = leftoversOf(row)!;
    expect(list.map((l) => l.pid)).toEqual([a.listener, a.burner].sort((x, y) => x - y));
    expect(list.find((l) => l.pid === a.listener)).toMatchObject({ ports: [a.port], agentPid: a.agent, otherUser: false });
    expect(list.find((l) => l.pid === a.burner)).toMatchObject({ ports: [], agentPid: a.agent });

    const told = (engine.getSnapshot().events ?? []).filter((e) => e.kind === 'leftovers');
    expect(told).toEqual([expect.objectContaining({ id: 'agent-z', verdict: 'zombie', rows: 2 })]);
    const which = list.map((l) => `pid ${l.pid} ${l.name}${l.ports && l.ports.length > 0 ? ` :${l.ports.join(',:')}` : ''}`).join(', ');
    expect(eventText(told[0]!)).toBe(`agent-z (fake) is dead and left 2 processes running: ${which}`);

    const ended = await engine.endLeftovers({ selection: leftoverTargets([row]), graceMs: 500 });
    expect(byPid(ended.results)).toEqual(
      new Map([
        [a.listener, { outcome: 'ended', detail: 'gone after SIGTERM' }],
        [a.burner, { outcome: 'killed', detail: 'still running 0.5 s after SIGTERM; gone after SIGKILL' }],
      ]),
    );
  }, 30_000);
});

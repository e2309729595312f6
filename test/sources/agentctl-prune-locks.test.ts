// agentctl as the real v1.9.1 daemon does it (protocols.md §3), against the stand-in that follows
// it, with real processes: every prune's side effects audited and named whatever became of its
// target; several locks on one directory, each its own claim; manual locks judged by the session
// that set them even once agentctl stops listing it; files-only mode agreeing with the daemon; two
// reaps at once (two real processes), each telling what its own request did.
// "Dead" pids are above this machine's pid_max (they can never be recycled into a live process).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClaimFinding, Finding } from '../../src/core/types.js';
import { summaryText } from '../../src/ui/components/status-line.js';
import type { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { agentctlDaemon, agentctlSource } from './agentctl-support.js';
import { engineFor, sleeper, tempDir, until } from '../engine/helpers.js';
import { runCli, reapReport } from '../support/cli.js';
import { zombie } from '../support/processes.js';

const PID_MAX = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
let nextNever = PID_MAX + 100;
/** A pid no process can have here: kill says ESRCH, now and later. */
const neverPid = (): number => nextNever++;

const source = (socketPath: string) => agentctlSource(socketPath, 1_000);

const find = (findings: readonly Finding[], id: string) => findings.find((f) => f.id === id);
const claimsOn = (findings: readonly Finding[], dir: string) => findings.filter((f): f is ClaimFinding => f.kind === 'claim' && f.id === dir);
const auditLines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('agentctl: every prune audited', () => {
  it('a prune sent for a zombie is refused, and what it removed besides is audited with its evidence and reported', async () => {
    const d = await agentctlDaemon();
    const z = (await zombie()).pid;
    const other = neverPid();
    const live = sleeper();
    d.addSession({ id: 'zomb', pid: z });
    d.addSession({ id: 'other', pid: other, cwd: '/work/o' });
    d.addSession({ id: 'live', pid: live.pid });
    d.addLock({ directory: '/work/o', type: 'auto', pid: other, sessionId: 'other' });
    const audit = join(tempDir(), 'evictions.jsonl');
    const engine = engineFor([source(d.socketPath)], { auditLogPath: audit });
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && find(s.findings, 'zomb')?.verdict === 'zombie' && find(s.findings, 'other')?.verdict === 'ghost' && find(s.findings, '/work/o') ? s : undefined;
    }, 8000, 'zombie, ghost and its lock');

    const result = await engine.evict({ selection: [find(snap.findings, 'zomb')!], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'refused', detail: expect.stringMatching(/agentctl kept it.*also removed 2 other/) });
    expect(d.sessions.get('zomb')?.status).toBe('running');
    expect(d.sessions.get('other')?.status).toBe('stopped'); // marked, not deleted
    expect(d.locks).toEqual([]);

    const lines = auditLines(audit);
    expect(lines.map((l) => l.kind)).toEqual(['intent', 'outcome', 'also-removed', 'also-removed']);
    const also = lines.slice(2);
    expect(also.every((l) => l.id === lines[0]!.id)).toBe(true);
    expect(also.find((l) => l.removed === 'session')).toMatchObject({
      removedId: 'other',
      change: 'no longer listed',
      verdict: 'ghost',
      evidence: { kill: 'ESRCH' },
      entry: { id: 'other', pid: other, status: 'running' },
    });
    expect(also.find((l) => l.removed === 'claim')).toMatchObject({ removedId: '/work/o', verdict: 'stale-claim', entry: { directory: '/work/o', pid: other } });

    expect(result.alsoRemoved?.map((a) => [a.kind, a.id, a.selected, a.by.id])).toEqual([
      ['session', 'other', false, 'zomb'],
      ['claim', '/work/o', false, 'zomb'],
    ]);
    expect(summaryText(result).text).toMatch(/also removed 2 not selected \(other, \/work\/o\)/);
  });

  it('a later planned entry the prune already took is reported as removed by it, not "already gone"', async () => {
    const d = await agentctlDaemon();
    const z = (await zombie()).pid;
    d.addSession({ id: 'zomb', pid: z, startedAt: new Date(Date.now() - 60_000).toISOString() });
    d.addSession({ id: 'other', pid: neverPid() });
    const audit = join(tempDir(), 'evictions.jsonl');
    const engine = engineFor([source(d.socketPath)], { auditLogPath: audit });
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && find(s.findings, 'zomb')?.verdict === 'zombie' && find(s.findings, 'other')?.verdict === 'ghost' ? s : undefined;
    }, 8000, 'zombie and ghost');
    const result = await engine.evict({ selection: [find(snap.findings, 'zomb')!, find(snap.findings, 'other')!], force: false });
    expect(result.results.map((r) => [r.finding.id, r.outcome])).toEqual([
      ['zomb', 'refused'],
      ['other', 'evicted'],
    ]);
    expect(result.results[1]!.detail).toMatch(/removed by the request sent for zomb \(no longer listed; audited there as also-removed\)/);
    expect(result.counts['already-gone']).toBe(0);
    expect(d.calls.filter((c) => c === 'session.prune')).toHaveLength(1);
    expect(auditLines(audit).map((l) => l.kind)).toEqual(['intent', 'outcome', 'also-removed']);
    expect(result.alsoRemoved?.map((a) => [a.id, a.selected])).toEqual([['other', true]]);
    expect(summaryText(result).text).not.toMatch(/also removed \d+ not selected/);
  });
});

describe('agentctl: several locks on one directory', () => {
  it('shows each lock; evicting the dead auto-lock is not refused because a manual lock remains', async () => {
    const d = await agentctlDaemon();
    const dead = neverPid();
    d.addLock({ directory: '/work/x', type: 'auto', pid: dead, sessionId: 's-dead' });
    d.addLock({ directory: '/work/x', type: 'manual', lockedBy: 'alice', reason: 'hands off' });
    const src = source(d.socketPath);
    const engine = engineFor([src]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && claimsOn(s.findings, '/work/x').length === 2 ? s : undefined;
    }, 8000, 'two locks on /work/x');
    expect(src.snapshot().state.warnings ?? []).toEqual([]); // nothing "skipped"
    const [auto, manual] = [claimsOn(snap.findings, '/work/x').find((f) => f.entry.pid === dead)!, claimsOn(snap.findings, '/work/x').find((f) => f.entry.pid === undefined)!];
    expect(auto).toMatchObject({ verdict: 'stale-claim' });
    expect(manual).toMatchObject({ verdict: 'held', note: 'unverified' });
    expect(manual.entry.note).toMatch(/manual lock by alice: hands off/);

    const result = await engine.evict({ selection: [auto], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'evicted' });
    expect(d.locks).toEqual([expect.objectContaining({ directory: '/work/x', type: 'manual' })]);
    await until(() => claimsOn(engine.getSnapshot().findings, '/work/x').length === 1, 3000, 'the manual lock alone');
  });

  it('a bulk eviction handles each lock on the directory by its own identity', async () => {
    const d = await agentctlDaemon();
    const live = sleeper();
    const dead = neverPid();
    d.addLock({ directory: '/work/y', type: 'auto', pid: live.pid, sessionId: 's-live' });
    d.addLock({ directory: '/work/y', type: 'auto', pid: dead, sessionId: 's-dead' }); // agentctl lock --force
    d.addLock({ directory: '/work/y', type: 'manual', lockedBy: 'bob' });
    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && claimsOn(s.findings, '/work/y').length === 3 ? s : undefined;
    }, 8000, 'three locks on /work/y');
    const result = await engine.evict({ selection: claimsOn(snap.findings, '/work/y'), force: true });
    const by = (pid: number | undefined) => result.results.find((r) => (r.finding.entry as { pid?: unknown }).pid === pid);
    expect(by(dead)).toMatchObject({ outcome: 'evicted' });
    expect(by(undefined)).toMatchObject({ outcome: 'evicted' });
    expect(by(live.pid)).toMatchObject({ outcome: 'refused', detail: expect.stringMatching(/only auto-locks whose pid it finds dead/) });
    expect(result.results.map((r) => r.detail ?? '').join('\n')).not.toMatch(/is now none|changed/);
    expect(d.locks).toEqual([expect.objectContaining({ type: 'auto', pid: live.pid })]);
  });
});

describe('agentctl: manual locks keep their holder', () => {
  /** A manual lock per setter: a stopped session whose pid is gone, one whose pid lives, a name nothing answers to, a prefix of a session id. */
  async function setters(d: TestAgentctlDaemon): Promise<{ live: number }> {
    const live = sleeper();
    const stoppedAt = new Date().toISOString();
    d.addSession({ id: 'sess-gone', pid: neverPid(), status: 'stopped', stoppedAt });
    d.addSession({ id: 'sess-alive', pid: live.pid, status: 'stopped', stoppedAt });
    d.addLock({ directory: '/work/gone', type: 'manual', lockedBy: 'sess-gone' });
    d.addLock({ directory: '/work/alive', type: 'manual', lockedBy: 'sess-alive' });
    d.addLock({ directory: '/work/nobody', type: 'manual', lockedBy: 'nobody' });
    d.addLock({ directory: '/work/prefix', type: 'manual', lockedBy: 'sess-g' }); // agentctl's session.status matches it by prefix
    return { live: live.pid };
  }

  const verdicts = (findings: readonly Finding[]) =>
    Object.fromEntries(['/work/gone', '/work/alive', '/work/nobody', '/work/prefix'].map((dir) => [dir, `${find(findings, dir)?.verdict} ${find(findings, dir)?.reason}`]));

  it('judges a lock by the stopped session that set it, as files-only mode does', async () => {
    const d = await agentctlDaemon();
    await setters(d);
    const engine = engineFor([source(d.socketPath)]);
    const connected = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && s.sources[0]?.status === 'connected' && find(s.findings, '/work/gone')?.verdict === 'stale-claim' ? s : undefined;
    }, 8000, 'the lock of a stopped, gone session is stale');
    expect(d.calls).toContain('session.status');
    const daemonView = verdicts(connected.findings);
    expect(daemonView['/work/gone']).toMatch(/^stale-claim holder sess-gone/);
    expect(daemonView['/work/alive']).toMatch(/^held held by sess-alive/);
    expect(daemonView['/work/nobody']).toMatch(/^held names no holder/);
    expect(daemonView['/work/prefix']).toMatch(/^held names no holder/);

    // The same files, read with the daemon down: the same verdicts and reasons.
    await d.stop();
    const down = await until(() => {
      const s = engine.getSnapshot();
      return s.sources[0]?.status === 'files-only' && s.settled ? s : undefined;
    }, 8000, 'files-only');
    expect(verdicts(down.findings)).toEqual(daemonView);
  });

  it('a stale manual lock of a stopped session can be reaped while the daemon is up', async () => {
    const d = await agentctlDaemon();
    await setters(d);
    const engine = engineFor([source(d.socketPath)]);
    const lock = await until(() => {
      const f = find(engine.getSnapshot().findings, '/work/gone');
      return f?.verdict === 'stale-claim' ? f : undefined;
    }, 8000, 'stale lock');
    const result = await engine.evict({ selection: [lock], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'evicted' });
    expect(d.calls).toContain('lock.release');
    expect(d.locks.map((l) => l.directory)).not.toContain('/work/gone');
  });
});

describe('agentctl: two reaps at once', () => {
  it('each ghost and stale lock is evicted by one reap, which says so; the other says already gone, claims nothing in the audit log, and neither fails', async () => {
    const d = await agentctlDaemon();
    const ghosts = Array.from({ length: 60 }, (_, i) => `ghost-${i}`);
    for (const id of ghosts) d.addSession({ id, pid: neverPid(), cwd: `/work/${id}` });
    // Manual locks of sessions agentctl stopped (no longer listed): stale, released one by one.
    const locks = ['/work/lock-0', '/work/lock-1', '/work/lock-2'];
    locks.forEach((directory, i) => {
      d.addSession({ id: `setter-${i}`, pid: neverPid(), status: 'stopped', stoppedAt: new Date().toISOString() });
      d.addLock({ directory, type: 'manual', lockedBy: `setter-${i}` });
    });
    // Requests answered (and done) only after a while: the two reaps' requests are under way together.
    d.slow.set('session.prune', 1_000).set('lock.release', 500);
    const state = tempDir();
    const env = { ...process.env, HOME: tempDir(), XDG_STATE_HOME: state, XDG_CONFIG_HOME: tempDir() };
    const reap = () => runCli(['reap', '--yes', '--source', 'agentctl', '--agentctl-socket', d.socketPath], env);
    const runs = await Promise.all([reap(), reap()]);

    for (const run of runs) {
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).not.toMatch(/^(refused|failed|skipped) /m);
    }
    const [a, b] = runs.map((r) => reapReport(r.stdout));
    // Each evicted by exactly one of them; the other, when it had it in its plan, found it already gone.
    for (const id of [...ghosts, ...locks]) {
      const said = [a!.outcomes.get(id), b!.outcomes.get(id)].filter((o) => o !== undefined).sort();
      expect(['evicted', 'already-gone,evicted'], `${id}: ${said.join(',')}`).toContain(said.join(','));
    }
    expect(a!.counts!.evicted + b!.counts!.evicted).toBe(63);
    expect(d.locks).toEqual([]);
    expect(ghosts.every((id) => d.sessions.get(id)?.status === 'stopped')).toBe(true);
    // The audit log (one for both) names each ghost once as removed: by its own prune, or as another's side effect.
    const audit = auditLines(join(state, 'ghostwatch', 'evictions.jsonl'));
    const intents = new Map(audit.filter((l) => l.kind === 'intent').map((l) => [l.id, l]));
    const evictedIds = audit.filter((l) => l.kind === 'outcome' && l.outcome === 'evicted').map((l) => (intents.get(l.id)?.action as { id?: string; resource?: string }));
    const removed = audit.filter((l) => l.kind === 'also-removed').map((l) => l.removedId);
    const named = [...evictedIds.map((x) => x.id ?? x.resource), ...removed].sort();
    expect(named).toEqual([...ghosts, ...locks].sort());
  }, 60_000);
});

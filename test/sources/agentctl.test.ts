// The agentctl adapter against a test daemon built from protocols.md §3 (a real unix socket),
// with real child processes, through the real engine: verdicts, prune and release round trips,
// the audit trail of what prune removed besides, and the daemon dying mid-session.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { agentctlDaemon, agentctlSource } from './agentctl-support.js';
import { deadPid, engineFor, HOST, sleeper, tempDir, until } from '../engine/helpers.js';

const source = (socketPath: string) => agentctlSource(socketPath, 500);

const find = (findings: readonly Finding[], id: string) => findings.find((f) => f.id === id);

describe('agentctl source', () => {
  it('turns sessions and locks into entries and claims with the right verdicts', async () => {
    const d = await agentctlDaemon();
    const live = sleeper();
    const gone = await deadPid();
    d.addSession({ id: 'live-1', pid: live.pid, cwd: '/work/a' }); // registered after its process started
    d.addSession({ id: 'ghost-1', pid: gone, cwd: '/work/b' });
    d.addSession({ id: `pending-${gone}`, pid: gone, status: 'pending' });
    d.addSession({ id: 'done-1', pid: gone, status: 'completed', stoppedAt: new Date().toISOString() });
    d.addLock({ directory: '/work/a', type: 'auto', pid: live.pid, sessionId: 'live-1' });
    d.addLock({ directory: '/work/b', type: 'auto', pid: gone, sessionId: 'ghost-1' });
    d.addLock({ directory: '/work/c', type: 'auto', sessionId: 'ghost-1' }); // before v1.9: no pid, held by its session
    d.addLock({ directory: '/work/d', type: 'manual', lockedBy: 'alice', reason: 'release Friday' });

    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && s.findings.length === 8 ? s : undefined;
    }, 5000, 'eight findings');
    expect(find(snap.findings, 'live-1')?.verdict).toBe('live');
    expect(find(snap.findings, 'ghost-1')?.verdict).toBe('ghost');
    expect(find(snap.findings, `pending-${gone}`)?.verdict).toBe('pending');
    expect(find(snap.findings, 'done-1')).toMatchObject({ verdict: 'offline', problem: false });
    expect(find(snap.findings, '/work/a')?.verdict).toBe('held');
    expect(find(snap.findings, '/work/b')).toMatchObject({ verdict: 'stale-claim', reason: expect.stringMatching(/is gone/) });
    expect(find(snap.findings, '/work/c')).toMatchObject({ verdict: 'stale-claim', holder: 'ghost-1' });
    expect(find(snap.findings, '/work/d')).toMatchObject({ verdict: 'held', note: 'unverified' });
    const state = snap.sources[0]!;
    expect(state).toMatchObject({ name: 'agentctl', status: 'connected', eviction: { available: true } });
    expect(state.eviction?.note).toMatch(/prunes every dead record at once/);
  });

  it('reads a startedAt or lockedAt that is no time as an invalid time: in the evidence, never the reference', async () => {
    const d = await agentctlDaemon();
    const live = sleeper();
    // The last moment a Date can hold: 273,790 years from now.
    d.addSession({ id: 'far-1', pid: live.pid, cwd: '/work/far', startedAt: '+275760-09-13T00:00:00.000Z' });
    d.addLock({ directory: '/work/far', type: 'auto', pid: live.pid, sessionId: 'far-1', lockedAt: 'not a date' });
    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && s.findings.length === 2 ? s : undefined;
    }, 5000, 'two findings');
    const session = find(snap.findings, 'far-1')!;
    expect(session.verdict).toBe('live');
    expect(session.evidence.invalidTimes).toEqual([{ field: 'startedAt', value: '+275760-09-13T00:00:00.000Z' }]);
    expect(session.evidence.start).toMatchObject({ reference: 'first_observed' });
    const lock = find(snap.findings, '/work/far')!;
    expect(lock.verdict).toBe('held');
    expect(lock.evidence.invalidTimes).toEqual([{ field: 'lockedAt', value: 'not a date' }]);
    expect(lock.evidence.start).toBeUndefined();
  });

  it('also reads session.list as {sessions, warnings} (v1.9.1 answers the bare array)', async () => {
    const d = await agentctlDaemon({ wrappedList: true });
    d.addSession({ id: 'old-1', pid: await deadPid() });
    const engine = engineFor([source(d.socketPath)]);
    await until(() => find(engine.getSnapshot().findings, 'old-1')?.verdict === 'ghost', 5000, 'old-1 ghost');
  });

  it('evicts a ghost through session.prune, audits what prune removed besides, never calls session.stop', async () => {
    const d = await agentctlDaemon();
    const live = sleeper();
    const gone = await deadPid();
    d.addSession({ id: 'live-1', pid: live.pid });
    d.addSession({ id: 'ghost-1', pid: gone });
    d.addSession({ id: 'ghost-2', pid: gone });
    const audit = join(tempDir(), 'evictions.jsonl');
    const engine = engineFor([source(d.socketPath)], { auditLogPath: audit });
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.findings.filter((f) => f.verdict === 'ghost').length === 2 ? s : undefined;
    }, 5000, 'two ghosts');

    const result = await engine.evict({ selection: [find(snap.findings, 'ghost-1')!], force: false });
    expect(result.counts.evicted).toBe(1);
    expect(result.results[0]!.detail).toMatch(/pruned 2 records.*also removed 1 other/);
    expect([...d.sessions.values()].map((s) => s.status)).toEqual(['running', 'stopped', 'stopped']); // marked, not deleted
    expect(d.calls).toContain('session.prune');
    expect(d.calls).not.toContain('session.stop');
    const lines = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.kind)).toEqual(['intent', 'outcome', 'also-removed']);
    expect(lines[2]).toMatchObject({ removed: 'session', removedId: 'ghost-2', entry: { id: 'ghost-2', pid: gone } });
    await until(() => engine.getSnapshot().findings.length === 1, 3000, 'view updated');
  });

  it('says "refused" when prune keeps the record (agentctl finds its pid alive)', async () => {
    const d = await agentctlDaemon();
    const live = sleeper();
    d.addSession({ id: 'looks-dead', pid: live.pid });
    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return find(s.findings, 'looks-dead')?.verdict === 'live' ? s : undefined;
    }, 5000, 'live');
    const result = await engine.evict({ selection: [find(snap.findings, 'looks-dead')!], force: true });
    expect(result.results[0]).toMatchObject({ outcome: 'refused', detail: expect.stringMatching(/agentctl kept it/) });
    expect(d.sessions.has('looks-dead')).toBe(true);
  });

  it('releases a manual lock with lock.release (it needs force: nothing proves its setter gone)', async () => {
    const d = await agentctlDaemon();
    d.addLock({ directory: '/work/d', type: 'manual', lockedBy: 'alice' });
    const engine = engineFor([source(d.socketPath)]);
    const lock = await until(() => find(engine.getSnapshot().findings, '/work/d'), 5000, 'lock');
    const noForce = await engine.evict({ selection: [lock], force: false });
    expect(noForce.needsForce).toHaveLength(1);
    const forced = await engine.evict({ selection: [lock], force: true });
    expect(forced.counts.evicted).toBe(1);
    expect(d.calls).toContain('lock.release');
    expect(d.locks).toEqual([]);
  });

  it('falls back to state.json and locks.json when the daemon dies, read-only, and reconnects when it is back', async () => {
    const d = await agentctlDaemon();
    const gone = await deadPid();
    d.addSession({ id: 'ghost-1', pid: gone });
    d.addLock({ directory: '/work/b', type: 'auto', pid: gone });
    const engine = engineFor([source(d.socketPath)]);
    await until(() => engine.getSnapshot().sources[0]?.status === 'connected' && engine.getSnapshot().findings.length === 2, 5000, 'connected');

    await d.stop();
    const down = await until(() => {
      const s = engine.getSnapshot();
      return s.sources[0]?.status === 'files-only' ? s : undefined;
    }, 5000, 'files-only');
    expect(down.sources[0]!.eviction).toMatchObject({ available: false, why: expect.stringMatching(/daemon is not running/) });
    expect(down.sources[0]!.lastError).toMatch(/daemon down/);
    expect(find(down.findings, 'ghost-1')?.verdict).toBe('ghost');
    const tried = await engine.evict({ selection: [find(down.findings, 'ghost-1')!], force: false });
    expect(tried.results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/cannot evict now/) });
    expect(readFileSync(join(d.socketPath, '..', 'state.json'), 'utf8')).toContain('ghost-1'); // never written by us

    await d.start();
    await until(() => engine.getSnapshot().sources[0]?.status === 'connected', 5000, 'reconnected');
    expect(engine.getSnapshot().sources[0]!.eviction?.available).toBe(true);
  });

  it('a malformed state file is a warning naming it; the locks still load', async () => {
    const d = await agentctlDaemon();
    d.addLock({ directory: '/work/b', type: 'manual', lockedBy: 'bob' });
    await d.stop();
    writeFileSync(join(d.socketPath, '..', 'state.json'), '{"sessions": {"a": {"id": "a", "pid": 12');
    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.sources[0]?.status === 'files-only' && s.findings.length === 1 ? s : undefined;
    }, 5000, 'files-only with the lock');
    expect(snap.sources[0]!.warnings?.[0]).toMatch(/state\.json: not valid JSON/);
  });

  it('files-only mode follows no symlink and blocks on no FIFO: each is a warning naming it', async () => {
    const d = await agentctlDaemon();
    d.addLock({ directory: '/work/b', type: 'manual', lockedBy: 'bob' });
    await d.stop();
    const dir = join(d.socketPath, '..');
    const elsewhere = join(tempDir(), 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify({ version: 1, sessions: { planted: { id: 'planted', pid: 4242, status: 'running', startedAt: new Date().toISOString() } } }));
    rmSync(join(dir, 'state.json'), { force: true });
    symlinkSync(elsewhere, join(dir, 'state.json'));
    rmSync(join(dir, 'locks.json'), { force: true });
    execFileSync('mkfifo', [join(dir, 'locks.json')]);
    const engine = engineFor([source(d.socketPath)]);
    const snap = await until(() => {
      const s = engine.getSnapshot();
      return s.sources[0]?.status === 'files-only' && (s.sources[0]?.warnings?.length ?? 0) >= 2 ? s : undefined;
    }, 5000, 'files-only with two warnings');
    expect(snap.findings.map((f) => f.id)).not.toContain('planted');
    expect(snap.sources[0]!.warnings!.join('\n')).toMatch(/state\.json is a symbolic link: not followed/);
    expect(snap.sources[0]!.warnings!.join('\n')).toMatch(/locks\.json is not a regular file/);
  });

  it('a hung daemon times out into one error line; garbage between replies is counted, not fatal', async () => {
    const d = await agentctlDaemon();
    d.addSession({ id: 'a', pid: await deadPid() });
    d.garbage = '\u001b[2J{not json';
    const src = source(d.socketPath);
    const engine = engineFor([src]);
    await until(() => find(engine.getSnapshot().findings, 'a')?.verdict === 'ghost', 5000, 'ghost through garbage');
    expect(src.snapshot().state.counters.invalidJson).toBeGreaterThan(0);
    d.unanswered.add('session.list');
    const stuck = await until(() => {
      const s = engine.getSnapshot().sources[0];
      return s?.status === 'unreachable' ? s : undefined;
    }, 5000, 'timeout reported');
    expect(stuck.lastError).toMatch(/did not answer session\.list within 0\.5 s/);
    expect(find(engine.getSnapshot().findings, 'a')?.verdict).toBe('ghost'); // the last lists stay
  });

  it('a slow daemon gets one poll at a time, and a re-sync does not wait behind a queue', async () => {
    const d = await agentctlDaemon();
    d.addSession({ id: 'a', pid: await deadPid() });
    d.delayMs = 300;
    const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, pollIntervalMs: 20, requestTimeoutMs: 2000 });
    const engine = engineFor([src]);
    await until(() => find(engine.getSnapshot().findings, 'a'), 5000, 'first read');
    await new Promise((r) => setTimeout(r, 1200));
    const t0 = Date.now();
    await src.resync();
    // At most the poll under way plus this one (2 x 300 ms); 60 queued polls would take 18 s.
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('no ~/.agentctl at all is "absent", not an error', async () => {
    const dir = join(tempDir(), 'nope');
    const engine = engineFor([source(join(dir, 'agentctl.sock'))]);
    const s = await until(() => engine.getSnapshot().sources[0]?.status === 'absent' && engine.getSnapshot(), 5000, 'absent');
    expect(s.settled).toBe(true);
  });
});

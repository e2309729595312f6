// A stopped agent (Ctrl-Z in its pane, SIGSTOP) on real /proc: the engine calls it suspended
// (not a problem, not evictable) with since when and the way out, live again once continued, and
// never a ghost, whether the registry keeps its row active or drops its connection.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { startRegistryServer } from '../../src/server/index.js';
import { startPiAgent } from '../support/pi-agent.js';
import { describeOn } from '../support/platform.js';
import { agent, engineFor, finding, killAndReap, onCleanup, serve, sleeper, source, until, verdictOf } from './helpers.js';
import type { LiveEngine } from '../../src/engine/index.js';

/** Every verdict the row had in any published snapshot from now on. */
function verdictsSeen(engine: LiveEngine, id: string): Set<string> {
  const seen = new Set<string>();
  const note = (): void => {
    const v = verdictOf(engine, id);
    if (v !== undefined) seen.add(v);
  };
  note();
  onCleanup(engine.subscribe(note));
  return seen;
}

/** SIGCONT at the end of the test whatever happened, so no stopped child outlives it. */
function stop(pid: number): void {
  process.kill(pid, 'SIGSTOP');
  onCleanup(() => {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone already
    }
  });
}

describeOn(['linux'], 'the process state is read from /proc')('a stopped agent', () => {
  it('turns suspended after SIGSTOP (since when, and the way out), stays so, is live again after SIGCONT, and never a ghost', async () => {
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 'paused', { pid: child.pid });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, 'paused') === 'live', 10_000, 'live');
    const seen = verdictsSeen(engine, 'paused');

    const before = Date.now();
    stop(child.pid);
    await until(() => verdictOf(engine, 'paused') === 'suspended', 10_000, () => `suspended, not ${verdictOf(engine, 'paused')}`);
    const f = finding(engine.getSnapshot(), 'paused')!;
    expect(f).toMatchObject({ problem: false, evictable: false, evidence: { kill: 'ok', state: 'T' } });
    expect(f.reason).toMatch(new RegExp(`^pid ${child.pid} is stopped \\(state T, Ctrl-Z or SIGSTOP\\) since \\d\\d:\\d\\d:\\d\\d: it cannot answer until continued; o jumps to its pane: fg there, or kill -CONT ${child.pid}$`));
    const since = f.evidence.stoppedSince!;
    expect(since).toBeGreaterThanOrEqual(before);
    expect(engine.getSnapshot().counts.suspended).toBe(1);
    expect(engine.getSnapshot().problems).toBe(0);

    // Later probes find it still stopped: "since" stays the first one's.
    const full = engine.stats().probes.full;
    await until(() => engine.stats().probes.full >= full + 3, 10_000, 'three more full probes');
    expect(finding(engine.getSnapshot(), 'paused')).toMatchObject({ verdict: 'suspended', evidence: { stoppedSince: since } });

    process.kill(child.pid, 'SIGCONT');
    await until(() => verdictOf(engine, 'paused') === 'live', 10_000, 'live again');
    expect(finding(engine.getSnapshot(), 'paused')!.evidence.stoppedSince).toBeUndefined();
    expect([...seen].sort()).toEqual(['live', 'suspended']);
  });

  it('a pid-less agent whose port a stopped process serves is suspended through that process, not a ghost', async () => {
    const s = await serve();
    const pi = await startPiAgent(s.url, ['--no-pid']);
    onCleanup(() => killAndReap(pi.child));
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    const seen = verdictsSeen(engine, pi.id);
    await until(() => finding(engine.getSnapshot(), pi.id)?.evidence.port?.owner === pi.pid, 10_000, 'served by the agent');

    stop(pi.pid);
    await until(() => verdictOf(engine, pi.id) === 'suspended', 10_000, () => `suspended, not ${verdictOf(engine, pi.id)}`);
    expect(finding(engine.getSnapshot(), pi.id)!.reason).toMatch(new RegExp(`^no pid; port ${pi.port} is served by pid ${pi.pid} \\([^)]+\\): pid ${pi.pid} is stopped \\(state T`));
    expect(seen).not.toContain('ghost');
  });

  it('a registry that drops the stopped agent\'s connection makes it offline over suspended, never a ghost', async () => {
    // Pings every 200 ms: a stopped agent cannot answer them, and the registry marks it offline.
    const registry = await startRegistryServer({ port: 0, log: () => {}, pingIntervalMs: 200 });
    onCleanup(() => registry.close());
    const pi = await startPiAgent(registry.url);
    onCleanup(() => killAndReap(pi.child));
    const engine = engineFor([source(registry.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, pi.id) === 'live', 10_000, 'live');
    const seen = verdictsSeen(engine, pi.id);

    stop(pi.pid);
    // The registry no longer says active: its word stands, and what the OS said is kept.
    const f = await until(() => {
      const x = finding(engine.getSnapshot(), pi.id);
      return x?.verdict === 'offline' && x.evidence.underlying === 'suspended' ? x : undefined;
    }, 10_000, () => `offline over suspended, not ${verdictOf(engine, pi.id)} (${finding(engine.getSnapshot(), pi.id)?.evidence.underlying})`);
    expect(f.evidence.state).toBe('T');
    expect(f.problem).toBe(false);
    expect(seen).not.toContain('ghost');
  });
  it('held by a tracer (ptrace: state t) is suspended, the way out is the tracer\'s, and live again once the tracer lets go (needs ptrace: root here)', async (ctx) => {
    if (process.getuid?.() !== 0 && process.env.CI !== 'true') return ctx.skip('needs root to ptrace a process that is not its child');
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 'traced', { pid: child.pid });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, 'traced') === 'live', 10_000, 'live');
    const seen = verdictsSeen(engine, 'traced');
    // A debugger's attach (PTRACE_ATTACH = 16) stops the process in state t until the tracer detaches (PTRACE_DETACH = 17) or ends.
    const tracer = spawn('python3', ['-c', [
      'import ctypes, sys',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'pid = int(sys.argv[1])',
      'assert libc.ptrace(16, pid, None, None) == 0, ctypes.get_errno()',
      'print("attached", flush=True)',
      'sys.stdin.readline()',
      'libc.ptrace(17, pid, None, None)',
    ].join('\n'), String(child.pid)], { stdio: ['pipe', 'pipe', 'inherit'] });
    onCleanup(() => killAndReap(tracer));
    await new Promise<void>((resolve, reject) => {
      tracer.stdout!.once('data', () => resolve());
      tracer.once('exit', (code) => reject(new Error(`the tracer exited with ${code}`)));
    });
    await until(() => verdictOf(engine, 'traced') === 'suspended', 10_000, () => `suspended, not ${verdictOf(engine, 'traced')}`);
    const f = finding(engine.getSnapshot(), 'traced')!;
    expect(f).toMatchObject({ problem: false, evictable: false, evidence: { kill: 'ok', state: 't' } });
    expect(f.reason).toMatch(new RegExp(`^pid ${child.pid} is stopped \\(state t, by a tracer\\) since \\d\\d:\\d\\d:\\d\\d: it cannot answer until continued; its tracer \\(a debugger\\) holds it`));
    // The tracer ends; the kernel continues what it held (it was stopped by the attach's own SIGSTOP: SIGCONT for that).
    tracer.stdin!.end('\n');
    await killAndReap(tracer);
    process.kill(child.pid, 'SIGCONT');
    await until(() => verdictOf(engine, 'traced') === 'live', 10_000, () => `live again, not ${verdictOf(engine, 'traced')}`);
    expect([...seen].sort()).toEqual(['live', 'suspended']);
  });
});

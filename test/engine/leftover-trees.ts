// Real process trees for the leftover tests (test/engine/leftovers*.test.ts): a stand-in agent
// (test/support/leftover-agent.mjs: a listener on a real port and a burner that ignores SIGTERM)
// started under this process, a subreaper, a plain `sh`, or a parent that never reaps (the agent
// turns zombie when it dies), that parent perhaps under a `sh` of its own; an engine watching it
// with a fake registry at a fast cadence and a real audit log. Every pid started is killed when
// the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SessionEntry } from '../../src/core/types.js';
import type { LiveEngine } from '../../src/engine/index.js';
import { leftoversOf, type EngineSnapshot } from '../../src/engine/types.js';
import { childrenOf } from '../support/processes.js';
import { FakeClock } from './fake-clock.js';
import { FakeSource } from './fake-source.js';
import { engineFor, HOST, killAndReap, onCleanup, tempDir, until } from './helpers.js';

export const AGENT = join(import.meta.dirname, '../support/leftover-agent.mjs');
/** A subreaper (prctl PR_SET_CHILD_SUBREAPER = 36) that starts its arguments, prints that child's pid, and reaps every orphan. */
export const SUBREAPER = [
  'import ctypes, os, subprocess, sys, time',
  'assert ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0',
  'child = subprocess.Popen(sys.argv[1:])',
  'print(child.pid, flush=True)',
  'while True:',
  '    try: os.wait()',
  '    except ChildProcessError: time.sleep(0.05)',
].join('\n');

export interface Started {
  readonly agent: number;
  readonly listener: number;
  readonly port: number;
  readonly burner: number;
  readonly nobody?: number;
  /** The process the agent was started from (this process's child). */
  readonly holder: ChildProcess;
  /** `neverReapedUnderShell`: the parent that never reaps, between the holder (`sh`) and the agent. */
  readonly reaperless?: number;
}

/** Every pid the test started is killed at the end, whatever happened. */
export function killLater(...pids: (number | undefined)[]): void {
  onCleanup(() => {
    for (const pid of pids) {
      if (pid === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
}

export interface StartOptions {
  /** The agent is a child of a subreaper (python3) that is a child of this process. */
  readonly subreaper?: boolean;
  /** The agent is a child of a plain `sh` (no subreaper; it waits for it) that is a child of this process. */
  readonly shell?: boolean;
  /** The agent is a child of a `sh` that execs `sleep` and never waits: when the agent dies it stays a zombie. */
  readonly neverReaped?: boolean;
  /** sh (the holder, which waits) → a parent that never reaps → the agent. */
  readonly neverReapedUnderShell?: boolean;
  /** The agent also starts a `sleep` as uid 65534 (needs root). */
  readonly nobody?: boolean;
}

/**
 * The agent as a child of this process; or of one of the parents StartOptions names. Resolves
 * once its listener and burner are up.
 */
export async function startAgent(opts: StartOptions = {}): Promise<Started> {
  const args = [AGENT, ...(opts.nobody ? ['--nobody'] : [])];
  const io = { stdio: ['ignore', 'pipe', 'inherit'] as ('ignore' | 'pipe' | 'inherit')[] };
  const holder = opts.subreaper
    ? spawn('/usr/bin/python3', ['-c', SUBREAPER, process.execPath, ...args], io)
    : opts.shell
      ? spawn('sh', ['-c', `"${process.execPath}" "${AGENT}" & echo $!; wait; exec sleep 600`], io)
      : opts.neverReaped
        ? spawn('sh', ['-c', `"${process.execPath}" "${AGENT}" & echo $!; exec sleep 600`], io)
        : opts.neverReapedUnderShell
          ? spawn('sh', ['-c', `sh -c '"${process.execPath}" "${AGENT}" & echo $!; exec sleep 600' & wait; exec sleep 600`], io)
          : spawn(process.execPath, args, io);
  onCleanup(() => killAndReap(holder));
  const lines = createInterface({ input: holder.stdout! })[Symbol.asyncIterator]();
  const printsAgentPid = opts.subreaper || opts.shell || opts.neverReaped || opts.neverReapedUnderShell;
  const agent = printsAgentPid ? Number((await lines.next()).value) : holder.pid!;
  const report = JSON.parse(String((await lines.next()).value)) as { listener: number; port: number; burner: number; nobody?: number };
  const reaperless = opts.neverReapedUnderShell ? await until(() => childrenOf(holder.pid!)[0], 5_000, 'the parent under the sh') : undefined;
  killLater(agent, report.listener, report.burner, report.nobody, reaperless);
  return { agent, ...report, holder, ...(reaperless !== undefined ? { reaperless } : {}) };
}

export function ppidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The process state letter (R S D Z T ...) from /proc/<pid>/stat, or undefined when it is gone. */
export function stateOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** An engine watching `entries` (a fake registry) with a real audit log at `audit` unless `auditLogPath` is given. */
export function watch(entries: SessionEntry[], opts: Parameters<typeof engineFor>[1] = {}): { engine: LiveEngine; source: FakeSource; audit: string } {
  const source = new FakeSource(new FakeClock(Date.now()));
  const audit = opts.auditLogPath ?? join(tempDir(), 'evictions.jsonl');
  // A fast cadence: the tree is walked every 0.5 s (the default is 5 s), so the test waits less.
  const engine = engineFor([source], { intervalScale: 0.1, ...opts, auditLogPath: audit });
  source.set(entries);
  return { engine, source, audit };
}

export const session = (id: string, pid: number): SessionEntry => FakeSource.session(id, { machine: HOST, pid, cwd: '/repo' });
export const rowOf = (snap: EngineSnapshot, id: string) => [...snap.findings, ...(snap.departed ?? [])].find((f) => f.id === id);
export const leftoverPids = (snap: EngineSnapshot, id: string): number[] => {
  const row = rowOf(snap, id);
  return row ? (leftoversOf(row) ?? []).map((l) => l.pid).sort((a, b) => a - b) : [];
};

/** The snapshot once the row of `id` shows both of the stand-in agent's processes (its listener and burner) as leftovers. */
export async function bothLeftoversUnder(engine: LiveEngine, id: string, what = 'the leftovers under the ghost'): Promise<EngineSnapshot> {
  return until(() => (leftoverPids(engine.getSnapshot(), id).length === 2 ? engine.getSnapshot() : undefined), 10_000, what);
}

export async function learned(engine: LiveEngine, n: number): Promise<void> {
  await until(() => (engine.stats().leftovers?.remembered ?? 0) >= n, 10_000, () => `the engine to learn ${n} processes (has ${engine.stats().leftovers?.remembered})`);
}

// Claude Code's own registry at the size of a busy machine: a `sessions/` folder of 1,000 files
// written as Claude Code writes them (protocols.md §4, 2.1.197's fields), 900 naming live
// processes (one real `sleep` each, its own pid and the real field 22 of its /proc/<pid>/stat as
// `procStart`) and 100 naming pids that died (the same, SIGKILLed and reaped after their record
// was made). The engine is built as the CLI builds it for `--source claude` (claudeSources: the
// sessions folder, claude-view's file, the claim manager's folder, here absent).
//   claude_1k_first_verdicts_*: from building the engine to its first settled snapshot (every
//   source read once, every pid probed once: what `check` waits for), ROUNDS engines started one
//   after another on the same folder in this process; the first start (cold JIT: the first in
//   this process) is its own figure and not in the percentiles.
//   claude_1k_first_verdicts_cpu_p50_ms: this process's CPU time (every thread) over the same
//   span: the work, less the machine's other load.
//   claude_1k_first_list_p50_ms: the part of it until every file's row is in a snapshot (the
//   folder read; the rest is the first probes).
//   claude_1k_idle_cpu_pct: the last engine, settled, watching the unchanged folder for IDLE_MS:
//   this process's CPU time (process.cpuUsage: every thread) over the window, as % of a core;
//   claude_1k_idle_helpers_cpu_pct: the processes the engine ran meanwhile (`tmux list-panes`,
//   from /proc/self/stat's cutime + cstime: not in process.cpuUsage);
//   claude_1k_idle_publishes: the snapshots it published meanwhile (nothing changed: none).
//   claude_1k_rewrites_cpu_pct: the same engine over REWRITE_MS while live sessions' files are
//   rewritten two a second (status idle/busy and its times, as Claude Code does at each turn).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine, type LiveEngine } from '../src/engine/index.js';
import { linuxClock, parseProcStat, ticksToEpochMs } from '../src/os/liveness.js';
import { claudeSources } from '../src/sources/claude/index.js';
import { killAndReap, spawnSleep } from './children.js';
import { type Figures, median, percentile } from './figures.js';
import { cpuSeconds } from './panes.js';

const FILES = 1_000;
/** Every DEAD_EVERY-th file names a dead pid: 100 of 1,000, spread through the folder. */
const DEAD_EVERY = 10;
const DEAD = FILES / DEAD_EVERY;
const LIVE = FILES - DEAD;
const ROUNDS = 20;
/** After the last start's first table scans: a pause before the idle window. */
const SETTLE_MS = 1_000;
const IDLE_MS = 15_000;
const REWRITE_MS = 10_000;
const REWRITE_EVERY_MS = 500;
/** The sleepers outlive the figures (~40 s) and go by themselves if the bench is killed. */
const SLEEP_S = 180;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** CPU seconds of this process's children that ended and were reaped (the engine's `tmux list-panes`). */
const reapedCpuSeconds = () => cpuSeconds(process.pid, true) - cpuSeconds(process.pid);

interface Proc {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks since boot, as Claude Code writes it (a string). */
  readonly procStart: string;
  readonly startedMs: number;
}

function procOf(pid: number): Proc {
  const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const clock = linuxClock();
  if (!stat || !clock) throw new Error(`no start time for pid ${pid} in /proc`);
  return { pid, procStart: String(stat.startTicks), startedMs: ticksToEpochMs(stat.startTicks, clock.btimeSec, clock.clkTck) };
}

/**
 * One record as 2.1.197 writes it: compact JSON, these fields in this order. `startedAt` comes
 * after the process's start (Claude Code writes the file once its first-run dialogs are past);
 * `updatedAt`/`statusUpdatedAt` a little before it, as in the real sample.
 */
function record(p: Proc, i: number, turn?: { status: 'idle' | 'busy'; at: number }): string {
  const startedAt = p.startedMs + 300 + ((i * 397) % 2_700);
  const updatedAt = turn?.at ?? startedAt - 322;
  const project = `project-${i % 97}`;
  return JSON.stringify({
    pid: p.pid,
    sessionId: randomUUID(),
    cwd: `/home/dev/work/${project}`,
    startedAt,
    procStart: p.procStart,
    version: '2.1.197',
    peerProtocol: 1,
    kind: 'interactive',
    entrypoint: 'cli',
    name: `${project}-e${i % 7}`,
    nameSource: 'derived',
    status: turn?.status ?? 'idle',
    updatedAt,
    statusUpdatedAt: updatedAt,
  });
}

/**
 * This process's CPU (process.cpuUsage: every thread) over `ms` while `during` runs (or nothing),
 * as % of a core; and its reaped children's (cutime + cstime: the engine's `tmux list-panes`).
 */
async function cpuOver(ms: number, during?: (end: number) => Promise<void>): Promise<{ pct: number; helpersPct: number }> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const helpers0 = reapedCpuSeconds();
  await (during ? during(t0 + ms) : sleep(ms));
  const cpu = process.cpuUsage(cpu0);
  const helpers = reapedCpuSeconds() - helpers0;
  const seconds = (performance.now() - t0) / 1000;
  return { pct: (cpu.user + cpu.system) / 1e4 / seconds, helpersPct: (helpers / seconds) * 100 };
}

/** Spawns `n` sleeps, 50 at a time. */
async function spawnMany(n: number, into: ChildProcess[]): Promise<(ChildProcess & { pid: number })[]> {
  const out: (ChildProcess & { pid: number })[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => spawnSleep(SLEEP_S)));
    into.push(...batch);
    out.push(...batch);
  }
  return out;
}

function startEngine(dir: string): LiveEngine {
  const host = hostname();
  const sources = claudeSources({ claudeDirs: [join(dir, 'claude')], claimsDir: join(dir, 'claude-sessions') }, host, join(dir, 'trash'));
  const engine = createEngine({ sources, hostName: host, intervalScale: 1, readOnly: true, auditLogPath: join(dir, 'evictions.jsonl') });
  engine.start();
  return engine;
}

/**
 * ms from building the engine to its first settled snapshot, and to its first snapshot with
 * every file's row (read, not yet probed: `checking…`); the engine is left running.
 */
async function firstVerdicts(dir: string): Promise<{ ms: number; cpuMs: number; listMs: number; engine: LiveEngine }> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const engine = startEngine(dir);
  let listMs = Number.NaN;
  const off = engine.subscribe(() => {
    if (Number.isNaN(listMs) && engine.getSnapshot().findings.length === FILES) listMs = performance.now() - t0;
  });
  const snap = await engine.settled(30_000);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  off();
  const { live, ghost, reused } = snap.counts;
  // A dead pid taken by a new process since (pid_max wrapped) is `reused`, not `ghost`: still a verdict on a dead session.
  if (!snap.settled || snap.findings.length !== FILES || (snap.checking ?? 0) > 0 || live !== LIVE || ghost + reused !== DEAD) {
    await engine.stop();
    throw new Error(`claude: not ${LIVE} live and ${DEAD} dead in the first settled snapshot (settled ${snap.settled}, ${snap.findings.length} findings, checking ${snap.checking}, ${JSON.stringify(snap.counts)})`);
  }
  if (reused > 0) process.stderr.write(`bench: claude: ${reused} dead pids were taken by new processes (judged reused)\n`);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, listMs, engine };
}

export async function claudeFigures(): Promise<Figures> {
  if (process.platform !== 'linux') {
    process.stderr.write('bench: sources: the claude_1k figures need Linux (/proc): skipped\n');
    return {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-claude-'));
  const children: ChildProcess[] = [];
  let engine: LiveEngine | undefined;
  try {
    const procs = await spawnMany(FILES, children);
    const records = procs.map((c) => procOf(c.pid));
    // Dead after their start time was read, as a SIGKILLed session leaves its file.
    await Promise.all(procs.filter((_, i) => i % DEAD_EVERY === DEAD_EVERY - 1).map(killAndReap));
    const sessions = join(dir, 'claude', 'sessions');
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    records.forEach((p, i) => writeFileSync(join(sessions, `${p.pid}.json`), record(p, i), { mode: 0o600 }));

    const cold = await firstVerdicts(dir);
    await cold.engine.stop();
    const times: number[] = [];
    const lists: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const run = await firstVerdicts(dir);
      times.push(run.ms);
      lists.push(run.listMs);
      cpus.push(run.cpuMs);
      if (i < ROUNDS - 1) await run.engine.stop();
      else engine = run.engine;
    }

    // Settled is every pid probed; the process table's rows for them (names, command lines) come
    // with the next table scans: two more complete (one of them begun after settling), then a pause.
    const tables = engine!.stats().probes.table;
    const end = performance.now() + 15_000;
    while (engine!.stats().probes.table < tables + 2 && performance.now() < end) await sleep(100);
    await sleep(SETTLE_MS);
    const before = engine!.stats();
    const counts = engine!.getSnapshot().counts;
    const idle = await cpuOver(IDLE_MS);
    const after = engine!.stats();
    // A publish while idle: say whether a verdict moved (a dead pid taken by a new process on this shared machine).
    if (after.publishes > before.publishes) process.stderr.write(`bench: claude: idle publishes; verdicts ${JSON.stringify(counts)} then ${JSON.stringify(engine!.getSnapshot().counts)}\n`);
    // Sessions at work: one live session's file rewritten every REWRITE_EVERY_MS, its status
    // flipped as Claude Code does at a turn's start and end, a different file each time.
    let rewrites = 0;
    const busy = await cpuOver(REWRITE_MS, async (end) => {
      while (performance.now() < end) {
        const i = (rewrites * 7) % FILES;
        const at = i % DEAD_EVERY === DEAD_EVERY - 1 ? i - 1 : i;
        writeFileSync(join(sessions, `${records[at]!.pid}.json`), record(records[at]!, at, { status: rewrites % 2 ? 'idle' : 'busy', at: Date.now() }));
        rewrites++;
        await sleep(REWRITE_EVERY_MS);
      }
    });

    const round1 = (n: number) => Math.round(n * 10) / 10;
    const round2 = (n: number) => Math.round(n * 100) / 100;
    return {
      claude_1k_first_verdicts_p50_ms: { value: round1(median(times)), unit: 'ms' },
      claude_1k_first_verdicts_p99_ms: { value: round1(percentile(times, 99)), unit: 'ms' },
      claude_1k_first_verdicts_cpu_p50_ms: { value: round1(median(cpus)), unit: 'ms CPU' },
      claude_1k_first_list_p50_ms: { value: round1(median(lists)), unit: 'ms' },
      claude_1k_first_verdicts_cold_ms: { value: round1(cold.ms), unit: 'ms' },
      claude_1k_idle_cpu_pct: { value: round2(idle.pct), unit: '% of a core' },
      claude_1k_idle_helpers_cpu_pct: { value: round2(idle.helpersPct), unit: '% of a core' },
      claude_1k_idle_publishes: { value: after.publishes - before.publishes, unit: 'snapshots', target: '0' },
      claude_1k_rewrites_cpu_pct: { value: round2(busy.pct), unit: '% of a core', target: `${1000 / REWRITE_EVERY_MS} rewrites/s` },
    };
  } finally {
    await engine?.stop();
    await Promise.all(children.map(killAndReap));
    rmSync(dir, { recursive: true, force: true });
  }
}

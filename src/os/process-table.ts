// Full process table scan, for display and "who is this pid" evidence. Slow path: liveness
// never depends on it, so every failure here becomes { ok: false } with one readable line.
import { readFileSync, readdirSync } from 'node:fs';
import type psListType from 'ps-list';
import { errorCode, errorText, linuxClock, parseProcStat, throwIfAborted, ticksToEpochMs, yieldToLoop } from './liveness.js';

import type { ProcessInfo } from '../core/types.js';

export type { ProcessInfo };

export type ProcessTableStrategy = 'proc' | 'ps-list';

export type ProcessTableResult =
  | { ok: true; strategy: ProcessTableStrategy; processes: Map<number, ProcessInfo>; scannedAt: number }
  | { ok: false; error: string };

export interface ScanOptions {
  readonly strategy?: 'auto' | ProcessTableStrategy;
  readonly signal?: AbortSignal;
  /**
   * Only these pids (the rest of the table is left out). From /proc that reads just their
   * entries instead of every process on the machine; ps-list still lists everything.
   */
  readonly pids?: readonly number[];
}

/** Processes read between two yields to the event loop. */
const YIELD_EVERY = 200;
const UNAVAILABLE = 'process table unavailable';
const STILL_CHECKED = 'liveness is still checked with kill(pid, 0)';

export function procAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}

/** Read one /proc/<pid>; undefined when it vanished mid-scan (or is otherwise unreadable). */
function readProcEntry(pid: number, clock: ReturnType<typeof linuxClock>): ProcessInfo | undefined {
  let statText: string;
  let cmdline: string;
  try {
    statText = readFileSync(`/proc/${pid}/stat`, 'utf8');
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
  const stat = parseProcStat(statText);
  if (!stat) return undefined;
  // Arguments are NUL-separated with a trailing NUL; kernel threads and zombies have none.
  const args = cmdline.replace(/\0+$/, '').replace(/\0/g, ' ');
  return {
    pid,
    ppid: stat.ppid,
    name: stat.comm,
    cmd: args === '' ? `[${stat.comm}]` : args,
    startedAt: clock ? ticksToEpochMs(stat.startTicks, clock.btimeSec, clock.clkTck) : undefined,
  };
}

async function scanProc(signal: AbortSignal | undefined, only: readonly number[] | undefined): Promise<ProcessTableResult> {
  let pids: readonly number[];
  try {
    if (only === undefined) pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
    else {
      readdirSync('/proc/self'); // /proc is there and readable: the same answer a full scan gives
      pids = only;
    }
  } catch (err) {
    return { ok: false, error: `${UNAVAILABLE}: cannot read /proc (${errorCode(err) ?? errorText(err)}); ${STILL_CHECKED}` };
  }
  const clock = linuxClock();
  const processes = new Map<number, ProcessInfo>();
  let sinceYield = 0;
  for (const pid of pids) {
    if (++sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await yieldToLoop();
      throwIfAborted(signal);
    }
    const info = readProcEntry(pid, clock);
    if (info) processes.set(info.pid, info);
  }
  return { ok: true, strategy: 'proc', processes, scannedAt: Date.now() };
}

/** One line for why `ps` failed: a spawn errno, or its exit code and first stderr line. */
function describePsFailure(err: unknown): string {
  const e = err as { code?: unknown; stderr?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string') return `${errorText(err)}`;
  const stderr = typeof e?.stderr === 'string' ? (e.stderr.trim().split('\n')[0] ?? '') : '';
  const detail = stderr ? `: ${stderr.slice(0, 120)}` : '';
  if (typeof e?.code === 'number') return `exit code ${e.code}${detail}`;
  return errorText(err).slice(0, 160);
}

async function scanPsList(signal: AbortSignal | undefined): Promise<ProcessTableResult> {
  let list: Awaited<ReturnType<typeof psListType>>;
  try {
    // Loaded on use: Linux reads /proc instead, and ps-list loads child_process as it starts.
    const { default: psList } = await import('ps-list');
    list = await psList();
  } catch (err) {
    throwIfAborted(signal);
    return { ok: false, error: `${UNAVAILABLE}: ps failed (${describePsFailure(err)}); ${STILL_CHECKED}` };
  }
  throwIfAborted(signal);
  // A ps that ignores the options (e.g. BusyBox) can exit 0 with output ps-list cannot parse.
  if (list.length === 0) {
    return { ok: false, error: `${UNAVAILABLE}: ps failed (its output listed no processes); ${STILL_CHECKED}` };
  }
  const processes = new Map<number, ProcessInfo>();
  for (const p of list) {
    const startedAt = p.startTime?.getTime();
    processes.set(p.pid, {
      pid: p.pid,
      ppid: p.ppid,
      name: p.name,
      cmd: p.cmd ?? '',
      startedAt: startedAt !== undefined && !Number.isNaN(startedAt) ? startedAt : undefined,
    });
  }
  return { ok: true, strategy: 'ps-list', processes, scannedAt: Date.now() };
}

/** Scan the process table. Never throws for an OS failure; throws only when `signal` aborts. */
export async function scanProcessTable(opts: ScanOptions = {}): Promise<ProcessTableResult> {
  throwIfAborted(opts.signal);
  const wanted = opts.strategy ?? 'auto';
  const strategy: ProcessTableStrategy = wanted === 'auto' ? (procAvailable() ? 'proc' : 'ps-list') : wanted;
  if (strategy === 'proc') {
    if (process.platform !== 'linux') {
      return { ok: false, error: `${UNAVAILABLE}: /proc scanning needs Linux (this is ${process.platform}); ${STILL_CHECKED}` };
    }
    return scanProc(opts.signal, opts.pids);
  }
  return scanPsList(opts.signal);
}

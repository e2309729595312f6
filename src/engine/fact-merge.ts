// How a fresh probe result folds into what the engine already knows about a pid or a port.
// "Keep" means: reuse the previous object, so nothing downstream sees a change and nothing is
// recomputed. Only differences reconcile can see count (design.md: an idle engine does no work).

import type { KillResult, PidFacts, PortFacts, ProcessInfo, ProcessUsage } from '../core/types.js';
import { isStopped, sameShownUsage } from '../core/usage.js';

export function isAlive(kill: KillResult): boolean {
  return kill === 'ok' || kill === 'EPERM';
}

/**
 * Reconcile only tells a zombie and a stopped process from every other state, so R <-> S <-> D
 * flapping of a busy agent is not a change: otherwise every busy agent would republish every two
 * seconds. T <-> t is none either: stopped is stopped.
 */
function sameState(a: string | undefined, b: string | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return (a === 'Z') === (b === 'Z') && isStopped(a) === isStopped(b);
}

/** Start times from two readings of one process agree within this (ps-list and lstart have 1 s resolution). */
const SAME_START_MS = 2_000;

function sameStart(a: number | undefined, b: number | undefined): boolean {
  return a === undefined || b === undefined || Math.abs(a - b) <= SAME_START_MS;
}

function facts(
  pid: number,
  kill: KillResult,
  error: string | undefined,
  state: string | undefined,
  startedAt: number | undefined,
  checkedAt: number,
  process: ProcessInfo | undefined,
  detailsHidden: string | undefined = undefined,
  startTicks: number | undefined = undefined,
  invalidStart: string | undefined = undefined,
  usage: ProcessUsage | undefined = undefined,
  stoppedSince: number | undefined = undefined,
): PidFacts {
  // One literal, every field, one order: all facts objects share one hidden class. The readings
  // (cpuMs, rssBytes) are the probe's: what the engine keeps of them is `usage`.
  return { pid, kill, error, state, startedAt, startTicks, detailsHidden, invalidStart, checkedAt, process, cpuMs: undefined, rssBytes: undefined, usage, stoppedSince };
}

export type KillMerge =
  | { readonly kind: 'keep' }
  | { readonly kind: 'store'; readonly facts: PidFacts }
  /** Alive now but unknown or dead before: a new process (or a new pid) needs a full probe first. */
  | { readonly kind: 'full' };

const KEEP: KillMerge = { kind: 'keep' };
const FULL: KillMerge = { kind: 'full' };

/** Fold a kill-only result into the previous facts. */
export function mergeKill(prev: PidFacts | undefined, next: PidFacts): KillMerge {
  if (prev !== undefined && next.checkedAt < prev.checkedAt) return KEEP;
  if (isAlive(next.kill)) {
    // A live pid without a full reading would show as live with no start-time check: wait for it.
    if (prev === undefined || !isAlive(prev.kill)) return FULL;
    if (prev.kill === next.kill) return KEEP;
    // ok <-> EPERM: the same process changed owner (setuid); its state and start time still hold.
    return { kind: 'store', facts: facts(next.pid, next.kill, undefined, prev.state, prev.startedAt, next.checkedAt, prev.process, prev.detailsHidden, prev.startTicks, prev.invalidStart, prev.usage, prev.stoppedSince) };
  }
  if (prev !== undefined && prev.kill === next.kill && prev.error === next.error) return KEEP;
  // Gone, or the probe failed: whatever state, start time and process we had belong to the past.
  return { kind: 'store', facts: facts(next.pid, next.kill, next.error, undefined, undefined, next.checkedAt, undefined) };
}

/**
 * Fold a full result (kill + state + start time) into the previous facts: undefined = keep the
 * previous. `usage`: what the process costs by this reading (the engine's meter works it out from
 * the readings before); a change the table would not show is none.
 */
export function mergeFull(prev: PidFacts | undefined, next: PidFacts, usage: ProcessUsage | undefined = next.usage): PidFacts | undefined {
  if (prev !== undefined) {
    if (next.checkedAt < prev.checkedAt) return undefined;
    if (
      prev.kill === next.kill &&
      prev.error === next.error &&
      sameState(prev.state, next.state) &&
      prev.startedAt === next.startedAt &&
      prev.startTicks === next.startTicks &&
      prev.detailsHidden === next.detailsHidden &&
      prev.invalidStart === next.invalidStart &&
      sameShownUsage(prev.usage, usage)
    ) {
      return undefined;
    }
  }
  return withProcessOf(prev, next, usage);
}

/** `next` as a complete literal, carrying the previous process info (and the start of its stop) when it is the same process. */
export function withProcessOf(prev: PidFacts | undefined, next: PidFacts, usage: ProcessUsage | undefined = next.usage): PidFacts {
  const same = prev !== undefined && isAlive(prev.kill) && isAlive(next.kill) && sameStart(prev.startedAt, next.startedAt);
  const process = same && prev.process !== undefined ? prev.process : next.process;
  // Stopped since the first probe that found it so, for as long as it stays stopped.
  const stoppedSince = !isStopped(next.state) ? undefined : same && isStopped(prev.state) ? (prev.stoppedSince ?? next.stoppedSince ?? next.checkedAt) : (next.stoppedSince ?? next.checkedAt);
  return facts(next.pid, next.kill, next.error, next.state, next.startedAt, next.checkedAt, process, next.detailsHidden, next.startTicks, next.invalidStart, isAlive(next.kill) ? usage : undefined, stoppedSince);
}

function sameProcessInfo(a: ProcessInfo | undefined, b: ProcessInfo | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.pid === b.pid && a.ppid === b.ppid && a.name === b.name && a.cmd === b.cmd && a.startedAt === b.startedAt;
}

/** Attach a process table row to the facts of a pid: undefined = keep the previous object. */
export function mergeProcess(prev: PidFacts, row: ProcessInfo | undefined): PidFacts | undefined {
  // A dead pid has no process; a row whose start time disagrees is another process on that pid.
  const info = row !== undefined && isAlive(prev.kill) && sameStart(prev.startedAt, row.startedAt) ? row : undefined;
  if (sameProcessInfo(prev.process, info)) return undefined;
  return facts(prev.pid, prev.kill, prev.error, prev.state, prev.startedAt, prev.checkedAt, info, prev.detailsHidden, prev.startTicks, prev.invalidStart, prev.usage, prev.stoppedSince);
}

/** Fold a port probe result: undefined = keep the previous object. */
export function mergePort(prev: PortFacts | undefined, next: PortFacts): PortFacts | undefined {
  if (
    prev !== undefined &&
    (next.checkedAt < prev.checkedAt ||
      (prev.result === next.result &&
        prev.detail === next.detail &&
        prev.ownerUnknown === next.ownerUnknown &&
        sameList(prev.owners, next.owners) &&
        sameList(prev.listeners, next.listeners)))
  ) {
    return undefined;
  }
  return {
    port: next.port,
    result: next.result,
    detail: next.detail,
    checkedAt: next.checkedAt,
    owners: next.owners,
    ownerUnknown: next.ownerUnknown,
    listeners: next.listeners,
  };
}

function sameList<T>(a: readonly T[] | undefined, b: readonly T[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  return a.every((x, i) => x === b[i]);
}

// What a process costs (CPU, resident memory) as the table, the detail view and the engine's
// merge read it: one way to write each figure, so a figure that would show the same text is not
// a change (a busy agent's exact CPU time moves at every probe; its row redraws only when its
// text does). And whether a process state is a stop.

import type { ProcessUsage } from './types.js';

/** State T (stopped by a signal: Ctrl-Z, SIGSTOP) or t (stopped by a tracer at a breakpoint). */
export function isStopped(state: string | undefined): boolean {
  return state === 'T' || state === 't';
}

/** CPU % as the table shows it: one decimal under 10 ("0.0", "3.4"), whole above ("12", "250"); "-" unknown. */
export function cpuText(pct: number | undefined): string {
  if (pct === undefined || !Number.isFinite(pct) || pct < 0) return '-';
  return pct < 9.95 ? pct.toFixed(1) : String(Math.round(pct));
}

const KIB = 1024;
const MIB = KIB * 1024;
const GIB = MIB * 1024;

/** Bytes as the table shows them, binary units, at most 5 characters: "512K", "3.4M", "123M", "1.2G", "12G"; "-" unknown. */
export function bytesText(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return '-';
  if (bytes < MIB) return `${Math.round(bytes / KIB)}K`;
  if (bytes < 10 * MIB) return `${(bytes / MIB).toFixed(1)}M`;
  if (bytes < GIB) return `${Math.round(bytes / MIB)}M`;
  if (bytes < 10 * GIB) return `${(bytes / GIB).toFixed(1)}G`;
  return `${Math.round(bytes / GIB)}G`;
}

/** The two would be shown alike: same CPU text over the same span, same memory text. */
export function sameShownUsage(a: ProcessUsage | undefined, b: ProcessUsage | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.cpuOver === b.cpuOver && cpuText(a.cpuPct) === cpuText(b.cpuPct) && bytesText(a.rssBytes) === bytesText(b.rssBytes);
}

/**
 * CPU % of one core between two readings of one process's CPU time (ms) taken `wallMs` apart;
 * undefined when they cannot be compared (no time passed, or the count went back: another process).
 */
export function cpuPercent(cpuMsBefore: number, cpuMsNow: number, wallMs: number): number | undefined {
  if (!(wallMs > 0) || !(cpuMsNow >= cpuMsBefore)) return undefined;
  return ((cpuMsNow - cpuMsBefore) / wallMs) * 100;
}

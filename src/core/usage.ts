// What a process costs (CPU, resident memory) as the table, the detail view and the engine's
// merge read it: one way to write each figure, so a figure that would show the same text is not
// a change (a busy agent's exact CPU time moves at every probe; its row redraws only when its
// text does). And whether a process state is a stop.

import type { ProcessUsage } from './types.js';

/** State T (stopped by a signal: Ctrl-Z, SIGSTOP) or t (stopped by a tracer at a breakpoint). */
export function isStopped(state: string | undefined): boolean {
  return state === 'T' || state === 't';
}

/**
 * Which text a CPU % is shown as, as a number (comparing two costs allocates nothing): tenths
 * under 10 %, whole percents from 10 (offset by 100), -1 unknown.
 */
export function cpuShown(pct: number | undefined): number {
  if (pct === undefined || !Number.isFinite(pct) || pct < 0) return -1;
  return pct < 9.95 ? Math.round(pct * 10) : 100 + Math.round(pct);
}

/** CPU % as the table shows it: one decimal under 10 ("0.0", "3.4"), whole above ("12", "250"); "-" unknown. */
export function cpuText(pct: number | undefined): string {
  const shown = cpuShown(pct);
  if (shown < 0) return '-';
  return shown < 100 ? (shown / 10).toFixed(1) : String(shown - 100);
}

const KIB = 1024;
const MIB = KIB * 1024;
const GIB = MIB * 1024;
/** The units of bytesShown, smallest first, and whether each is written with one decimal. */
const UNITS = [
  { suffix: 'K', size: KIB, tenths: false },
  { suffix: 'M', size: MIB, tenths: true },
  { suffix: 'M', size: MIB, tenths: false },
  { suffix: 'G', size: GIB, tenths: true },
  { suffix: 'G', size: GIB, tenths: false },
  { suffix: 'T', size: GIB * 1024, tenths: false },
] as const;
const UNIT_STEP = 1_000_000;

/**
 * Which text a byte count is shown as, as a number: the unit's index times a million plus the
 * figure (in tenths where one decimal is shown); -1 unknown. Under 1 MiB in KiB, under 10 MiB and
 * 10 GiB with one decimal, from 10,000 GiB in TiB: at most 5 characters. Past 2^53 bytes (no
 * machine's memory; a broken or hostile host's figure) it is unknown.
 */
export function bytesShown(bytes: number | undefined): number {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0 || bytes > Number.MAX_SAFE_INTEGER) return -1;
  const unit = bytes < MIB ? 0 : bytes < 10 * MIB ? 1 : bytes < GIB ? 2 : bytes < 10 * GIB ? 3 : bytes < 10_000 * GIB ? 4 : 5;
  const u = UNITS[unit]!;
  return unit * UNIT_STEP + Math.round((bytes / u.size) * (u.tenths ? 10 : 1));
}

/** Bytes as the table shows them, binary units, at most 5 characters: "512K", "3.4M", "123M", "1.2G", "12G", "10T"; "-" unknown. */
export function bytesText(bytes: number | undefined): string {
  const shown = bytesShown(bytes);
  if (shown < 0) return '-';
  const u = UNITS[Math.floor(shown / UNIT_STEP)]!;
  const figure = shown % UNIT_STEP;
  return `${u.tenths ? (figure / 10).toFixed(1) : figure}${u.suffix}`;
}

/** The two would be shown alike: same CPU text over the same span, same memory text. */
export function sameShownUsage(a: ProcessUsage | undefined, b: ProcessUsage | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return a.cpuOver === b.cpuOver && cpuShown(a.cpuPct) === cpuShown(b.cpuPct) && bytesShown(a.rssBytes) === bytesShown(b.rssBytes);
}

/**
 * CPU % of one core between two readings of one process's CPU time (ms) taken `wallMs` apart;
 * undefined when they cannot be compared (no time passed, or the count went back: another process).
 */
export function cpuPercent(cpuMsBefore: number, cpuMsNow: number, wallMs: number): number | undefined {
  if (!(wallMs > 0) || !(cpuMsNow >= cpuMsBefore)) return undefined;
  return ((cpuMsNow - cpuMsBefore) / wallMs) * 100;
}

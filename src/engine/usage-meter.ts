// What each watched process costs, from the readings the full probe already makes (CPU time so
// far and resident memory, from the same /proc/<pid>/stat line as its state): CPU % is the CPU
// time used between two readings over the time between them. The last reading of each pid is
// kept here, not in its facts: a facts object that nothing visible changed is kept as it was, and
// its reading would be an old one (a burst after an idle hour would read as a fraction of a %).

import type { PidFacts, ProcessUsage } from '../core/types.js';
import { bytesShown, cpuPercent, cpuShown } from '../core/usage.js';
import { isAlive } from './fact-merge.js';

interface Reading {
  cpuMs: number;
  at: number;
  /** Which process it was (start ticks, else start time): a recycled pid starts a new count. */
  start: number | undefined;
}

/**
 * `known` when it would be shown as these figures (nothing is allocated for a process whose
 * figures stand still: an idle monitor reads hundreds of them every 2 s).
 */
function same(known: ProcessUsage | undefined, cpuPct: number | undefined, cpuOver: ProcessUsage['cpuOver'], rssBytes: number | undefined): ProcessUsage | undefined {
  if (known === undefined || known.cpuOver !== cpuOver) return undefined;
  return cpuShown(known.cpuPct) === cpuShown(cpuPct) && bytesShown(known.rssBytes) === bytesShown(rssBytes) ? known : undefined;
}

export class UsageMeter {
  private readonly readings = new Map<number, Reading>();

  /** `minIntervalMs`: readings closer than this are not compared (a 50 ms gap is a few clock ticks: noise). */
  constructor(private readonly minIntervalMs: number) {}

  /**
   * What the process costs by the reading `next`: CPU % since the last reading of the same
   * process (or over its life, at the first one) and its resident memory. Facts that carry no
   * reading keep what `prev` knew of the same process.
   */
  usage(prev: PidFacts | undefined, next: PidFacts): ProcessUsage | undefined {
    if (!isAlive(next.kill)) {
      this.readings.delete(next.pid);
      return undefined;
    }
    const start = next.startTicks ?? next.startedAt;
    if (next.cpuMs === undefined && next.rssBytes === undefined) {
      const same = prev !== undefined && isAlive(prev.kill) && (prev.startTicks ?? prev.startedAt) === start;
      return same ? prev.usage : undefined;
    }
    const rssBytes = next.rssBytes;
    const cpuMs = next.cpuMs;
    const known = prev !== undefined && isAlive(prev.kill) && (prev.startTicks ?? prev.startedAt) === start ? prev.usage : undefined;
    if (cpuMs === undefined) return same(known, undefined, undefined, rssBytes) ?? { cpuPct: undefined, cpuOver: undefined, rssBytes };
    const last = this.readings.get(next.pid);
    if (last === undefined || last.start !== start) {
      this.readings.set(next.pid, { cpuMs, at: next.checkedAt, start });
      const life = next.startedAt === undefined ? undefined : cpuPercent(0, cpuMs, next.checkedAt - next.startedAt);
      const over = life === undefined ? undefined : 'life';
      return same(known, life, over, rssBytes) ?? { cpuPct: life, cpuOver: over, rssBytes };
    }
    const wallMs = next.checkedAt - last.at;
    // Too close to the last reading to tell anything: what is known stands (the next reading compares with the older one).
    if (wallMs < this.minIntervalMs) return known ?? { cpuPct: undefined, cpuOver: undefined, rssBytes };
    const cpuPct = cpuPercent(last.cpuMs, cpuMs, wallMs);
    last.cpuMs = cpuMs;
    last.at = next.checkedAt;
    const over = cpuPct === undefined ? undefined : 'interval';
    return same(known, cpuPct, over, rssBytes) ?? { cpuPct, cpuOver: over, rssBytes };
  }

  /** Forget the pids no longer watched. */
  retain(watched: ReadonlySet<number>): void {
    for (const pid of this.readings.keys()) if (!watched.has(pid)) this.readings.delete(pid);
  }
}

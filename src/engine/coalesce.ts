// Folds bursts of requests into runs at least `gapMs` apart: a request after a quiet spell runs
// almost at once (leading edge); requests during the gap become one run at its end (trailing
// edge). 300 registrations in a burst cost a handful of reconciles, not 300.
//
// Runs are paced by their cost too, as the runner reports it (ended): after a run that kept the
// loop busy for longer than the gap, the loop is left to everything else (keys, reads, probes)
// for `restFactor` times as long before the next. A run that costs more than a frame (a recompute
// of 37,000 rows) then takes at most 1 / (1 + restFactor) of the time, however fast requests
// come; a run that costs less than a frame is paced by the gap alone, as before (a death is
// published at the tick that sees it).

import { realClock, type Clock, type TimerHandle } from '../plumbing/clock.js';

/**
 * After a run, the loop is left to keys, reads and probes for this many times the run's cost.
 * 4, not 2: a recompute of 37,000 rows under ~6,000 registry events a second then runs about
 * every 1.6 s instead of every 1 s, and keys stay fast: each recompute makes every row again, and
 * their copies, promoted and dropped, brought the major collections that made the slowest keys
 * (key_flood_p99_ms, four alternating runs each on one build: 52-104 ms, median 61, with 2;
 * 29-49, median 39, with 4).
 */
export const REST_FACTOR = 4;

export class Coalescer {
  private timer: TimerHandle | undefined;
  private lastRun = -Infinity;
  /** When the last run ended, and how long it kept the loop busy (as its runner reported). */
  private lastEnd = -Infinity;
  private lastCost = 0;

  constructor(
    private readonly run: () => void,
    private readonly gapMs: number,
    private readonly clock: Clock = realClock,
    private readonly restFactor = REST_FACTOR,
  ) {}

  get pending(): boolean {
    return this.timer !== undefined;
  }

  request(): void {
    if (this.timer !== undefined) return;
    this.timer = this.clock.setTimeout(this.fire, this.wait());
  }

  /** Run a pending request now, gap or not (a manual refresh wants its answer). */
  flush(): void {
    if (this.timer === undefined) return;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.runNow();
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The last run has ended now, having kept the loop busy for `costMs`: past the gap, the next one waits for its rest. */
  ended(costMs: number): void {
    this.lastEnd = this.clock.monotonic();
    this.lastCost = Math.max(0, costMs);
    if (this.timer === undefined) return;
    // A request made while it ran was armed before its cost was known.
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(this.fire, this.wait());
  }

  private wait(): number {
    const rest = this.lastCost > this.gapMs ? this.lastCost * this.restFactor : 0;
    const due = Math.max(this.lastRun + this.gapMs, this.lastEnd + rest);
    return Math.max(0, Math.ceil(due - this.clock.monotonic()));
  }

  private runNow(): void {
    this.lastRun = this.clock.monotonic();
    this.run();
  }

  private readonly fire = (): void => {
    // Timers may fire a hair early; the gap is a promise to the UI, so wait out the rest.
    const rest = this.wait();
    if (rest > 0) {
      this.timer = this.clock.setTimeout(this.fire, rest);
      return;
    }
    this.timer = undefined;
    this.runNow();
  };
}

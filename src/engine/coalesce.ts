// Folds bursts of requests into runs at least `gapMs` apart: a request after a quiet spell runs
// almost at once (leading edge); requests during the gap become one run at its end (trailing
// edge). 300 registrations in a burst cost a handful of reconciles, not 300.

import { realClock, type Clock, type TimerHandle } from '../plumbing/clock.js';

export class Coalescer {
  private timer: TimerHandle | undefined;
  private lastRun = -Infinity;

  constructor(
    private readonly run: () => void,
    private readonly gapMs: number,
    private readonly clock: Clock = realClock,
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
    this.lastRun = this.clock.monotonic();
    this.run();
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wait(): number {
    return Math.max(0, Math.ceil(this.lastRun + this.gapMs - this.clock.monotonic()));
  }

  private readonly fire = (): void => {
    // Timers may fire a hair early; the gap is a promise to the UI, so wait out the rest.
    const rest = this.wait();
    if (rest > 0) {
      this.timer = this.clock.setTimeout(this.fire, rest);
      return;
    }
    this.timer = undefined;
    this.lastRun = this.clock.monotonic();
    this.run();
  };
}

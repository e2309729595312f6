// Folds bursts of requests into runs at least `gapMs` apart: a request after a quiet spell runs
// almost at once (leading edge); requests during the gap become one run at its end (trailing
// edge). 300 registrations in a burst cost a handful of reconciles, not 300.

export class Coalescer {
  private timer: NodeJS.Timeout | undefined;
  private lastRun = -Infinity;

  constructor(
    private readonly run: () => void,
    private readonly gapMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get pending(): boolean {
    return this.timer !== undefined;
  }

  request(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(this.fire, this.wait());
  }

  /** Run a pending request now, gap or not (a manual refresh wants its answer). */
  flush(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.lastRun = this.clock();
    this.run();
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wait(): number {
    return Math.max(0, Math.ceil(this.lastRun + this.gapMs - this.clock()));
  }

  private readonly fire = (): void => {
    // Timers may fire a hair early; the gap is a promise to the UI, so wait out the rest.
    const rest = this.wait();
    if (rest > 0) {
      this.timer = setTimeout(this.fire, rest);
      return;
    }
    this.timer = undefined;
    this.lastRun = this.clock();
    this.run();
  };
}

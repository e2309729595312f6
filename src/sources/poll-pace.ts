// How often a polled registry is read: fast while something is changing or a problem is shown,
// slow once it has been steady. For agentctl this is not free: its `session.list` asks every
// agent adapter (each up to 5 s) and marks dead sessions stopped, ~37 ms of the daemon's CPU a
// call (issue 17: ~370 ms per 20 s at 2 s polling, with an empty HOME). Pure: no timers here.

export interface PollPaceOptions {
  /** While something changes or a problem is shown. */
  readonly fastMs: number;
  /** Once steady. */
  readonly slowMs: number;
  /** Reads in a row that found nothing new before the pace turns slow. */
  readonly calmReads: number;
}

export const DEFAULT_FAST_POLL_MS = 2_000;
export const DEFAULT_CALM_READS = 3;

export class PollPace {
  private readonly opts: PollPaceOptions;
  /** Reads in a row that found nothing new (a failed read counts as new: keep looking). */
  private steady = 0;
  private problems = false;

  constructor(opts: PollPaceOptions) {
    this.opts = { ...opts, slowMs: Math.max(opts.slowMs, opts.fastMs) };
  }

  /** A read ended: `changed` when its lists differ from the last (or it failed). */
  read(changed: boolean): void {
    this.steady = changed ? 0 : this.steady + 1;
  }

  /** Whether a problem of this registry is shown now. True when this made the pace fast. */
  showProblems(shown: boolean): boolean {
    const wasFast = this.fast();
    this.problems = shown;
    return !wasFast && this.fast();
  }

  fast(): boolean {
    return this.problems || this.steady < this.opts.calmReads;
  }

  /** The wait after a read before the next one. */
  delay(): number {
    return this.fast() ? this.opts.fastMs : this.opts.slowMs;
  }

  get fastMs(): number {
    return this.opts.fastMs;
  }
}

// How long a source waits before it tries its registry again: one policy for every source.
// Exponential from `initialMs`, capped at `maxMs`, each delay drawn uniformly from the upper
// half of its step (many monitors that lost one registry must not all come back in step), and
// back to the first step after a success.

export interface BackoffOptions {
  readonly initialMs?: number | undefined;
  readonly maxMs?: number | undefined;
  /** A number in [0, 1); Math.random by default, injected by tests. */
  readonly random?: (() => number) | undefined;
}

export const DEFAULT_BACKOFF_INITIAL_MS = 250;
export const DEFAULT_BACKOFF_MAX_MS = 5_000;

/** Doublings counted at most: past this every step is the cap anyway. */
const MAX_ATTEMPT = 30;

export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? DEFAULT_BACKOFF_INITIAL_MS;
    this.maxMs = options.maxMs ?? DEFAULT_BACKOFF_MAX_MS;
    this.random = options.random ?? Math.random;
  }

  /** The wait before the next attempt, in [step / 2, step] where step = min(max, initial * 2^failures). */
  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, MAX_ATTEMPT);
    return step / 2 + (step / 2) * this.random();
  }

  /** The registry answered: the next failure starts from the first step again. */
  reset(): void {
    this.attempt = 0;
  }
}

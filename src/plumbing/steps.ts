// Work over many rows written as a generator that yields where it may pause. Run to its end at
// once (runToEnd), or in slices of a few ms of the clock with the event loop free in between
// (SlicedRun): a key typed while 37,000 rows are judged waits for one slice, not for all of them.
// The clock decides: on a hand-driven clock no time passes within a run, so it ends in one slice.

import type { Clock, TimerHandle } from './clock.js';

export type Steps<T> = Generator<void, T, void>;

/**
 * A slice of work runs this long at most (plus the step it is in) before the event loop gets its
 * turn (keys, reads, probes). 3 ms rather than 8: under the 37,000-node flood a key waits for the
 * slice under way, and that wait was a third of the slow keys' time (key_flood_p99_ms: 74-93 ms
 * in five runs with 8, 47-79 in four with 3; the same work, in more slices).
 */
export const SLICE_MS = 3;

/** Runs the steps to their end now and returns their result. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export class SlicedRun<T> {
  private timer: TimerHandle | undefined;
  private busy = 0;
  private ended = false;

  /**
   * `done` gets the result and the ms the steps ran (their slices, without the pauses between).
   * Start it with `start()`; `cancel()` drops the rest.
   */
  constructor(
    private readonly steps: Steps<T>,
    private readonly clock: Pick<Clock, 'monotonic' | 'setTimeout' | 'clearTimeout'>,
    private readonly sliceMs: number,
    private readonly done: (result: T, busyMs: number) => void,
  ) {}

  get running(): boolean {
    return !this.ended;
  }

  /** Runs the first slice now: work that fits in one slice ends before start() returns. */
  start(): void {
    this.slice();
  }

  /** Runs every remaining step now (a refresh wants its answer). */
  finish(): void {
    if (this.ended) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.slice(Infinity);
  }

  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.ended = true;
  }

  private slice(budget = this.sliceMs): void {
    this.timer = undefined;
    if (this.ended) return;
    const start = this.clock.monotonic();
    for (;;) {
      const step = this.steps.next();
      if (step.done) {
        this.ended = true;
        this.busy += this.clock.monotonic() - start;
        this.done(step.value, this.busy);
        return;
      }
      if (this.clock.monotonic() - start >= budget) break;
    }
    this.busy += this.clock.monotonic() - start;
    // A timer, not a microtask: the event loop reads keys and sockets before the next slice.
    this.timer = this.clock.setTimeout(() => this.slice(), 0);
  }
}

/** Items sorted between two pauses of sortSteps (each such run sorted whole), and merged between two pauses. */
export const SORT_RUN = 1024;

/**
 * The items sorted by `compare` (stably, as Array#sort), pausing after every SORT_RUN items
 * sorted or merged: runs of SORT_RUN sorted whole, then merged pairwise, bottom up.
 */
export function* sortSteps<T>(items: readonly T[], compare: (a: T, b: T) => number): Steps<T[]> {
  let from: T[] = [];
  for (let at = 0; at < items.length; at += SORT_RUN) {
    for (const item of items.slice(at, at + SORT_RUN).sort(compare)) from.push(item);
    yield;
  }
  for (let width = SORT_RUN; width < from.length; width *= 2) {
    const to: T[] = [];
    let sinceYield = 0;
    for (let lo = 0; lo < from.length; lo += 2 * width) {
      const mid = Math.min(lo + width, from.length);
      const hi = Math.min(lo + 2 * width, from.length);
      let i = lo;
      let j = mid;
      while (i < mid || j < hi) {
        // The left run first on a tie: stable.
        if (j >= hi || (i < mid && compare(from[i]!, from[j]!) <= 0)) to.push(from[i++]!);
        else to.push(from[j++]!);
        if (++sinceYield === SORT_RUN) {
          sinceYield = 0;
          yield;
        }
      }
    }
    from = to;
  }
  return from;
}

// The engine's clock and scheduler, injected: every timer the engine arms and every moment it
// reads goes through one of these, so tests run the loop on a hand-driven clock, exactly.

/** What a scheduler hands back for a timer; only ever given back to the same scheduler. */
export type TimerHandle = ReturnType<typeof setTimeout> | number;

export interface Clock {
  /** Wall-clock ms since the epoch (Date.now): facts' checkedAt, reconcile's now, snapshots. */
  now(): number;
  /** Monotonic ms (performance.now): gaps between runs, immune to the wall clock being set. */
  monotonic(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  setInterval(fn: () => void, ms: number): TimerHandle;
  clearInterval(handle: TimerHandle): void;
}

/** The process's own clock and timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle),
};

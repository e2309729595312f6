// The one clock and scheduler, injected: every timer the engine, a polling source or an ssh host
// arms and every moment it reads goes through a Clock, so tests run them on a hand-driven clock,
// exactly. A part that needs only some of it asks for a Pick of it (see Timers).

/** What a scheduler hands back for a timer: opaque, only ever given back to the same scheduler. */
export type TimerHandle = unknown;

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

/** The part of a Clock a polling source uses: the time now and one-shot timers. */
export type Timers = Pick<Clock, 'now' | 'setTimeout' | 'clearTimeout'>;

type NodeTimer = ReturnType<typeof setTimeout>;

/** The process's own clock and timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeTimer),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (handle) => clearInterval(handle as NodeTimer),
};

// A hand-driven clock for the engine: timers fire only inside advance(), in time order (ties in
// the order they were armed), and after each one every promise the engine chained on it settles
// before the next fires. No global is patched; nothing depends on the machine's speed.
import type { Clock, TimerHandle } from '../../src/plumbing/clock.js';

interface Timer {
  readonly id: number;
  at: number;
  readonly every: number | undefined;
  readonly fn: () => void;
}

/** Lets every promise chained on what just ran settle (the fake probes answer with settled promises). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class FakeClock implements Clock {
  /** Fake ms since the clock was made; the wall clock is `wallStart` plus this. */
  private elapsed = 0;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  constructor(readonly wallStart = Date.UTC(2026, 0, 1)) {}

  now(): number {
    return this.wallStart + this.elapsed;
  }

  monotonic(): number {
    return this.elapsed;
  }

  /**
   * Time passes inside the code running now, as work that takes that long: no timer fires until
   * it returns (those that came due meanwhile fire late, at the next advance).
   */
  spend(ms: number): void {
    this.elapsed += ms;
  }

  /** Fake ms since the clock was made. */
  get t(): number {
    return this.elapsed;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.arm(fn, Math.max(0, ms), undefined);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    const every = Math.max(1, ms);
    return this.arm(fn, every, every);
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === 'number') this.timers.delete(handle);
  }

  clearInterval(handle: TimerHandle): void {
    if (typeof handle === 'number') this.timers.delete(handle);
  }

  /** The periods of the intervals armed now, ascending. */
  intervals(): number[] {
    return [...this.timers.values()].flatMap((t) => (t.every === undefined ? [] : [t.every])).sort((a, b) => a - b);
  }

  /** When each one-shot timer armed now is due, in fake ms, ascending. */
  timeouts(): number[] {
    return [...this.timers.values()].flatMap((t) => (t.every === undefined ? [t.at] : [])).sort((a, b) => a - b);
  }

  get armed(): number {
    return this.timers.size;
  }

  /** Runs every timer due within `ms`, in order, settling promises after each; then the clock stands at +ms. */
  async advance(ms: number): Promise<void> {
    const end = this.elapsed + ms;
    await settle();
    for (;;) {
      const next = this.due(end);
      if (!next) break;
      // A timer that came due while time was spent fires late: the clock never goes back.
      this.elapsed = Math.max(this.elapsed, next.at);
      if (next.every === undefined) this.timers.delete(next.id);
      else next.at += next.every;
      next.fn();
      await settle();
    }
    this.elapsed = end;
    await settle();
  }

  /** Advances to a fake time. */
  async advanceTo(t: number): Promise<void> {
    if (t < this.elapsed) throw new Error(`the clock is at ${this.elapsed}, past ${t}`);
    await this.advance(t - this.elapsed);
  }

  private due(end: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers.values()) {
      if (t.at > end) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  }

  private arm(fn: () => void, delay: number, every: number | undefined): number {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.elapsed + delay, every, fn });
    return id;
  }
}

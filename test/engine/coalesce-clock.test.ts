// The coalescer on a hand-driven clock: the exact moments it runs at (leading edge at once,
// trailing edge at the end of the gap, never earlier even when a timer fires early), one timer for
// a whole burst, flush and cancel.
import { describe, expect, it } from 'vitest';
import type { Clock, TimerHandle } from '../../src/plumbing/clock.js';
import { Coalescer } from '../../src/engine/coalesce.js';
import { FakeClock } from './fake-clock.js';

/** A clock whose one-shot timers longer than `early` ms fire that much before they are due (as real timers may). */
class EarlyClock implements Clock {
  constructor(
    private readonly inner: FakeClock,
    private readonly early: number,
  ) {}
  now(): number {
    return this.inner.now();
  }
  monotonic(): number {
    return this.inner.monotonic();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.inner.setTimeout(fn, ms > this.early ? ms - this.early : ms);
  }
  clearTimeout(h: TimerHandle): void {
    this.inner.clearTimeout(h);
  }
  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.inner.setInterval(fn, ms);
  }
  clearInterval(h: TimerHandle): void {
    this.inner.clearInterval(h);
  }
}

describe('Coalescer on a fake clock', () => {
  it('leading edge at once, a burst folded into one run at the end of the gap, one timer for it all', async () => {
    const clock = new FakeClock();
    const runs: number[] = [];
    const c = new Coalescer(() => runs.push(clock.t), 100, clock);
    c.request();
    expect(clock.timeouts()).toEqual([0]);
    await clock.advance(0);
    expect(runs).toEqual([0]);
    await clock.advance(10);
    c.request();
    c.request();
    await clock.advance(10);
    c.request();
    expect(clock.armed).toBe(1);
    expect(clock.timeouts()).toEqual([100]);
    await clock.advanceTo(99);
    expect(runs).toEqual([0]);
    await clock.advanceTo(100);
    expect(runs).toEqual([0, 100]);
    expect(c.pending).toBe(false);
    // After a quiet spell: at once again.
    await clock.advanceTo(250);
    c.request();
    await clock.advance(0);
    expect(runs).toEqual([0, 100, 250]);
  });

  it('a timer that fires early is re-armed for the rest: the run keeps the gap', async () => {
    const inner = new FakeClock();
    const runs: number[] = [];
    const c = new Coalescer(() => runs.push(inner.t), 100, new EarlyClock(inner, 30));
    c.request();
    await inner.advance(0);
    c.request();
    await inner.advanceTo(70); // the early timer fires here
    expect(runs).toEqual([0]);
    expect(c.pending).toBe(true);
    await inner.advanceTo(99);
    expect(runs).toEqual([0]);
    await inner.advanceTo(100);
    expect(runs).toEqual([0, 100]);
  });

  it('flush runs a pending request at once and counts as a run for the gap; with nothing pending it does nothing', async () => {
    const clock = new FakeClock();
    const runs: number[] = [];
    const c = new Coalescer(() => runs.push(clock.t), 100, clock);
    c.flush();
    expect(runs).toEqual([]);
    c.request();
    await clock.advance(0);
    await clock.advance(20);
    c.request();
    c.flush();
    expect(runs).toEqual([0, 20]);
    expect(clock.armed).toBe(0);
    c.request();
    expect(clock.timeouts()).toEqual([120]);
    c.cancel();
  });

  /** A coalescer on `clock` whose run takes `cost` ms of it and says so; `during` is what else happens inside the run, before it ends. */
  function spendingCoalescer(clock: FakeClock, gapMs: number) {
    const runs: number[] = [];
    const run = { cost: 0, during: (): void => {} };
    const c: Coalescer = new Coalescer(
      () => {
        runs.push(clock.t);
        clock.spend(run.cost);
        run.during();
        c.ended(run.cost);
      },
      gapMs,
      clock,
    );
    return { c, runs, run };
  }

  it('a run that cost more than the gap is followed by four times its cost of rest; one within the gap by the gap alone', async () => {
    const clock = new FakeClock();
    const { c, runs, run } = spendingCoalescer(clock, 100);
    run.cost = 50;
    c.request();
    await clock.advance(0);
    c.request();
    // 50 ms is within the gap: the next run is 100 ms after this one began.
    expect(clock.timeouts()).toEqual([100]);
    await clock.advanceTo(100);
    run.cost = 300;
    c.request();
    await clock.advanceTo(200);
    expect(runs).toEqual([0, 100, 200]);
    // It ended at 500 after 300 ms of work: nothing before 500 + 1,200.
    c.request();
    expect(clock.timeouts()).toEqual([1_700]);
    await clock.advanceTo(1_699);
    expect(runs).toHaveLength(3);
    await clock.advanceTo(1_700);
    expect(runs).toEqual([0, 100, 200, 1_700]);
  });

  it('a run of exactly the gap rests no more than the gap; a request made during a costly run waits for its rest once it ends', async () => {
    const clock = new FakeClock();
    const { c, runs, run } = spendingCoalescer(clock, 100);
    run.cost = 100;
    c.request();
    await clock.advance(0);
    // It cost exactly the gap: within it, paced by the gap alone (the next at 0 + 100).
    c.request();
    expect(clock.timeouts()).toEqual([100]);
    run.cost = 300;
    // New input while it runs (the engine's sources and probes request then).
    run.during = () => c.request();
    await clock.advanceTo(100);
    expect(runs).toEqual([0, 100]);
    // The request made at 400 during the run was armed before its cost was known: once it ended
    // (at 400, after 300 ms), it waits until 400 + 4 x 300.
    expect(clock.timeouts()).toEqual([1_600]);
    await clock.advanceTo(1_599);
    expect(runs).toHaveLength(2);
    await clock.advanceTo(1_600);
    expect(runs).toEqual([0, 100, 1_600]);
  });

  it('cancel drops the pending run and its timer; cancelling nothing is harmless', async () => {
    const clock = new FakeClock();
    let n = 0;
    const c = new Coalescer(() => n++, 100, clock);
    c.cancel();
    c.request();
    c.cancel();
    expect(clock.armed).toBe(0);
    expect(c.pending).toBe(false);
    await clock.advance(500);
    expect(n).toBe(0);
    c.request();
    await clock.advance(0);
    expect(n).toBe(1);
  });
});

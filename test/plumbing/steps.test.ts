// Work written as steps: run to its end at once, or in slices of the clock with other timers
// between them; a sort in steps gives what Array#sort gives, ties in their first order.
import { describe, expect, it } from 'vitest';
import { runToEnd, SlicedRun, sortSteps, SORT_RUN, type Steps } from '../../src/plumbing/steps.js';
import { FakeClock } from '../engine/fake-clock.js';

function* counting(log: string[], n: number, clock?: FakeClock): Steps<number> {
  for (let i = 1; i <= n; i++) {
    log.push(`step ${i}`);
    clock?.spend(3);
    yield;
  }
  return n;
}

describe('steps', () => {
  it('runToEnd runs every step now and returns the result', () => {
    const log: string[] = [];
    expect(runToEnd(counting(log, 3))).toBe(3);
    expect(log).toEqual(['step 1', 'step 2', 'step 3']);
  });

  it('a sliced run stops a slice once its budget is spent and lets due timers run before the next; done gets the result and the time worked', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    let done: [number, number] | undefined;
    // Each step takes 3 ms: a 5 ms budget is spent after two.
    const run = new SlicedRun(counting(log, 5, clock), clock, 5, (result, busy) => (done = [result, busy]));
    clock.setTimeout(() => log.push('other work'), 0);
    run.start();
    expect(log).toEqual(['step 1', 'step 2']);
    expect(run.running).toBe(true);
    await clock.advance(100);
    expect(log).toEqual(['step 1', 'step 2', 'other work', 'step 3', 'step 4', 'step 5']);
    expect(done).toEqual([5, 15]);
    expect(run.running).toBe(false);
  });

  it('finish runs the rest now; cancel drops it', async () => {
    const clock = new FakeClock();
    const log: string[] = [];
    let result: number | undefined;
    const run = new SlicedRun(counting(log, 4, clock), clock, 1, (r) => (result = r));
    run.start();
    run.finish();
    expect(result).toBe(4);
    expect(clock.armed).toBe(0);
    const dropped: string[] = [];
    const other = new SlicedRun(counting(dropped, 4, clock), clock, 1, () => dropped.push('done'));
    other.start();
    other.cancel();
    await clock.advance(100);
    expect(dropped).toEqual(['step 1']);
    expect(other.running).toBe(false);
  });

  it('sortSteps sorts as Array#sort does, stably, and pauses between runs and merges', () => {
    let seed = 7;
    const random = () => ((seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32);
    const items = Array.from({ length: SORT_RUN * 5 + 17 }, (_, i) => ({ key: Math.floor(random() * 50), at: i }));
    const byKey = (a: { key: number }, b: { key: number }) => a.key - b.key;
    const steps = sortSteps(items, byKey);
    let pauses = 0;
    let step = steps.next();
    while (!step.done) {
      pauses++;
      step = steps.next();
    }
    expect(step.value).toEqual([...items].sort(byKey));
    expect(pauses).toBeGreaterThanOrEqual(6);
    expect(runToEnd(sortSteps([], byKey))).toEqual([]);
  });
});

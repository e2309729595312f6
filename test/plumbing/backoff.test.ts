import { describe, expect, it } from 'vitest';
import { Backoff, DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_MAX_MS } from '../../src/plumbing/backoff.js';

/** A fixed sequence of "random" numbers, repeated. */
const sequence = (...values: number[]) => {
  let i = 0;
  return () => values[i++ % values.length]!;
};

describe('the reconnect backoff policy', () => {
  it('draws each delay from the upper half of its step: random 0 gives step / 2, random near 1 gives the step', () => {
    const low = new Backoff({ initialMs: 1_000, maxMs: 64_000, random: () => 0 });
    expect([low.next(), low.next(), low.next()]).toEqual([500, 1_000, 2_000]);
    const high = new Backoff({ initialMs: 1_000, maxMs: 64_000, random: () => 0.999 });
    expect([high.next(), high.next(), high.next()]).toEqual([999.5, 1_999, 3_998]);
  });

  it('jitters: delays of one step with different random draws differ, each within [step / 2, step]', () => {
    const draws = [0, 0.25, 0.5, 0.75, 0.99];
    const delays = draws.map((r) => new Backoff({ initialMs: 400, maxMs: 400, random: () => r }).next());
    expect(delays).toEqual([200, 250, 300, 350, 398]);
    expect(new Set(delays).size).toBe(draws.length);
  });

  it('jitters with Math.random by default: many monitors never retry in step', () => {
    const delays = Array.from({ length: 20 }, () => new Backoff({ initialMs: 1_000, maxMs: 1_000 }).next());
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(500);
      expect(d).toBeLessThanOrEqual(1_000);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('doubles the step up to the cap and stays there, however many failures', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1_000, random: () => 0.999_999 });
    const steps = Array.from({ length: 40 }, () => Math.round(b.next()));
    expect(steps.slice(0, 6)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(Math.max(...steps)).toBe(1_000);
    expect(steps.at(-1)).toBe(1_000);
  });

  it('starts from the first step again after a success', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 10_000, random: sequence(0) });
    b.next();
    b.next();
    expect(b.next()).toBe(200);
    b.reset();
    expect(b.next()).toBe(50);
  });

  it('defaults: 250 ms first step, 5 s cap', () => {
    expect([DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_MAX_MS]).toEqual([250, 5_000]);
    const b = new Backoff({ random: () => 0 });
    const delays = Array.from({ length: 8 }, () => b.next());
    expect(delays).toEqual([125, 250, 500, 1_000, 2_000, 2_500, 2_500, 2_500]);
  });
});

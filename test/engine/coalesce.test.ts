// Bursts of requests become runs at least the gap apart: one at once, one at the end of the gap.
import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/engine/coalesce.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Coalescer', () => {
  it('runs the first request almost at once and folds the rest of a burst into one trailing run', async () => {
    const runs: number[] = [];
    const c = new Coalescer(() => runs.push(performance.now()), 40);
    const t0 = performance.now();
    c.request();
    await sleep(5);
    expect(runs).toHaveLength(1); // leading edge
    for (let i = 0; i < 50; i++) c.request();
    await sleep(80);
    expect(runs).toHaveLength(2); // trailing edge
    expect(runs[0]! - t0).toBeLessThan(20);
    expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(40);
    c.cancel();
  });

  it('flush runs a pending request now; cancel drops it', async () => {
    let n = 0;
    const c = new Coalescer(() => n++, 1000);
    c.request();
    await sleep(5);
    c.request();
    expect(c.pending).toBe(true);
    c.flush();
    expect(n).toBe(2);
    c.request();
    c.cancel();
    await sleep(20);
    expect(n).toBe(2);
    expect(c.pending).toBe(false);
  });
});

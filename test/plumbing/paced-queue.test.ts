// Frames applied in order as they arrive, a slice of the clock at a time with the event loop's
// other work between slices; the producer paused past `high` waiting, resumed at `low`.
import { describe, expect, it } from 'vitest';
import { PacedQueue } from '../../src/plumbing/paced-queue.js';
import { until } from '../support/wait.js';

/** A clock on which every look at the time finds 1 ms more gone. */
function busyClock() {
  let t = 0;
  return () => t++;
}

function queue(log: (string | number)[], opts: { high?: number; low?: number } = {}) {
  const producer: string[] = [];
  const q = new PacedQueue<number>({
    apply: (n) => log.push(n),
    sliceMs: 3,
    high: opts.high ?? 1_000,
    low: opts.low ?? 0,
    pause: () => producer.push('pause'),
    resume: () => producer.push('resume'),
    monotonic: busyClock(),
  });
  return { q, producer };
}

describe('PacedQueue', () => {
  it('applies every item in order, a few per slice, with other work let in between slices', async () => {
    const log: (string | number)[] = [];
    const { q } = queue(log);
    for (let i = 1; i <= 7; i++) q.push(i);
    setImmediate(() => log.push('other'));
    expect(log).toEqual([]);
    await until(() => q.waiting === 0 && log.includes('other'), 2_000, 'every item applied');
    expect(log.filter((x) => typeof x === 'number')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // One slice's worth, then the other work, then the rest.
    expect(log.indexOf('other')).toBeGreaterThan(0);
    expect(log.indexOf('other')).toBeLessThan(log.length - 1);
  });

  it('pauses its producer past high and resumes it once low or fewer wait', async () => {
    const log: (string | number)[] = [];
    const { q, producer } = queue(log, { high: 5, low: 2 });
    for (let i = 1; i <= 6; i++) q.push(i);
    expect(producer).toEqual(['pause']);
    await until(() => q.waiting === 0, 2_000, 'drained');
    expect(producer).toEqual(['pause', 'resume']);
  });

  it('flush applies what waits now; clear drops it', async () => {
    const log: (string | number)[] = [];
    const { q } = queue(log);
    q.push(1);
    q.push(2);
    q.flush();
    expect(log).toEqual([1, 2]);
    q.push(3);
    q.clear();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([1, 2]);
    expect(q.waiting).toBe(0);
  });
});

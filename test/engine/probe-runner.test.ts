// Probes without overlap: one run per kind in flight (a second call gets the same run), failures
// swallowed, a queue drained batch by batch (what is queued meanwhile starts another run), and
// stop() aborts every run and waits for it; reset() gives a restart a fresh signal.
import { describe, expect, it } from 'vitest';
import { ProbeRunner } from '../../src/engine/probe-runner.js';
import { settle } from './fake-clock.js';

/** A promise the test resolves by hand. */
function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

describe('ProbeRunner.run', () => {
  it('one run per kind: while it runs, a second call returns it and does not start another; other kinds run alongside', async () => {
    const runner = new ProbeRunner<'kill' | 'full'>();
    const g = gate();
    let starts = 0;
    const first = runner.run('kill', async () => {
      starts++;
      await g.promise;
    });
    expect(runner.isRunning('kill')).toBe(true);
    expect(runner.isRunning('full')).toBe(false);
    expect(runner.current('kill')).toBe(first);
    expect(runner.current('full')).toBeUndefined();
    expect(runner.run('kill', async () => void starts++)).toBe(first);
    const other = runner.run('full', async () => {});
    expect(other).not.toBe(first);
    expect(starts).toBe(1);
    g.open();
    await first;
    expect(runner.isRunning('kill')).toBe(false);
    expect(runner.current('kill')).toBeUndefined();
    await runner.run('kill', async () => void starts++);
    expect(starts).toBe(2);
  });

  it('a failing run is swallowed and frees its kind', async () => {
    const runner = new ProbeRunner<'kill'>();
    await expect(runner.run('kill', () => Promise.reject(new Error('EIO')))).resolves.toBeUndefined();
    expect(runner.isRunning('kill')).toBe(false);
  });

  it('stop aborts the shared signal and waits for every run; reset gives a fresh signal only after an abort', async () => {
    const runner = new ProbeRunner<'kill'>();
    const seen: AbortSignal[] = [];
    await runner.run('kill', async (s) => void seen.push(s));
    await runner.run('kill', async (s) => void seen.push(s));
    runner.reset(); // not aborted: the same signal stays
    await runner.run('kill', async (s) => void seen.push(s));
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).toBe(seen[0]);
    expect(runner.aborted).toBe(false);

    const g = gate();
    let finished = false;
    void runner.run('kill', async (s) => {
      seen.push(s);
      await g.promise;
      finished = true;
    });
    const stopped = runner.stop();
    expect(runner.aborted).toBe(true);
    expect(seen[3]!.aborted).toBe(true);
    let done = false;
    void stopped.then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    g.open();
    await stopped;
    expect(finished).toBe(true);

    runner.reset();
    expect(runner.aborted).toBe(false);
    await runner.run('kill', async (s) => void seen.push(s));
    expect(seen[4]!.aborted).toBe(false);
    expect(seen[4]).not.toBe(seen[3]);
  });
});

describe('ProbeRunner.drain', () => {
  it('probes the queue in batches; what is queued while a batch is probed is the next batch of the same run', async () => {
    const runner = new ProbeRunner<'urgent'>();
    const queue = new Set([1, 2]);
    const batches: number[][] = [];
    const results: number[][] = [];
    const g = gate();
    runner.drain(
      'urgent',
      queue,
      async (batch) => {
        batches.push(batch);
        if (batches.length === 1) await g.promise;
        return new Map(batch.map((n) => [n, n * 10]));
      },
      (r) => results.push([...r.values()]),
    );
    expect(batches).toEqual([[1, 2]]);
    expect(queue.size).toBe(0);
    queue.add(3);
    g.open();
    await runner.current('urgent');
    await settle();
    expect(batches).toEqual([[1, 2], [3]]);
    expect(results).toEqual([[10, 20], [30]]);
    expect(runner.isRunning('urgent')).toBe(false);
  });

  it('what is queued after the run ended its loop, before it let go of its kind, starts another run', async () => {
    const runner = new ProbeRunner<'urgent'>();
    const queue = new Set([1]);
    const batches: number[][] = [];
    const probe = async (batch: number[]) => {
      batches.push(batch);
      return new Map<number, number>();
    };
    runner.drain('urgent', queue, probe, () => {});
    const first = runner.current('urgent')!;
    // The loop is over (the queue is empty); the run is still registered until it settles.
    await Promise.resolve();
    await Promise.resolve();
    queue.add(2);
    // A drain now finds the run still in flight and joins it.
    runner.drain('urgent', queue, probe, () => {});
    await first;
    await settle();
    expect(batches).toEqual([[1], [2]]);
    expect(queue.size).toBe(0);
  });

  it('a stopped runner drains nothing more, and an aborted batch is not folded', async () => {
    const runner = new ProbeRunner<'urgent'>();
    const queue = new Set([1]);
    const folded: number[] = [];
    const g = gate();
    runner.drain(
      'urgent',
      queue,
      async (batch) => {
        await g.promise;
        return new Map(batch.map((n) => [n, n]));
      },
      (r) => folded.push(...r.keys()),
    );
    queue.add(2);
    const stopped = runner.stop();
    g.open();
    await stopped;
    await settle();
    expect(folded).toEqual([]);
    expect(queue.has(2)).toBe(true);
    expect(runner.isRunning('urgent')).toBe(false);
  });
});

describe('ProbeRunner after stop', () => {
  it('a drain asked for once stopped probes nothing and leaves its queue; after reset the same queue is drained', async () => {
    const runner = new ProbeRunner<'urgent'>();
    await runner.stop();
    const queue = new Set([1, 2]);
    const batches: number[][] = [];
    const folded: number[] = [];
    const probe = async (batch: number[]) => {
      batches.push(batch);
      return new Map(batch.map((n) => [n, n]));
    };
    runner.drain('urgent', queue, probe, (r) => folded.push(...r.keys()));
    await runner.current('urgent');
    await settle();
    expect(batches).toEqual([]);
    expect([...queue]).toEqual([1, 2]);
    expect(runner.isRunning('urgent')).toBe(false);

    runner.reset();
    runner.drain('urgent', queue, probe, (r) => folded.push(...r.keys()));
    await runner.current('urgent');
    await settle();
    expect(batches).toEqual([[1, 2]]);
    expect(folded).toEqual([1, 2]);
    expect(queue.size).toBe(0);
  });

  it('a run asked for once stopped gets the aborted signal', async () => {
    const runner = new ProbeRunner<'kill'>();
    await runner.stop();
    let seen: AbortSignal | undefined;
    await runner.run('kill', async (s) => void (seen = s));
    expect(seen?.aborted).toBe(true);
  });
});

// The engine under a flood of registry changes (issue 26), on a hand-driven clock: changes within
// one frame are one recompute; a recompute that costs more than a frame leaves the loop to keys,
// reads and probes for twice its cost before the next, however fast changes come; and a
// recompute of a large registry runs in slices, so that other work due meanwhile runs before it
// publishes. None of this reads the machine's clock: the fake clock says how long work took.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.js';
import type { SessionEntry } from '../../src/core/types.js';
import type { SourceSnapshot } from '../../src/sources/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

const HOST = 'fakehost';

/** Sessions on other machines: judged `remote` with no probe, so only recomputes cost anything. */
function remoteSessions(n: number): SessionEntry[] {
  return Array.from({ length: n }, (_, i) => FakeSource.session(`s-${i}`, { machine: `node-${i % 7}.example`, pid: 10_000 + i, port: 20_000 + i }));
}

/** A source whose every read costs `cost` ms of the clock (a registry so large that reading it takes that long); it notes when each read began. */
class CostlySource extends FakeSource {
  readonly reads: number[] = [];
  constructor(
    private readonly fake: FakeClock,
    private readonly cost: number,
  ) {
    super(fake);
  }
  override snapshot(): SourceSnapshot {
    this.reads.push(this.fake.t);
    this.fake.spend(this.cost);
    return super.snapshot();
  }
}

/** A clock on which every look at the time finds 1 ms more gone: work that looks at the time often takes time. */
class BusyClock extends FakeClock {
  private looks = 0;
  override monotonic(): number {
    return super.monotonic() + this.looks++;
  }
}

function engineOn(clock: FakeClock, source: FakeSource) {
  const engine = createEngine({ sources: [source], hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes: new FakeProbes(clock), clock });
  onCleanup(() => engine.stop());
  return engine;
}

describe('the engine under a flood of registry changes', () => {
  it('changes within one frame are one recompute at most after the one that ran at once, not one each', async () => {
    const clock = new FakeClock();
    const source = new FakeSource(clock);
    const engine = engineOn(clock, source);
    engine.start();
    source.set(remoteSessions(20));
    await clock.advance(1_000);
    const before = engine.stats();
    for (let i = 0; i < 30; i++) {
      source.poke();
      await clock.advance(1);
    }
    await clock.advance(100);
    // The first at once (leading edge), the other 29 folded into one at the end of the frame.
    expect(engine.stats().recomputes - before.recomputes).toBe(2);
  });

  it('a recompute that costs 300 ms leaves the loop free for twice that before the next, however fast changes come', async () => {
    const clock = new FakeClock();
    const cost = 300;
    const source = new CostlySource(clock, cost);
    const engine = engineOn(clock, source);
    engine.start();
    source.set(remoteSessions(20));
    await clock.advance(1_000);
    // A change every 5 ms for 10 s: 2,000 of them.
    const from = source.reads.length;
    const flood = clock.setInterval(() => source.poke(), 5);
    await clock.advance(10_000);
    clock.clearInterval(flood);
    const reads = source.reads.slice(from);
    const rests = reads.slice(1).map((start, i) => start - (reads[i]! + cost));
    expect(reads.length).toBeGreaterThan(3);
    expect(Math.min(...rests)).toBeGreaterThanOrEqual(2 * cost);
    // So at most one 300 ms recompute every 900 ms: the rest of the time is the keys'.
    expect(reads.length).toBeLessThanOrEqual(Math.ceil(10_000 / (3 * cost)) + 1);
  });

  it('a recompute of 5,000 rows runs in slices: a timer due when it starts runs before it publishes, and what it publishes is every row', async () => {
    const clock = new BusyClock();
    const source = new FakeSource(clock);
    const engine = engineOn(clock, source);
    engine.start();
    await clock.advance(100);
    const version = engine.getSnapshot().version;
    source.set(remoteSessions(5_000));
    // Armed after the recompute's own timer, for the same moment: it fires right after it.
    let seen: { version: number; rows: number } | undefined;
    clock.setTimeout(() => (seen = { version: engine.getSnapshot().version, rows: engine.getSnapshot().findings.length }), 0);
    await clock.advance(1_000);
    expect(seen).toEqual({ version, rows: 0 });
    expect(engine.getSnapshot().findings).toHaveLength(5_000);
    expect(engine.getSnapshot().findings.every((f) => f.verdict === 'remote')).toBe(true);
  });
});

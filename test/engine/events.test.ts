// The engine's events on a hand-driven clock: what happened, at the moment the engine saw it,
// kept in a ring of the last 200 for the events pane.
import { describe, expect, it } from 'vitest';
import { eventText, type WatchEvent } from '../../src/core/events.js';
import type { LiveEngine } from '../../src/engine/index.js';
import { EVENTS_KEPT } from '../../src/engine/types.js';
import { FAKE_HOST as HOST, fakeEngine } from './fake-engine.js';
import { FakeSource } from './fake-source.js';

const events = (engine: LiveEngine): readonly WatchEvent[] => engine.getSnapshot().events ?? [];
const texts = (engine: LiveEngine): string[] => events(engine).map(eventText);
const agent = (id: string, pid: number, fields: { offline?: boolean } = {}) => FakeSource.session(id, { machine: HOST, pid, ...fields });

describe('engine events on a fake clock', () => {
  it('tells the first settled view once, then each change at the moment it is seen', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok' });
    probes.processes.set(101, { kill: 'ok' });
    engine.start();
    await clock.advanceTo(100);
    expect(events(engine)).toEqual([]); // not settled: nothing to tell yet
    source.set([agent('a1', 100)]);
    await clock.advanceTo(200);
    expect(texts(engine)).toEqual(['fake: connected, 1 row']);

    source.set([agent('a1', 100), agent('a2', 101)]);
    await clock.advanceTo(300);
    // It joins with its first verdict, when its pid has answered (never as a flash of `unverified`).
    expect(events(engine).at(-1)).toMatchObject({ kind: 'joined', id: 'a2', verdict: 'live' });
    expect(events(engine).at(-1)!.at).toBeGreaterThanOrEqual(clock.wallStart + 200);
    expect(events(engine)).toHaveLength(2);

    // SIGKILLed: the registry marks it offline, and the next liveness tick finds its pid gone.
    probes.processes.delete(101);
    source.set([agent('a1', 100), agent('a2', 101, { offline: true })]);
    await clock.advanceTo(1_000);
    expect(texts(engine).slice(2)).toEqual(['a2 went offline (fake)', expect.stringMatching(/^a2 judged ghost \(was (live|offline)\): /)]);
    const judged = events(engine).at(-1)!;
    expect(judged.at).toBeGreaterThan(clock.wallStart + 300);

    source.set([agent('a1', 100)]);
    await clock.advanceTo(1_100);
    expect(texts(engine).at(-1)).toBe('a2 left fake');
  });

  it('a lost registry is one event, and so is its return, not one per row', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    for (let pid = 100; pid < 150; pid++) probes.processes.set(pid, { kill: 'ok' });
    const rows = Array.from({ length: 50 }, (_, i) => agent(`a${i}`, 100 + i));
    engine.start();
    source.set(rows);
    await clock.advanceTo(200);
    source.set(rows, 'unreachable');
    await clock.advanceTo(300);
    source.set(rows.slice(0, 40));
    await clock.advanceTo(400);
    expect(texts(engine)).toEqual(['fake: connected, 50 rows', 'fake: unreachable', 'fake: connected, 40 rows']);
  });

  it('an eviction of ours is told as evicted, and its row leaving is not told again', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    probes.processes.set(100, { kill: 'ok' });
    engine.start();
    source.set([agent('a1', 100), agent('g1', 300)]);
    await clock.advanceTo(200);
    const ghost = engine.getSnapshot().findings.find((f) => f.id === 'g1')!;
    expect(ghost.verdict).toBe('ghost');
    const evicting = engine.evict({ selection: [ghost], force: false });
    await clock.advance(100);
    await evicting;
    source.set([agent('a1', 100)]);
    await clock.advance(100);
    expect(texts(engine)).toEqual(['fake: connected, 2 rows', 'g1 evicted from fake']);
  });

  it('keeps the last 200 events, oldest dropped first', async () => {
    const { clock, probes, source, engine } = fakeEngine();
    engine.start();
    source.set([]);
    await clock.advance(100);
    for (let i = 0; i < 130; i++) {
      probes.processes.set(1_000 + i, { kill: 'ok' });
      source.set([agent(`n${i}`, 1_000 + i)]);
      await clock.advance(300);
    }
    // Each step: n(i-1) left, and n(i) joined once its pid answered: 1 + 130 + 129 events in all.
    expect(events(engine)).toHaveLength(EVENTS_KEPT);
    expect(texts(engine).at(-1)).toBe('n129 joined fake');
    expect(texts(engine).at(-2)).toBe('n128 left fake');
    expect(texts(engine)[0]).toBe('n29 left fake');
  });
});

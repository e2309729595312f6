// The "answering" probe's rounds on a hand-driven clock with a scripted probe: which agents are
// asked (this host's, active, WebSocket, running, listening), how misses are counted and what is
// kept, how fast requests start (HANDSHAKE_RATE), and that there is no timer without targets.
import { describe, expect, it } from 'vitest';
import type { PidFacts, RegistryView, SessionEntry } from '../../src/core/types.js';
import { HANDSHAKE_RATE, HandshakeTracker, handshakeTargets, LISTENING_REFRESH_MS, type UpgradeProbe } from '../../src/engine/handshakes.js';
import type { UpgradeAnswer } from '../../src/os/ws-handshake.js';
import { FakeClock } from './fake-clock.js';

const HOST = 'devbox';
const isLocal = (m: string | undefined) => m === HOST;
const agent = (i: number, f: Partial<SessionEntry> = {}): SessionEntry => ({ source: 'hypivisor', id: `a${i}`, machine: HOST, port: 8000 + i, pid: 100 + i, portProtocol: 'websocket', status: 'active', ...f });
const view = (sessions: SessionEntry[]): RegistryView => ({ sessions, claims: [] });

function setup(opts: { answer?: (port: number) => UpgradeAnswer; listening?: (ports: readonly number[]) => ReadonlySet<number> | undefined; pid?: (pid: number) => PidFacts | undefined } = {}) {
  const clock = new FakeClock();
  const asked: { port: number; at: number }[] = [];
  let changes = 0;
  const probe: UpgradeProbe = {
    listening: async (ports) => opts.listening?.(ports) ?? new Set(ports),
    ask: async (port) => {
      asked.push({ port, at: clock.t });
      return opts.answer?.(port) ?? { result: 'answered', detail: 'HTTP/1.1 400 Bad Request', ms: 1 };
    },
  };
  const tracker = new HandshakeTracker({
    isLocal,
    pidFacts: opts.pid ?? ((pid) => ({ pid, kill: 'ok', state: 'S', checkedAt: 0 })),
    clock,
    now: () => clock.now(),
    intervalScale: 1,
    onChange: () => changes++,
    probe,
  });
  return { clock, tracker, asked, changes: () => changes };
}

describe('the answering probe', () => {
  it('asks only active WebSocket agents of this host with a usable pid and port', () => {
    const targets = handshakeTargets(
      view([
        agent(1),
        agent(2, { portProtocol: undefined }),
        agent(3, { machine: 'elsewhere' }),
        agent(4, { offline: true }),
        agent(5, { pid: undefined }),
        agent(6, { port: 'x' }),
        agent(7, { pidDomain: { text: 'linux:m:pid:[1]' } }),
      ]),
      isLocal,
    );
    expect([...targets]).toEqual([[8001, 101]]);
  });

  it('no timer without targets; one round per full cadence with them; none after stop', async () => {
    const { clock, tracker } = setup();
    tracker.start();
    expect(clock.intervals()).toEqual([]);
    tracker.setView(view([agent(1)]));
    expect(clock.intervals()).toEqual([2_000]);
    tracker.setView(view([]));
    expect(clock.intervals()).toEqual([]);
    tracker.setView(view([agent(1)]));
    await tracker.stop();
    expect(clock.intervals()).toEqual([]);
  });

  it('counts misses in a row; keeps nothing for an answer; changes only when what the rule reads does', async () => {
    let hung = true;
    const { clock, tracker, changes } = setup({ answer: () => (hung ? { result: 'timeout', detail: 'no answer within 2000 ms', ms: 2_000 } : { result: 'answered', ms: 3 }) });
    tracker.setView(view([agent(1)]));
    tracker.start();
    await clock.advance(2_000);
    expect(tracker.facts.get(8001)).toMatchObject({ result: 'timeout', misses: 1, boundMs: 2_000 });
    await clock.advance(2_000);
    const second = tracker.facts.get(8001);
    expect(second).toMatchObject({ misses: 2 });
    expect(changes()).toBe(2);
    await clock.advance(4_000);
    expect(tracker.facts.get(8001)).toBe(second); // a third and fourth miss: nothing new for the rule
    expect(changes()).toBe(2);
    hung = false;
    await clock.advance(2_000);
    expect(tracker.facts.has(8001)).toBe(false);
    expect(changes()).toBe(3);
    await tracker.stop();
  });

  it('a stopped, dead or not listening agent is not asked, and what was kept of it goes', async () => {
    const state = new Map<number, PidFacts>([[101, { pid: 101, kill: 'ok', state: 'S', checkedAt: 0 }]]);
    let listening = true;
    const { clock, tracker, asked } = setup({ answer: () => ({ result: 'timeout', ms: 2_000 }), pid: (pid) => state.get(pid), listening: (ports) => (listening ? new Set(ports) : new Set()) });
    tracker.setView(view([agent(1), agent(2)]));
    tracker.start();
    await clock.advance(2_000);
    expect(asked.map((a) => a.port)).toEqual([8001]); // pid 102: no facts yet
    expect(tracker.facts.has(8001)).toBe(true);
    state.set(101, { pid: 101, kill: 'ok', state: 'T', checkedAt: 0 });
    await clock.advance(2_000);
    expect(asked).toHaveLength(1);
    expect(tracker.facts.has(8001)).toBe(false);
    state.set(101, { pid: 101, kill: 'ok', state: 'S', checkedAt: 0 });
    await clock.advance(2_000);
    expect(asked).toHaveLength(2);
    // It stops listening: seen at the next read of the socket table.
    listening = false;
    await clock.advance(LISTENING_REFRESH_MS);
    const before = asked.length;
    await clock.advance(2_000);
    expect(asked).toHaveLength(before);
    expect(tracker.facts.has(8001)).toBe(false);
    state.set(101, { pid: 101, kill: 'ESRCH', checkedAt: 0 });
    listening = true;
    await clock.advance(LISTENING_REFRESH_MS);
    expect(asked).toHaveLength(before);
    await tracker.stop();
  });

  it('reads the socket table once per refresh, and at once for a port it has not read', async () => {
    const reads: (readonly number[])[] = [];
    const { clock, tracker } = setup({ listening: (ports) => (reads.push(ports), new Set(ports)) });
    tracker.setView(view([agent(1)]));
    tracker.start();
    await clock.advance(10_000);
    expect(reads).toEqual([[8001]]);
    tracker.setView(view([agent(1), agent(2)]));
    await clock.advance(2_000);
    expect(reads).toEqual([[8001], [8001, 8002]]);
    await clock.advance(LISTENING_REFRESH_MS);
    expect(reads).toHaveLength(3);
    await tracker.stop();
  });

  it(`starts at most ${HANDSHAKE_RATE} requests a second, however many agents; a round that long makes the next ticks no-ops`, async () => {
    const { clock, tracker, asked } = setup();
    tracker.setView(view(Array.from({ length: 100 }, (_, i) => agent(i))));
    tracker.start();
    await clock.advance(2_000);
    await clock.advance(3_000);
    const starts = asked.map((a) => a.at);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(1000 / HANDSHAKE_RATE);
    expect(asked.length).toBeLessThanOrEqual(HANDSHAKE_RATE * 3 + 1);
    // Still the first round: the tick at 4 s found it running and did nothing; each agent asked once.
    expect(tracker.rounds).toBe(0);
    expect(new Set(asked.map((a) => a.port)).size).toBe(asked.length);
    await clock.advance(1_000);
    expect(tracker.rounds).toBe(1);
    expect(new Set(asked.slice(0, 100).map((a) => a.port)).size).toBe(100);
    await tracker.stop();
  });
});

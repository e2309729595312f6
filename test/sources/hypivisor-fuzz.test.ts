import { afterEach, describe, expect, it } from 'vitest';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { node, startScriptedRegistry, type ScriptedRegistry } from '../support/scripted-registry.js';
import { until } from '../support/wait.js';

// Seeded, so a failure is reproducible.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

const HOSTILE = [
  null, true, 0, -1, 1.5, 2 ** 53, 1e308, -0, '', '\u001b[2J\u001b]0;pwned\u0007', '\u202Eevil', 'x'.repeat(2000),
  [], [1, 2], {}, { nested: { deeper: [null] } }, 'pending-1', '123',
];

const SEEDS: unknown[] = [
  { event: 'init', nodes: [node('a', { pid: 1 }), node('b')], protocol_version: '1', claims: [] },
  { event: 'node_joined', node: node('c', { pid: 4242, registered_at: 1_800_000_000 }) },
  { event: 'node_offline', id: 'a' },
  { event: 'node_removed', id: 'b' },
  { event: 'claim_acquired', claim: { resource: 'r', holder: 'a', pid: 5, acquired_at: 1 } },
  { event: 'claim_released', resource: 'r' },
  { event: 'something_new', data: 1 },
  { id: 'gw-1', result: [] },
  { id: 7, result: { status: 'deregistered' } },
  { id: 'gw-2', error: 'Method not found: x' },
];

function mutate(value: unknown, rand: () => number): unknown {
  if (Array.isArray(value)) return value.map((v) => (rand() < 0.3 ? mutate(v, rand) : v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const roll = rand();
      if (roll < 0.1) continue; // drop the key
      out[roll < 0.15 ? `${k}\u0000` : k] = roll < 0.4 ? HOSTILE[Math.floor(rand() * HOSTILE.length)] : mutate(v, rand);
    }
    return out;
  }
  return rand() < 0.5 ? HOSTILE[Math.floor(rand() * HOSTILE.length)] : value;
}

function frame(rand: () => number): string {
  const seed = SEEDS[Math.floor(rand() * SEEDS.length)];
  const roll = rand();
  if (roll < 0.15) return JSON.stringify(seed); // valid as it is
  const text = JSON.stringify(mutate(seed, rand));
  if (roll < 0.3) return text.slice(0, Math.floor(rand() * text.length)); // truncated
  if (roll < 0.4) {
    const chars = [...text];
    chars[Math.floor(rand() * chars.length)] = String.fromCharCode(Math.floor(rand() * 0x3000));
    return chars.join(''); // one character flipped
  }
  if (roll < 0.45) return HOSTILE.map((h) => JSON.stringify(h)).join(rand() < 0.5 ? ',' : '') || '""';
  return text;
}

const KNOWN = new Set(['init', 'node_joined', 'node_offline', 'node_removed', 'claim_acquired', 'claim_released']);

let reg: ScriptedRegistry | undefined;
let src: HypivisorSource | undefined;
afterEach(async () => {
  await src?.stop();
  await reg?.close();
});

describe('hostile frames at the client', () => {
  it('survives 10,000 fuzzed frames, counts them exactly, and still works afterwards', async () => {
    reg = await startScriptedRegistry(); // answers no request: only what we send arrives
    src = new HypivisorSource({ url: reg.url, requestTimeoutMs: 60_000, resyncIntervalMs: 60_000 });
    src.start();
    await until(() => src!.snapshot().state.status === 'connected');

    const rand = rng(20_261_122);
    const frames = Array.from({ length: 10_000 }, () => frame(rand));
    let invalidJson = 0;
    let unknownEvents = 0;
    for (const f of frames) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(f);
      } catch {
        invalidJson++;
        continue;
      }
      const event = (parsed as { event?: unknown } | null)?.event;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && typeof event === 'string' && !KNOWN.has(event)) unknownEvents++;
    }
    for (const f of frames) reg.send(f);
    await until(() => src!.snapshot().state.counters.frames === 10_001, 20_000, 'all frames');

    const state = src.snapshot().state;
    expect(state.status).toBe('connected');
    expect(state.counters.invalidJson).toBe(invalidJson);
    expect(state.counters.unknownEvents).toBe(unknownEvents);
    expect(invalidJson).toBeGreaterThan(1000); // the generator really produced garbage...
    expect(state.counters.badFrames + state.counters.badEntries).toBeGreaterThan(500); // ...and wrong shapes
    for (const s of src.snapshot().sessions) expect(typeof s.id).toBe('string');

    reg.send({ event: 'node_joined', node: node('after-the-storm', { pid: 99 }) });
    await until(() => src!.snapshot().sessions.some((s) => s.id === 'after-the-storm'));
  });
});

// Values nested 100,000 levels deep from a registry (issue 13): the client takes them in with their
// depth capped, so nothing downstream overflows the stack; a frame that cannot be parsed is counted
// and dropped; `check --json` prints them; `status` reads them. Real ws servers on 127.0.0.1.
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEEPER_MARK, MAX_DEPTH } from '../../src/core/sanitize.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { parseFrame, toClaimEntry, toSessionEntry } from '../../src/sources/hypivisor/wire.js';
import { readInitSnapshot } from '../../src/sources/hypivisor/init-reader.js';
import { runCli } from '../support/cli.js';
import { startScriptedRegistry, type Script, type ScriptedRegistry } from '../support/scripted-registry.js';
import { until } from '../support/wait.js';
import { BUILT } from '../support/tmux.js';

const LEVELS = 100_000;
/** JSON text of an array nested LEVELS deep, written as text: JSON.stringify would overflow on it. */
const DEEP = `${'['.repeat(LEVELS)}1${']'.repeat(LEVELS)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(LEVELS)}1${'}'.repeat(LEVELS)}`;

function depthOf(value: unknown): number {
  let depth = 0;
  let v = value;
  // The test's own walk is a loop: it must not overflow where the code under test would not.
  while (typeof v === 'object' && v !== null) {
    depth++;
    v = Array.isArray(v) ? v[0] : Object.values(v)[0];
  }
  return depth;
}

const node = (id: string) => `{"id":"${id}","machine":"${hostname()}","cwd":"/tmp","port":${DEEP},"status":"active","pid":${DEEP},"meta":${DEEP_OBJECT}}`;
const initText = () => `{"event":"init","protocol_version":"1","nodes":[${node('deep-1')}],"claims":[{"resource":"/work/deep","holder":"deep-1","extra":${DEEP}}]}`;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function registry(answer?: Script['answer']): Promise<ScriptedRegistry> {
  const r = await startScriptedRegistry({ init: () => initText(), answer });
  cleanups.push(() => r.close());
  return r;
}

describe('deep values in the wire format', () => {
  it('caps an entry at MAX_DEPTH levels when it is taken in, everywhere in it', () => {
    const frame = parseFrame(initText());
    expect(frame.kind).toBe('init');
    if (frame.kind !== 'init') return;
    const entry = toSessionEntry(frame.nodes[0], 'hypivisor', { firstObservedAt: 0, joinSeq: 0 }, Date.now())!;
    expect(entry.id).toBe('deep-1');
    for (const v of [entry.pid, entry.port, entry.raw, (entry.raw as Record<string, unknown>).meta]) expect(depthOf(v)).toBeLessThanOrEqual(MAX_DEPTH);
    expect(JSON.stringify(entry)).toContain(DEEPER_MARK);
    const claim = toClaimEntry(frame.claims![0], 'hypivisor', Date.now())!;
    expect(() => JSON.stringify(claim)).not.toThrow();
    expect(JSON.stringify(claim.raw)).toContain(DEEPER_MARK);
  });

  it('keeps a shallow entry as it came (no copy)', () => {
    const n = { id: 'a', pid: 1, meta: { tags: [['x']] } };
    expect(toSessionEntry(n, 'hypivisor', { firstObservedAt: 0, joinSeq: 0 }, Date.now())!.raw).toBe(n);
  });

  it('words an error object nested 100,000 levels as text, without overflowing', () => {
    const frame = parseFrame(`{"id":"gw-1","error":${DEEP_OBJECT}}`);
    expect(frame.kind).toBe('response');
    if (frame.kind === 'response') expect(frame.error).toMatch(/^\{"a":\{"a":/);
  });
});

describe('the client against a registry that nests 100,000 levels', () => {
  it('shows the entry with its depth capped, counts a frame that is no object, survives a deep error answer', async () => {
    const r = await registry((req) => (req.method === 'deregister' ? `{"id":${JSON.stringify(req.id)},"error":${DEEP_OBJECT}}` : req.method === 'list_claims' ? { id: req.id, result: [] } : undefined));
    const src = new HypivisorSource({ url: r.url, resyncIntervalMs: 600_000 });
    cleanups.push(() => src.stop());
    src.start();
    await until(() => src.snapshot().sessions.length === 1, 5_000, 'the init');
    const entry = src.snapshot().sessions[0]!;
    expect(JSON.stringify(entry)).toContain(DEEPER_MARK);
    expect(depthOf(entry.pid)).toBeLessThanOrEqual(MAX_DEPTH);

    // A whole frame 100,000 levels deep is no object: counted as a bad frame, dropped.
    r.send(DEEP);
    await until(() => src.snapshot().state.counters.badFrames + src.snapshot().state.counters.invalidJson >= 1, 5_000, 'the frame counted');
    expect(src.snapshot().state.status).toBe('connected');

    // A refusal whose error is 100,000 levels deep: a refusal in words, not an exception.
    const outcome = await src.evict({ type: 'deregister', id: 'deep-1' } as Parameters<HypivisorSource['evict']>[0]);
    expect(outcome.outcome).toBe('refused');
    expect(outcome.outcome === 'refused' ? outcome.error.length : 0).toBeLessThanOrEqual(200);
    expect(src.snapshot().state.status).toBe('connected');
  });

  it('status reads a deep init (the one-read client)', async () => {
    const r = await registry();
    const init = await readInitSnapshot({ url: r.url, timeoutMs: 5_000 });
    const entry = toSessionEntry(init.nodes[0], 'hypivisor', { firstObservedAt: 0, joinSeq: 0 }, Date.now())!;
    expect(() => JSON.stringify(entry)).not.toThrow();
  });
});

describe.runIf(BUILT)('check --json against a registry that nests 100,000 levels', () => {
  it('prints one JSON object with the marker where the depth was cut', async () => {
    const r = await registry((req) => (req.method === 'list_nodes' ? `{"id":${JSON.stringify(req.id)},"result":[${node('deep-1')}]}` : req.method === 'list_claims' ? { id: req.id, result: [] } : undefined));
    const dir = mkdtempSync(join(tmpdir(), 'gw-deep-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = { ...process.env, XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir, HYPI_TOKEN: '', HYPIVISOR_WS: '', NO_COLOR: '1' };
    const run = await runCli(['check', '--json', '--registry', r.url, '--timeout', '5'], env);
    expect(run.stderr).not.toMatch(/RangeError|call stack/);
    const out = JSON.parse(run.stdout) as { findings: { id: string; entry: unknown }[] };
    const f = out.findings.find((x) => x.id === 'deep-1')!;
    expect(JSON.stringify(f.entry)).toContain(DEEPER_MARK);
    const plain = await runCli(['check', '--registry', r.url, '--timeout', '5'], env);
    expect(plain.stderr).not.toMatch(/RangeError|call stack/);
    expect(plain.stdout).toContain('deep-1');
  }, 30_000);
});

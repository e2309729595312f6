// Nothing from outside reaches the terminal raw, in the TUI (issue 13): the real App over the real
// reconcile, every string a registry, a source state or an eviction can carry generated hostile
// (OSC 52, OSC 8, OSC 0, CSI, C1, bidi, zero-width, lone surrogates). Rendered without colour
// (chalk level 0), so no escape in a frame is legitimate: every frame of every screen — table rows,
// header and state lines, the detail view, help, the filter prompt, the confirm dialog, the
// eviction progress line and its result line — must hold no ESC, C0 but newline, C1, bidi or
// zero-width code point.
import chalk from 'chalk';
import fc from 'fast-check';
import { render } from 'ink-testing-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile, type ClaimEntry, type Finding, type PidFacts, type SessionEntry } from '../../src/core/index.js';
import type { EngineSnapshot, EvictProgress, EvictRequest, EvictSummary } from '../../src/engine/types.js';
import type { SourceState } from '../../src/sources/types.js';
import { App } from '../../src/ui/app.js';
import { hostileString, unsafeOutput } from '../support/hostile.js';
import { FIXED_NOW, HOST, source, StaticEngine } from '../support/ui-fixtures.js';

process.env.TZ = 'UTC';
const DEAD = 40_001;

/** An engine that reports hostile progress and a hostile result, and holds the progress until released. */
class HostileEngine extends StaticEngine {
  release: (() => void) | undefined;
  constructor(
    findings: readonly Finding[],
    fields: Partial<EngineSnapshot>,
    private readonly words: readonly string[],
  ) {
    super(findings, fields);
  }
  override async evict(request: EvictRequest): Promise<EvictSummary> {
    this.evictions.push(request);
    const w = this.words;
    const first = request.selection[0]!;
    const progress: EvictProgress = { index: 1, total: request.selection.length, finding: first, phase: 'refused', detail: `the registry said ${w[0]}` };
    request.onProgress?.(progress);
    await new Promise<void>((r) => (this.release = r));
    const results = request.selection.map((finding, i) => ({ finding, outcome: i === 0 ? ('refused' as const) : ('failed' as const), detail: `${w[i % w.length]} no`, forced: request.force }));
    return { results, needsForce: [], counts: { evicted: 0, 'already-gone': 0, skipped: 0, refused: 1, failed: results.length - 1 } };
  }
}

function hostileWorld(w: readonly string[]): HostileEngine {
  const [a = '', b = '', c = '', d = '', e = '', f = '', g = '', h = ''] = w;
  const raw = (fields: Record<string, unknown>) => ({ ...fields, [`x${e}`]: f, nested: { [g]: [h, { deeper: a }] } });
  const sessions: SessionEntry[] = [
    { source: `hypivisor${h}`, id: `ghost-${a}`, machine: HOST, cwd: `/home/${b}`, status: c, port: 8101, pid: DEAD, raw: raw({ id: `ghost-${a}`, cwd: b, status: c, last_seen: d }) },
    { source: `hypivisor${h}`, id: `odd-${b}`, machine: HOST, cwd: d, status: 'active', pid: `${e}`, raw: raw({ id: `odd-${b}`, pid: e }) },
    { source: `hypivisor${h}`, id: `far-${c}`, machine: `${f}.lan`, cwd: a, status: 'active', pid: 4242, raw: raw({ id: `far-${c}` }) },
    { source: `hypivisor${h}`, id: `dead-${d}`, machine: HOST, cwd: g, status: 'offline', offline: true, pid: DEAD, raw: raw({ id: `dead-${d}` }) },
  ];
  const claims: ClaimEntry[] = [{ source: `hypivisor${h}`, resource: `/work/${d}`, holder: `ghost-${a}`, pid: DEAD, note: e, raw: raw({ resource: d, holder: a }) }];
  const pids = new Map<number, PidFacts>([[DEAD, { pid: DEAD, kill: 'ESRCH', checkedAt: FIXED_NOW }]]);
  const findings = reconcile({ sessions, claims }, { pids, ports: new Map() }, FIXED_NOW, defaultPolicy(HOST));
  const sources: SourceState[] = [
    source({ name: `hypivisor${h}`, url: `ws://${a}@localhost:1/${b}`, status: 'connected', lastError: c, warnings: [d, e] }),
    source({ name: `agentctl${g}`, url: `/home/${f}/.agentctl`, status: 'unreachable', cause: `down ${g}`, lastError: h, downSince: FIXED_NOW - 10_000, retryAt: FIXED_NOW + 4_000 }),
  ];
  return new HostileEngine(findings, { sources, host: `${HOST}${a}`, os: { processTable: 'unavailable', processTableError: `no ps ${b}`, notices: [`notice ${c}`] } }, w);
}

const settle = () => new Promise((r) => setTimeout(r, 25));

/** Every frame the App wrote while the keys were typed, checked as they went. */
async function screens(engine: HostileEngine, size: { columns: number; rows: number }, typed: string, seen: string[] = []): Promise<string[]> {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => {}} />);
  const bad: string[] = [];
  const check = (where: string) => {
    for (const frame of r.frames) {
      seen.push(frame);
      const why = unsafeOutput(frame);
      if (why) bad.push(`${where}: ${why}`);
    }
    r.frames.length = 0;
  };
  const keys = async (where: string, ...ks: string[]) => {
    for (const k of ks) {
      r.stdin.write(k);
      await settle();
    }
    check(where);
  };
  try {
    await settle();
    check('table, header and state lines');
    await keys('detail view', '\r');
    await keys('detail view, scrolled', 'G');
    await keys('back', 'q');
    await keys('help', '?', 'G');
    await keys('back', 'q');
    await keys('filter prompt', '/', typed);
    await keys('filter cleared', '\u001b');
    await keys('claims tab', '\t');
    await keys('claim detail', '\r', 'q', '\t');
    await keys('confirm dialog', 'X');
    await keys('confirm force', 'y');
    await keys('eviction progress', 'f');
    engine.release?.();
    await keys('eviction result');
    return bad;
  } finally {
    r.unmount();
  }
}

/**
 * What a person types (or pastes) at the filter prompt, in one chunk: hostile, escape sequences
 * and all. (Ink 6's own useInput threw on some of them, "\u001b[31m" among them; the App reads
 * its keys itself now, keys.ts, and a paste's sequences never reach the filter.)
 */
const typedString = hostileString(3);

let level: typeof chalk.level;
beforeAll(() => {
  level = chalk.level;
  chalk.level = 0;
});
afterAll(() => {
  chalk.level = level;
});

describe('hostile strings on every TUI screen', () => {
  it('the frames hold nothing a terminal would act on or hide', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostileString(), { minLength: 8, maxLength: 8 }), typedString, async (words, typed) => {
        const engine = hostileWorld(words);
        expect(await screens(engine, { columns: 120, rows: 30 }, typed)).toEqual([]);
        expect(engine.evictions.length).toBe(1); // the eviction path was really taken
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('every piece at once, in a narrow pane too', async () => {
    const pieces = ['\u001b]52;c;cm0gLXJmIH4K\u0007', '\u001b]8;;https://evil.example/\u001b\\x\u001b]8;;\u001b\\', '\u001b]0;pwned\u0007', '\u001b[2J', '\u009b31m', '\u202e', '\u200b\ufeff', '\u0085\ud800'];
    for (const size of [{ columns: 120, rows: 30 }, { columns: 60, rows: 15 }]) {
      const engine = hostileWorld(pieces);
      const seen: string[] = [];
      expect(await screens(engine, size, pieces.join(''), seen)).toEqual([]);
      // Each screen was really drawn, its hostile text visible as text.
      const all = seen.join('\n');
      for (const text of ['registry entry', 'move down', 'Enter keeps it', 'Evict 2 entries', 'evicting 1/', 'refused', '<U+202E>']) expect(all).toContain(text);
    }
  }, 60_000);
});

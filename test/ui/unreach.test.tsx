// A registry that is not read, in the real App: the header says why in words, since when and
// when it retries (counting down); its last known rows stay, marked '~' with their age in plain
// text; they are never offered for eviction; an empty table says "not connected". Plus the
// detail view's local times that keep ticking, and the force dialog's word on live agents.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import { markStale } from '../../src/engine/snapshot.js';
import { App } from '../../src/ui/app.js';
import { confirmLines } from '../../src/ui/components/confirm.js';
import { confirmFor, type ConfirmState } from '../../src/ui/confirm-state.js';
import { CLAUDE_LIVE_EVICT_NOTE } from '../../src/sources/claude/session-companions.js';
import { detailLines } from '../../src/ui/detail.js';
import { demoFindings, downEngine, FIXED_NOW, source, StaticEngine } from '../support/ui-fixtures.js';
import { inTimeZone } from '../support/time-zone.js';

const settle = (ms = 30) => new Promise((r) => setTimeout(r, ms));
inTimeZone('UTC');

async function open(engine: StaticEngine, opts: { columns?: number; rows?: number; keys?: string[]; now?: () => number } = {}) {
  const r = render(<App engine={engine} now={opts.now ?? (() => FIXED_NOW)} home="/home/ana" size={{ columns: opts.columns ?? 120, rows: opts.rows ?? 30 }} onQuit={() => {}} />);
  await settle();
  for (const k of opts.keys ?? []) {
    r.stdin.write(k);
    await settle();
  }
  return r;
}
const lines = (r: { lastFrame(): string | undefined }) => (r.lastFrame() ?? '').split('\n');

describe('a registry that is not read, in the monitor', () => {
  it('the header says the cause in words, since when, and when it retries', async () => {
    const r = await open(downEngine({ cause: 'token refused (401)', status: 'auth-refused', kept: true }));
    expect(lines(r)[0]).toContain('hypivisor ws://localhost:31415/ws: not connected since 09:27 (token refused (401)), retrying in 4 s');
    r.unmount();
  });

  it('the retry countdown ticks while it is down', async () => {
    let now = FIXED_NOW;
    const r = await open(downEngine({ cause: 'connection refused', status: 'unreachable', kept: false }), { now: () => now });
    expect(lines(r)[0]).toContain('not connected since 09:27 (connection refused), retrying in 4 s');
    now += 2_000;
    await settle(1_100);
    expect(lines(r)[0]).toContain('retrying in 2 s');
    r.unmount();
  });

  it('an empty table says "not connected", never "no sessions"', async () => {
    const r = await open(downEngine({ cause: 'connection refused', status: 'unreachable', kept: false }), { rows: 16, columns: 100 });
    const frame = r.lastFrame() ?? '';
    expect(frame).toContain('not connected (hypivisor: connection refused)');
    expect(frame).not.toContain('no sessions');
    r.unmount();
  });

  it('its rows stay, each marked ~ with its age in plain text (no colour needed)', async () => {
    const r = await open(downEngine({ cause: 'token refused (401)', status: 'auth-refused', kept: true }));
    const rows = lines(r).filter((l) => /session|ghost|live|zombie/.test(l) && !l.startsWith('ghostwatch'));
    expect(rows.length).toBeGreaterThan(5);
    // The registry's own status first (issue 27: "stale <1m…" hid it), then how old the row is.
    expect(lines(r).find((l) => l.includes('c0ffee00-ghost'))).toMatch(/^> ?~!ghost .* active, (stale 2m|s…)$/);
    expect(lines(r).at(-2)).toMatch(/its 15 rows are the last known/);
    r.unmount();
  });

  it('stale rows are never offered for eviction: d and X say why, nothing is sent', async () => {
    const engine = downEngine({ cause: 'token refused (401)', status: 'auth-refused', kept: true });
    const r = await open(engine, { keys: ['d'] });
    expect(lines(r).at(-2)).toContain('not evicted: a stale row; hypivisor is not connected (token refused (401))');
    r.stdin.write('X');
    await settle();
    expect(lines(r).at(-2)).toMatch(/not evicted: \d+ stale rows; hypivisor is not connected/);
    r.stdin.write('y');
    r.stdin.write('f');
    await settle();
    expect(engine.evictions).toEqual([]);
    r.unmount();
  });

  it('a selection mixing stale and read rows leaves the stale ones out and says so', async () => {
    const fresh = demoFindings();
    const other = source({ name: 'other', status: 'unreachable', cause: 'connection dropped', downSince: FIXED_NOW - 60_000, confirmedAt: FIXED_NOW - 60_000 });
    // The same rows twice: once from a registry read now, once from one that dropped.
    const dropped = markStale(fresh.map((f) => ({ ...f, source: 'other', entry: { ...f.entry, source: 'other' } }) as Finding), [other]);
    const engine = new StaticEngine([...fresh, ...dropped], { sources: [source(), other] });
    const r = await open(engine, { keys: ['X'] });
    expect(r.lastFrame()).toMatch(/Left out: not evicted: \d+ stale rows; other is not connected \(connection dropped\)/);
    r.stdin.write('y');
    await settle();
    expect(engine.evictions).toHaveLength(1);
    expect(engine.evictions[0]!.selection.every((f) => f.source === 'hypivisor')).toBe(true);
    r.unmount();
  });

  it('the detail view of a stale row says so, with the time it was last current', () => {
    const [f] = markStale(demoFindings(), [source({ status: 'unreachable', cause: 'connection dropped', confirmedAt: FIXED_NOW - 75_000 })]);
    const stale = detailLines(f!, FIXED_NOW).find((l) => l.label === 'stale');
    expect(stale?.value).toBe('hypivisor is not connected (connection dropped): this is the last known row, current as of 09:28:45 (1m15s ago); not evictable until it reads the registry again');
  });
});

describe('the detail view', () => {
  it('shows last_seen and offline_since as local time and age, never a raw epoch', () => {
    const f = demoFindings().find((x) => x.id === 'f00df00d-offline')!;
    const lines = detailLines(f, FIXED_NOW);
    const value = (label: string) => lines.find((l) => l.label === label)?.value;
    expect(value('last_seen')).toBe('09:29:40 (20s ago)');
    expect(value('offline_since')).toBe('09:29:42 (18s ago)');
    expect(value('registered_at')).toBe('08:10:00 (1h20m ago)');
    expect(value('registry says')).toBe('offline, offline since 09:29:42 (18s ago)');
    // A moment of another day carries its date.
    expect(detailLines(f, FIXED_NOW + 86_400_000).find((l) => l.label === 'last_seen')?.value).toBe('2026-11-22 09:29:40 (1d00h ago)');
    for (const l of lines) expect(l.value).not.toMatch(/\b1[0-9]{9}\b/);
  });

  it('its ages keep ticking while it is open', async () => {
    let now = FIXED_NOW;
    const r = await open(new StaticEngine(), { keys: ['j', 'j', '\r'], now: () => now });
    expect(r.lastFrame()).toMatch(/last_seen\s+09:29:40 \(20s ago\)/);
    now += 3_000;
    await settle(1_100);
    expect(r.lastFrame()).toMatch(/last_seen\s+09:29:40 \(23s ago\)/);
    r.unmount();
  });
});

describe('the force dialog', () => {
  it('says what evicting a live agent does before y', async () => {
    const r = await open(new StaticEngine(), { columns: 100, rows: 24, keys: ['G', 'k', 'k', ' ', 'g', ' ', 'd', 'y'] });
    const frame = lines(r);
    const at = frame.findIndex((l) => l.startsWith('Evicting a live agent hides it from the registry until it re-registers:'));
    expect(at).toBeGreaterThan(0);
    expect(frame[at + 1]).toMatch(/^pi-socket re-registers only when its connection drops and comes back\./);
    expect(frame[at + 2]).toMatch(/^f: evict it too\.  y: evict only the other one\./);
    r.unmount();
  });
  it('for a live Claude session it says plainly that Claude Code will not write the file again; a pi agent keeps its own lines', () => {
    const live = demoFindings().find((f) => f.kind === 'session' && f.verdict === 'live')!;
    const claude = { ...live, source: 'claude', id: 'cc-live' } as Finding;
    const sources = [source(), source({ name: 'claude', eviction: { available: true, liveNote: CLAUDE_LIVE_EVICT_NOTE } })];
    const text = (selection: Finding[]) => confirmLines(confirmFor(selection) as ConfirmState, true, sources).head.map((l) => l.text);

    const onlyClaude = text([claude]);
    expect(onlyClaude).toContain('Claude Code does not write a moved session file again: a running Claude session');
    expect(onlyClaude).toContain('stays out of every monitor until it restarts (ghostwatch restore puts the file back).');
    expect(onlyClaude.join('\n')).not.toMatch(/pi-socket/);

    const both = text([claude, live]);
    expect(both.filter((l) => l.startsWith('Evicting a live agent') || l.startsWith('Claude Code does not'))).toHaveLength(2);
    // A dead Claude session needs no force, and no such line.
    const ghost = { ...demoFindings().find((f) => f.verdict === 'ghost')!, source: 'claude' } as Finding;
    expect(confirmLines(confirmFor([ghost]) as ConfirmState, false, sources).head.map((l) => l.text).join('\n')).not.toMatch(/does not write a moved session file/);
  });
});

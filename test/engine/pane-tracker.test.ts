// The pane tracker on its own: which pids a lookup walks (live ones; between full lookups only
// those neither placed nor known paneless), how a lookup folds in (kept panes re-read by id, a pid
// that died mid-lookup keeps its pane, a pid found nowhere is paneless until a full lookup), no
// tmux meaning no panes, and "changed" only when a pid's pane really changed.
import { describe, expect, it } from 'vitest';
import type { TmuxPane } from '../../src/core/tmux.js';
import type { PidFacts } from '../../src/core/types.js';
import { mergeFull } from '../../src/engine/fact-merge.js';
import { FactTable } from '../../src/engine/fact-table.js';
import { PANE_REFRESH_EVERY, PaneTracker } from '../../src/engine/pane-tracker.js';
import type { PaneLookup } from '../../src/os/tmux.js';

const WORK: TmuxPane = { pid: 900, target: 'work:2.1', id: '%7' };
const OTHER: TmuxPane = { pid: 901, target: 'other:0.0', id: '%9' };

/** Watched pids; those given a kill result have facts. */
function watched(entries: [number, PidFacts['kill']?][]): FactTable<PidFacts> {
  const t = new FactTable<PidFacts>(mergeFull);
  t.watch(new Set(entries.map(([pid]) => pid)));
  for (const [pid, kill] of entries) if (kill !== undefined) t.facts.set(pid, { pid, kill, checkedAt: 0 });
  return t;
}

const lookup = (panes: TmuxPane[], byPid: [number, TmuxPane][]): PaneLookup => ({ available: true, panes, byPid: new Map(byPid) });
const NO_TMUX: PaneLookup = { available: false, why: 'tmux is not installed' };

/** A tracker past its first (full) lookup, so the next plan is a partial one. */
function pastFirst(pids: FactTable<PidFacts>): PaneTracker {
  const t = new PaneTracker();
  t.plan(pids);
  return t;
}

describe('PaneTracker.plan', () => {
  it('never walks a pid known dead (gone, or its probe failing); walks one not probed yet', () => {
    const pids = watched([[100, 'ok'], [101, 'EPERM'], [102, 'ESRCH'], [103, 'error'], [104]]);
    const t = new PaneTracker();
    // Known dead (ESRCH, error) are never walked; a pid without facts yet is.
    expect(t.plan(pids)).toEqual([100, 101, 104]);
  });

  it('between full lookups: pids placed in a pane or found in none are not walked again', () => {
    const pids = watched([[100, 'ok'], [101, 'ok'], [102, 'ok']]);
    const t = new PaneTracker();
    const walked = t.plan(pids);
    t.apply(lookup([WORK], [[100, WORK]]), walked, pids);
    // 100 placed, 101 and 102 paneless: nothing to walk until the refresh.
    for (let i = 1; i < PANE_REFRESH_EVERY; i++) expect(t.plan(pids)).toEqual([]);
    expect(t.plan(pids)).toEqual([100, 101, 102]);
    expect(t.plan(pids)).toEqual([]);
  });

  it('a lookup asked for in full walks everything and leaves the refresh cadence where it was', () => {
    const pids = watched([[100, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids), pids);
    expect(t.plan(pids)).toEqual([]);
    expect(t.plan(pids, true)).toEqual([100]);
    for (let i = 2; i < PANE_REFRESH_EVERY; i++) expect(t.plan(pids)).toEqual([]);
    expect(t.plan(pids)).toEqual([100]);
  });
});

describe('PaneTracker.apply', () => {
  it('places the pids found, and says so; the same lookup again is no change', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    expect(t.panes.size).toBe(0);
    const walked = t.plan(pids);
    expect(t.apply(lookup([WORK, OTHER], [[100, WORK], [101, OTHER]]), walked, pids)).toBe(true);
    const first = t.panes;
    expect(Object.fromEntries(first)).toEqual({ 100: WORK, 101: OTHER });
    // Equal panes in new objects: no change, the map not replaced.
    expect(t.apply(lookup([{ ...WORK }, { ...OTHER }], [[100, { ...WORK }], [101, { ...OTHER }]]), [100, 101], pids)).toBe(false);
    expect(t.panes).toBe(first);
  });

  it.each<[string, Partial<TmuxPane>]>([
    ['target', { target: 'work:3.1' }],
    ['pane pid', { pid: 950 }],
    ['id', { id: '%8' }],
  ])('a placed pid whose pane differs in %s is a change', (_, change) => {
    const pids = watched([[100, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids), pids);
    const moved = { ...WORK, ...change };
    expect(t.apply(lookup([moved], [[100, moved]]), [100], pids)).toBe(true);
    expect(t.panes.get(100)).toEqual(moved);
  });

  it('a placed pid not walked keeps its pane, read afresh by id (windows get renumbered); gone with its pane', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK, OTHER], [[100, WORK], [101, OTHER]]), t.plan(pids), pids);
    const renumbered = { ...WORK, target: 'work:5.1' };
    expect(t.apply(lookup([renumbered, OTHER], []), [], pids)).toBe(true);
    expect(Object.fromEntries(t.panes)).toEqual({ 100: renumbered, 101: OTHER });
    // The pane of 101 closed: 101 loses it, 100 keeps its own.
    expect(t.apply(lookup([renumbered], []), [], pids)).toBe(true);
    expect(Object.fromEntries(t.panes)).toEqual({ 100: renumbered });
  });

  it('a pid no longer watched loses its pane even while the pane exists', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK, OTHER], [[100, WORK], [101, OTHER]]), t.plan(pids), pids);
    pids.watch(new Set([100]));
    expect(t.apply(lookup([WORK, OTHER], []), [], pids)).toBe(true);
    expect(Object.fromEntries(t.panes)).toEqual({ 100: WORK });
  });

  it('a pid that died while it was looked up keeps the pane it was in; a live one found nowhere loses it', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK, OTHER], [[100, WORK], [101, OTHER]]), t.plan(pids), pids);
    pids.facts.set(100, { pid: 100, kill: 'ESRCH', checkedAt: 1 });
    expect(t.apply(lookup([WORK, OTHER], []), [100, 101], pids)).toBe(true);
    expect(Object.fromEntries(t.panes)).toEqual({ 100: WORK });
  });

  it('a live pid found in no pane is paneless until it turns up in a full lookup; a pane found clears that', () => {
    const pids = watched([[100, 'ok']]);
    const t = pastFirst(pids);
    expect(t.apply(lookup([WORK], []), [100], pids)).toBe(false);
    expect(t.plan(pids)).toEqual([]);
    expect(t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids, true), pids)).toBe(true);
    expect(t.panes.get(100)).toEqual(WORK);
    // Placed, then closed: found nowhere again is no longer "placed" and so not walked until a refresh.
    expect(t.apply(lookup([], []), [100], pids)).toBe(true);
    expect(t.panes.size).toBe(0);
    expect(t.plan(pids)).toEqual([]);
  });

  it('a paneless pid found in a full lookup is placed, and walked again soon once its pane closes', () => {
    const pids = watched([[100, 'ok']]);
    const t = pastFirst(pids);
    t.apply(lookup([], []), [100], pids);
    t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids, true), pids);
    expect(t.panes.get(100)).toEqual(WORK);
    // The pane closes: 100 is neither placed nor known paneless, so the next lookup walks it.
    expect(t.apply(lookup([], []), [], pids)).toBe(true);
    expect(t.plan(pids)).toEqual([100]);
  });

  it('one pid leaving and another arriving in the same lookup is a change', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids), pids);
    pids.watch(new Set([101]));
    expect(t.apply(lookup([WORK], [[101, WORK]]), [101], pids)).toBe(true);
    expect(Object.fromEntries(t.panes)).toEqual({ 101: WORK });
  });

  it('a pid walked but no longer watched is not remembered as paneless: watched again, it is walked again', () => {
    const pids = watched([[100, 'ok']]);
    const t = pastFirst(pids);
    pids.watch(new Set());
    t.apply(lookup([], []), [100], pids);
    pids.watch(new Set([100]));
    pids.facts.set(100, { pid: 100, kill: 'ok', checkedAt: 1 });
    expect(t.plan(pids)).toEqual([100]);
  });

  it('a paneless pid dropped from the watch is forgotten: watched again later, it is walked again', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = pastFirst(pids);
    t.apply(lookup([], []), [100, 101], pids);
    expect(t.plan(pids)).toEqual([]);
    pids.watch(new Set([101]));
    t.apply(lookup([], []), [], pids);
    pids.watch(new Set([100, 101]));
    pids.facts.set(100, { pid: 100, kill: 'ok', checkedAt: 1 });
    expect(t.plan(pids)).toEqual([100]);
  });

  it('no tmux: no panes (a change only when there were some), and every pid is walked again once it is back', () => {
    const pids = watched([[100, 'ok'], [101, 'ok']]);
    const t = new PaneTracker();
    t.apply(lookup([WORK], [[100, WORK]]), t.plan(pids), pids);
    expect(t.plan(pids)).toEqual([]);
    expect(t.apply(NO_TMUX, [], pids)).toBe(true);
    expect(t.panes.size).toBe(0);
    expect(t.apply(NO_TMUX, [], pids)).toBe(false);
    // 101 was paneless; without tmux that means nothing: it is walked again, as is 100.
    expect(t.plan(pids)).toEqual([100, 101]);
  });
});

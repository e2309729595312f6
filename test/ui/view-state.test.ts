import { describe, expect, it } from 'vitest';
import { findingKey } from '../../src/core/index.js';
import type { Finding } from '../../src/core/types.js';
import { visibleRows } from '../../src/ui/rows.js';
import { initialViewState, modeOf, reduce, READ_ONLY_MESSAGE, type Action, type ScreenFacts, type ViewState } from '../../src/ui/view-state.js';
import { demoFindings, FIXED_NOW } from '../support/ui-fixtures.js';

const all = demoFindings();
function ctxFor(s: ViewState, fields: Partial<ScreenFacts> = {}): ScreenFacts {
  const rows = visibleRows(all, s, { now: FIXED_NOW });
  return { rows, all, pageSize: 5, readOnly: false, ...fields };
}
function run(actions: Action[], start: ViewState = initialViewState, fields: Partial<ScreenFacts> = {}) {
  let s = start;
  const effects = [];
  for (const a of actions) {
    const step = reduce(s, a, ctxFor(s, fields));
    s = step.state;
    if (step.effect) effects.push(step.effect);
  }
  return { s, effects, rows: ctxFor(s).rows };
}
const cmd = (command: Parameters<typeof reduce>[1] extends infer A ? (A extends { type: 'command'; command: infer C } ? C : never) : never): Action => ({ type: 'command', command });

describe('rows', () => {
  it('lists problems first, worst first', () => {
    const rows = visibleRows(all, initialViewState, { now: FIXED_NOW });
    const firstNonProblem = rows.findIndex((f) => !f.problem);
    expect(rows.slice(0, firstNonProblem).every((f) => f.problem)).toBe(true);
    expect(rows.slice(firstNonProblem).every((f) => !f.problem)).toBe(true);
    expect(rows[0]!.verdict).toBe('ghost');
    expect(rows.every((f) => f.kind === 'session')).toBe(true);
  });
});

describe('view state', () => {
  it('moves the cursor and scrolls to keep it on screen', () => {
    const { s } = run([cmd('nav.down'), cmd('nav.down'), cmd('nav.pageDown')]);
    expect(s.cursor).toBe(7);
    expect(s.top).toBe(3); // page of 5 rows: row 7 is the last one shown
    const back = run([cmd('nav.top')], s).s;
    expect([back.cursor, back.top]).toEqual([0, 0]);
    const end = run([cmd('nav.bottom')]).s;
    expect(end.cursor).toBe(ctxFor(end).rows.length - 1);
    expect(run([cmd('nav.up')]).s.cursor).toBe(0); // clamped
  });

  it('keeps the cursor on its finding when the rows reorder', () => {
    const { s, rows } = run([cmd('nav.down'), cmd('nav.down')]);
    const key = findingKey(rows[2]!);
    const sorted = run([cmd('sort.next')], s).s; // sort by the first column changes the order
    const moved = reduce(sorted, { type: 'rows' }, ctxFor(sorted)).state;
    expect(findingKey(ctxFor(moved).rows[moved.cursor]!)).toBe(key);
  });

  it('filters as you type, Esc clears', () => {
    const { s, rows } = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'zomb' }]);
    expect(modeOf(s)).toBe('filter');
    expect(rows.map((f) => f.verdict)).toEqual(['zombie']);
    const cleared = run([cmd('filter.clear')], s);
    expect(cleared.s.filter).toBe('');
    expect(cleared.rows.length).toBeGreaterThan(5);
    const kept = run([cmd('filter.backspace'), cmd('filter.accept')], s).s;
    expect([modeOf(kept), kept.filter]).toEqual(['table', 'zom']);
  });

  it('sorts by the next and previous column and reverses', () => {
    // The default order is the verdict column's: the first > moves off it, round the end back to it.
    expect(run([cmd('sort.next')]).s.sortColumn).toBe('id');
    expect(run([cmd('sort.prev')]).s.sortColumn).toBe('source');
    expect(run([cmd('sort.prev'), cmd('sort.next')]).s.sortColumn).toBeUndefined();
    const byPid = run([cmd('sort.next'), cmd('sort.next')]);
    expect(byPid.s.sortColumn).toBe('pid');
    const problems = byPid.rows.filter((f) => f.problem).map((f) => f.entry.pid as number);
    expect(problems).toEqual([...problems].sort((a, b) => a - b));
    const reversed = run([cmd('sort.reverse')], byPid.s);
    const rproblems = reversed.rows.filter((f) => f.problem).map((f) => f.entry.pid as number);
    expect(rproblems).toEqual([...problems].reverse());
  });

  it('marks with space (moving down), marks all problems, unmarks all', () => {
    const { s } = run([cmd('mark.toggle'), cmd('mark.toggle')]);
    expect(s.marks.size).toBe(2);
    expect(s.cursor).toBe(2);
    const again = run([cmd('nav.top'), cmd('mark.toggle')], s).s;
    expect(again.marks.size).toBe(1);
    const problems = run([cmd('mark.problems')]).s;
    expect(problems.marks.size).toBe(all.filter((f) => f.kind === 'session' && f.problem).length);
    expect(run([cmd('mark.none')], problems).s.marks.size).toBe(0);
  });

  it('evict asks first, naming exactly what; No is the default', () => {
    const { s } = run([cmd('evict.selected')]);
    expect(modeOf(s)).toBe('confirm');
    expect(s.confirm!.selection.map((f) => f.verdict)).toEqual(['ghost']);
    for (const no of [cmd('confirm.no')]) {
      const cancelled = run([no], s);
      expect(modeOf(cancelled.s)).toBe('table');
      expect(cancelled.effects).toEqual([]);
    }
    const yes = run([cmd('confirm.yes')], s);
    expect(modeOf(yes.s)).toBe('evicting');
    expect(yes.effects).toEqual([{ type: 'evict', selection: s.confirm!.selection, force: false }]);
  });

  it('evicting live entries asks a second, explicit question', () => {
    const live = all.find((f) => f.verdict === 'live')!;
    const ghost = all.find((f) => f.verdict === 'ghost')!;
    const start: ViewState = { ...initialViewState, marks: new Set([findingKey(live), findingKey(ghost)]) };
    const asked = run([cmd('evict.selected'), cmd('confirm.yes')], start);
    expect(modeOf(asked.s)).toBe('confirm-force');
    expect(asked.effects).toEqual([]);
    const onlyDead = run([cmd('confirm.yes')], asked.s);
    expect(onlyDead.effects).toEqual([{ type: 'evict', selection: [ghost], force: false }]);
    const forced = run([cmd('confirm.force')], asked.s);
    expect(forced.effects).toEqual([{ type: 'evict', selection: expect.arrayContaining([live, ghost]), force: true }]);
    expect(run([cmd('confirm.no')], asked.s).effects).toEqual([]);
  });

  it('X selects the problems the view shows (its tab, the filter, problems-only), and says how many there are in all', () => {
    const total = all.filter((f) => f.problem).length;
    const sessions = all.filter((f) => f.problem && f.kind === 'session');
    const { s } = run([cmd('evict.problems')]);
    expect(s.confirm!.selection.map(findingKey)).toEqual(expect.arrayContaining(sessions.map(findingKey)));
    expect(s.confirm!.selection).toHaveLength(sessions.length);
    expect(s.confirm!.scope).toBe(`${sessions.length} shown of ${total} problems; sessions`);
    const claims = run([cmd('view.tab'), cmd('evict.problems')]).s;
    expect(claims.confirm!.selection.every((f: Finding) => f.kind === 'claim' && f.problem)).toBe(true);
    const filtered = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'zomb' }, cmd('filter.accept'), cmd('view.problems'), cmd('evict.problems')]).s;
    expect(filtered.confirm!.selection.map((f: Finding) => f.verdict)).toEqual(['zombie']);
    expect(filtered.confirm!.scope).toBe(`1 shown of ${total} problems; filter: zomb; problems only; sessions`);
    const none = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'live-agent' }, cmd('filter.accept'), cmd('evict.problems')]).s;
    expect(modeOf(none)).toBe('table');
    expect(none.message?.text).toBe(`no problems shown here (${total} in all; the filter "live-agent" hides them): nothing to evict`);
  });

  it('Esc on the table clears a kept filter; n and N wrap round the matching rows', () => {
    const kept = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'ghost' }, cmd('filter.accept')]).s;
    expect(modeOf(kept)).toBe('table');
    const shown = ctxFor(kept).rows.length;
    expect(shown).toBeGreaterThan(1);
    const cleared = run([cmd('filter.clear')], kept).s;
    expect(cleared.filter).toBe('');
    expect(modeOf(cleared)).toBe('table');
    expect(run([cmd('filter.prev')], kept).s.cursor).toBe(shown - 1);
    expect(run([cmd('filter.next')], kept).s.cursor).toBe(1);
    expect(run(Array.from({ length: shown }, () => cmd('filter.next')), kept).s.cursor).toBe(0);
  });

  it('in read-only, eviction keys explain themselves and do nothing', () => {
    for (const c of [cmd('evict.selected'), cmd('evict.problems')]) {
      const r = run([c], initialViewState, { readOnly: true });
      expect(modeOf(r.s)).toBe('table');
      expect(r.s.message?.text).toBe(READ_ONLY_MESSAGE);
      expect(r.effects).toEqual([]);
    }
  });

  it('Tab switches to claims; Enter opens details; Esc goes back; q quits; R refreshes', () => {
    const claims = run([cmd('view.tab')]);
    expect(claims.rows.every((f) => f.kind === 'claim')).toBe(true);
    const detail = run([cmd('view.details')]).s;
    expect(modeOf(detail)).toBe('detail');
    expect(modeOf(run([cmd('view.back')], detail).s)).toBe('table');
    expect(run([cmd('app.quit')]).effects).toEqual([{ type: 'quit' }]);
    expect(run([cmd('app.refresh')]).effects).toEqual([{ type: 'refresh' }]);
  });

  it('p shows problems only', () => {
    const { rows } = run([cmd('view.problems')]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((f) => f.problem)).toBe(true);
  });
});

describe('cursor anchoring', () => {
  const ghost = all.find((f) => f.verdict === 'ghost')!;
  const live = all.filter((f) => f.verdict === 'live');
  it('stays on top until the person moves it: a new problem above takes the first row', () => {
    const s = reduce(initialViewState, { type: 'rows' }, { rows: live, all, pageSize: 5, readOnly: false }).state;
    const withGhost = [ghost, ...live];
    const after = reduce(s, { type: 'rows' }, { rows: withGhost, all, pageSize: 5, readOnly: false }).state;
    expect(after.cursor).toBe(0);
    expect(after.cursorKey).toBe(findingKey(ghost));
  });
  it('once moved, it follows its row when rows are inserted above', () => {
    const ctx = { rows: live, all, pageSize: 5, readOnly: false };
    const moved = reduce(initialViewState, { type: 'command', command: 'nav.down' }, ctx).state;
    expect(moved.pinned).toBe(true);
    const after = reduce(moved, { type: 'rows' }, { ...ctx, rows: [ghost, ...live] }).state;
    expect(after.cursorKey).toBe(findingKey(live[1]!));
    expect(after.cursor).toBe(2);
  });
});

describe('the mode stack: a view opens over the one under it, and closing it goes back to that one', () => {
  const live = all.find((f) => f.verdict === 'live')!;
  // The demo's first row is a ghost (evictable as it is); `onLive` puts the cursor on a live row.
  const onLive: ViewState = { ...initialViewState, cursor: ctxFor(initialViewState).rows.findIndex((f) => f === live), pinned: true };
  const cases: [string, ViewState, Action[], string[], string | undefined][] = [
    ['/ opens the filter over the table', initialViewState, [cmd('filter.start')], ['table', 'filter'], undefined],
    ['Enter keeps the filter and closes the prompt', initialViewState, [cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'gh' }, cmd('filter.accept')], ['table'], undefined],
    ['Esc clears the filter and closes the prompt', initialViewState, [cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'gh' }, cmd('filter.clear')], ['table'], undefined],
    ['Enter opens details over the table', initialViewState, [cmd('view.details')], ['table', 'detail'], undefined],
    ['? over details, then back: the details again, not the table', initialViewState, [cmd('view.details'), cmd('view.help'), cmd('view.back')], ['table', 'detail'], undefined],
    ['? twice opens help once: one back closes it', initialViewState, [cmd('view.help'), cmd('view.help'), cmd('view.back')], ['table'], undefined],
    ['back at the table closes nothing (q there quits instead)', initialViewState, [cmd('view.back'), cmd('view.back')], ['table'], undefined],
    ['d in details asks over the details', initialViewState, [cmd('view.details'), cmd('evict.selected')], ['table', 'detail', 'confirm'], undefined],
    ['No in that dialog goes back to the details', initialViewState, [cmd('view.details'), cmd('evict.selected'), cmd('confirm.no')], ['table', 'detail'], 'cancelled: nothing evicted'],
    ['y in that dialog evicts: the dialog becomes its progress', initialViewState, [cmd('view.details'), cmd('evict.selected'), cmd('confirm.yes')], ['table', 'detail', 'evicting'], undefined],
    ['once evicted, the dialog and the details of the evicted row close', initialViewState, [cmd('view.details'), cmd('evict.selected'), cmd('confirm.yes'), { type: 'evicted', text: 'evicted 1', tone: 'info' }], ['table'], 'evicted 1'],
    ['evicted from the table: back to the table', initialViewState, [cmd('evict.selected'), cmd('confirm.yes'), { type: 'evicted', text: 'evicted 1', tone: 'info' }], ['table'], 'evicted 1'],
    ['a live row: y asks the second question in place of the first', onLive, [cmd('evict.selected'), cmd('confirm.yes')], ['table', 'confirm-force'], undefined],
    ['No to the second question closes the whole dialog', onLive, [cmd('evict.selected'), cmd('confirm.yes'), cmd('confirm.no')], ['table'], 'cancelled: nothing evicted'],
    [
      'y to the second question with nothing evictable: the dialog stays, saying why and offering f',
      onLive,
      [cmd('view.details'), cmd('evict.selected'), cmd('confirm.yes'), cmd('confirm.yes')],
      ['table', 'detail', 'confirm-force'],
      'nothing sent: it needs force; f evicts anyway',
    ],
    ['then f evicts it anyway', onLive, [cmd('view.details'), cmd('evict.selected'), cmd('confirm.yes'), cmd('confirm.yes'), cmd('confirm.force')], ['table', 'detail', 'evicting'], undefined],
  ];
  it.each(cases)('%s', (_name, start, actions, stack, message) => {
    const { s } = run(actions, start);
    expect(s.stack).toEqual(stack);
    expect(modeOf(s)).toBe(stack[stack.length - 1]);
    expect(s.message?.text).toBe(message);
    if (!stack.some((m) => m === 'confirm' || m === 'confirm-force' || m === 'evicting')) expect(s.confirm).toBeUndefined();
  });

  it('the details keep their scroll while help is open over them; help scrolls on its own', () => {
    const lines = { overlayLines: 40 };
    const scrolled = run([cmd('view.details'), cmd('nav.pageDown'), cmd('nav.down')], initialViewState, lines).s;
    expect(scrolled.detailScroll).toBe(6);
    const help = run([cmd('view.help'), cmd('nav.down')], scrolled, lines).s;
    expect([help.helpScroll, help.detailScroll]).toEqual([1, 6]);
    const back = run([cmd('view.back'), cmd('nav.up')], help, lines).s;
    expect([modeOf(back), back.detailScroll]).toEqual(['detail', 5]);
    expect(run([cmd('nav.bottom')], back, lines).s.detailScroll).toBe(35);
    expect(run([cmd('nav.top')], back, lines).s.detailScroll).toBe(0);
  });

  it('typed text is sanitized into the filter; Backspace removes one character, not one UTF-16 unit', () => {
    const { s } = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'a\u001b[2J😀' }]);
    expect(s.filter).not.toContain('\u001b');
    expect(s.filter.startsWith('a')).toBe(true);
    const typed = run([cmd('filter.start'), { type: 'command', command: 'filter.type', text: 'x😀' }, cmd('filter.backspace')]).s;
    expect(typed.filter).toBe('x');
  });
});

describe('new rows that move nothing', () => {
  it('keep the very state (one frame per snapshot, not two); a moved cursor row makes a new one', () => {
    const s = run([cmd('nav.down'), cmd('nav.down')]).s;
    const same = reduce(s, { type: 'rows' }, ctxFor(s, { rows: [...ctxFor(s).rows] })).state;
    expect(same).toBe(s);
    const rows = ctxFor(s).rows;
    // A row inserted above the cursor: the cursor (pinned by the moves) follows its row down.
    const shifted = reduce(s, { type: 'rows' }, ctxFor(s, { rows: [rows[3]!, ...rows] })).state;
    expect(shifted).not.toBe(s);
    expect(shifted.cursor).toBe(3);
    expect(shifted.cursorKey).toBe(s.cursorKey);
    // A shorter page scrolls: a new state too.
    const scrolled = reduce(s, { type: 'rows' }, ctxFor(s, { pageSize: 1 })).state;
    expect(scrolled).not.toBe(s);
    expect(scrolled.top).toBe(2);
  });
});

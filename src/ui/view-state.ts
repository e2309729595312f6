// The monitor's view state and its reducer: pure, with side effects returned as data (quit,
// refresh, evict) for the App to carry out. Behaviour lives here, so tests need no terminal.
import { findingKey, planEviction } from '../core/evict-plan.js';
import type { Finding } from '../core/types.js';
import { staleOf } from '../engine/types.js';
import { columnsFor, type Tab } from './columns.js';
import type { Command, Mode } from './keymap.js';

export interface ConfirmState {
  /** Everything selected, in the order shown. */
  readonly selection: readonly Finding[];
  /** Evictable as they are. */
  readonly evictable: readonly Finding[];
  /** Need force: live, remote, unverified, held. */
  readonly needsForce: readonly Finding[];
  /** Selected but left out whatever is answered: stale rows of a registry not read now. */
  readonly stale?: readonly Finding[] | undefined;
}

export interface ViewState {
  readonly mode: Mode;
  readonly tab: Tab;
  /** The row under the cursor, by finding key, so it stays put while rows move. */
  readonly cursorKey: string | undefined;
  /**
   * The person put the cursor on that row (moved, marked): it follows the row as rows reorder.
   * Until then it stays at its position, so a monitor just opened keeps the worst problem on top.
   */
  readonly pinned: boolean;
  readonly cursor: number;
  /** First row shown. */
  readonly top: number;
  readonly filter: string;
  readonly problemsOnly: boolean;
  readonly sortColumn: string | undefined;
  readonly sortReverse: boolean;
  readonly marks: ReadonlySet<string>;
  /** The finding the detail view shows. */
  readonly detailKey: string | undefined;
  readonly detailScroll: number;
  readonly confirm: ConfirmState | undefined;
  /** One line for the person: what happened, or why a key did nothing. */
  readonly message: { readonly text: string; readonly tone: 'info' | 'warn' | 'error' } | undefined;
}

export type Effect =
  | { readonly type: 'quit' }
  | { readonly type: 'refresh' }
  | { readonly type: 'evict'; readonly selection: readonly Finding[]; readonly force: boolean };

export interface Context {
  /** The rows on screen now, in order. */
  readonly rows: readonly Finding[];
  /** Every finding of every tab, for "evict all problems". */
  readonly all: readonly Finding[];
  readonly pageSize: number;
  readonly readOnly: boolean;
  /** Lines of the detail view or help overlay, for their scrolling. */
  readonly detailLines?: number;
}

export type Action =
  | { readonly type: 'command'; readonly command: Command }
  | { readonly type: 'filter.type'; readonly text: string }
  | { readonly type: 'filter.backspace' }
  | { readonly type: 'filter.accept' }
  /** The rows changed (new snapshot, resize): keep the cursor on its finding. */
  | { readonly type: 'rows' }
  | { readonly type: 'evicted'; readonly text: string; readonly tone: 'info' | 'warn' | 'error' }
  | { readonly type: 'message'; readonly text: string; readonly tone: 'info' | 'warn' | 'error' };

export const initialViewState: ViewState = {
  mode: 'table',
  tab: 'sessions',
  cursorKey: undefined,
  pinned: false,
  cursor: 0,
  top: 0,
  filter: '',
  problemsOnly: false,
  sortColumn: undefined,
  sortReverse: false,
  marks: new Set(),
  detailKey: undefined,
  detailScroll: 0,
  confirm: undefined,
  message: undefined,
};

export interface Step {
  readonly state: ViewState;
  readonly effect?: Effect | undefined;
}

export const READ_ONLY_MESSAGE = 'read-only: eviction is off (started with --read-only)';

export function reduce(state: ViewState, action: Action, ctx: Context): Step {
  switch (action.type) {
    case 'rows':
      return { state: anchor(state, ctx) };
    case 'message':
      return { state: { ...state, message: { text: action.text, tone: action.tone } } };
    case 'evicted':
      return { state: anchor({ ...state, mode: 'table', confirm: undefined, marks: new Set(), message: { text: action.text, tone: action.tone } }, ctx) };
    case 'filter.type':
      return { state: anchor({ ...state, filter: state.filter + action.text, cursor: 0, top: 0, pinned: false }, ctx) };
    case 'filter.backspace':
      return { state: anchor({ ...state, filter: [...state.filter].slice(0, -1).join(''), cursor: 0, top: 0, pinned: false }, ctx) };
    case 'filter.accept':
      return { state: { ...state, mode: 'table' } };
    case 'command':
      return command(state, action.command, ctx);
  }
}

const MOVES: ReadonlySet<Command> = new Set(['nav.up', 'nav.down', 'nav.pageUp', 'nav.pageDown', 'nav.top', 'nav.bottom', 'mark.toggle']);

function command(s: ViewState, cmd: Command, ctx: Context): Step {
  const base = s.message ? { ...s, message: undefined } : s;
  const cleared = MOVES.has(cmd) && s.mode === 'table' ? { ...base, pinned: true } : base;
  switch (cmd) {
    case 'nav.up':
      return isScrolling(s) ? scrollDetail(s, -1, ctx) : { state: moveTo(cleared, s.cursor - 1, ctx) };
    case 'nav.down':
      return isScrolling(s) ? scrollDetail(s, 1, ctx) : { state: moveTo(cleared, s.cursor + 1, ctx) };
    case 'nav.pageUp':
      return isScrolling(s) ? scrollDetail(s, -ctx.pageSize, ctx) : { state: moveTo(cleared, s.cursor - ctx.pageSize, ctx) };
    case 'nav.pageDown':
      return isScrolling(s) ? scrollDetail(s, ctx.pageSize, ctx) : { state: moveTo(cleared, s.cursor + ctx.pageSize, ctx) };
    case 'nav.top':
      return isScrolling(s) ? { state: { ...s, detailScroll: 0 } } : { state: moveTo(cleared, 0, ctx) };
    case 'nav.bottom':
      return isScrolling(s) ? scrollDetail(s, Number.MAX_SAFE_INTEGER, ctx) : { state: moveTo(cleared, ctx.rows.length - 1, ctx) };
    case 'filter.start':
      return { state: { ...cleared, mode: 'filter' } };
    case 'filter.clear':
      return { state: anchor({ ...cleared, mode: 'table', filter: '' }, ctx) };
    case 'sort.next':
    case 'sort.prev':
      return { state: sortBy(cleared, cmd === 'sort.next' ? 1 : -1) };
    case 'sort.reverse':
      return { state: { ...cleared, sortReverse: !s.sortReverse } };
    case 'mark.toggle': {
      const key = currentKey(s, ctx);
      if (key === undefined) return { state: s };
      const marks = new Set(s.marks);
      if (!marks.delete(key)) marks.add(key);
      return { state: moveTo({ ...cleared, marks }, s.cursor + 1, ctx) };
    }
    case 'mark.problems': {
      const marks = new Set(s.marks);
      let n = 0;
      for (const f of ctx.rows) if (f.problem && f.evictable) (marks.add(findingKey(f)), n++);
      return { state: { ...s, marks, message: { text: n === 0 ? 'no problems to mark here' : `marked ${n} problem${n === 1 ? '' : 's'}`, tone: 'info' } } };
    }
    case 'mark.none':
      return { state: { ...cleared, marks: new Set() } };
    case 'evict.selected':
      return askToEvict(s, selected(s, ctx), ctx, 'nothing to evict: no row here');
    case 'evict.problems':
      return askToEvict(s, ctx.all.filter((f) => f.problem), ctx, 'no problems: nothing to evict');
    case 'view.problems':
      return { state: anchor({ ...cleared, problemsOnly: !s.problemsOnly }, ctx) };
    case 'view.details': {
      const key = currentKey(s, ctx);
      return key === undefined ? { state: s } : { state: { ...cleared, mode: 'detail', detailKey: key, detailScroll: 0 } };
    }
    case 'view.tab':
      return { state: { ...cleared, tab: s.tab === 'sessions' ? 'claims' : 'sessions', cursor: 0, top: 0, cursorKey: undefined, pinned: false, sortColumn: undefined } };
    case 'view.help':
      return { state: { ...cleared, mode: 'help', detailScroll: 0 } };
    case 'view.back':
      return { state: { ...cleared, mode: 'table' } };
    case 'app.refresh':
      return { state: { ...s, message: { text: 'refreshing: probing every pid and re-syncing', tone: 'info' } }, effect: { type: 'refresh' } };
    case 'app.quit':
      return { state: s, effect: { type: 'quit' } };
    case 'confirm.yes': {
      const c = s.confirm;
      if (!c) return { state: s };
      if (s.mode === 'confirm' && c.needsForce.length > 0) return { state: { ...s, mode: 'confirm-force' } };
      if (c.evictable.length === 0) return { state: { ...s, mode: 'table', confirm: undefined, message: { text: 'nothing evicted', tone: 'info' } } };
      return { state: { ...s, mode: 'evicting' }, effect: { type: 'evict', selection: c.evictable, force: false } };
    }
    case 'confirm.force': {
      const c = s.confirm;
      if (!c || s.mode !== 'confirm-force') return { state: s };
      return { state: { ...s, mode: 'evicting' }, effect: { type: 'evict', selection: c.selection, force: true } };
    }
    case 'confirm.no':
      return { state: { ...s, mode: 'table', confirm: undefined, message: { text: 'cancelled: nothing evicted', tone: 'info' } } };
  }
}

function askToEvict(s: ViewState, selection: Finding[], ctx: Context, empty: string): Step {
  if (ctx.readOnly) return { state: { ...s, message: { text: READ_ONLY_MESSAGE, tone: 'warn' } } };
  if (selection.length === 0) return { state: { ...s, message: { text: empty, tone: 'info' } } };
  // Stale rows (their registry is not read now) are never sent, forced or not: left out, and said so.
  const stale = selection.filter((f) => staleOf(f) !== undefined);
  const rest = stale.length > 0 ? selection.filter((f) => staleOf(f) === undefined) : selection;
  if (rest.length === 0) return { state: { ...s, message: { text: staleRefusal(stale), tone: 'warn' } } };
  const plan = planEviction(rest, { force: false });
  const confirm: ConfirmState = { selection: rest, evictable: plan.send.map((p) => p.finding), needsForce: plan.needsForce, ...(stale.length > 0 ? { stale } : {}) };
  return { state: { ...s, mode: 'confirm', confirm, message: undefined } };
}

/** Why stale rows are not evicted, one line: "not evicted: 2 stale rows; hypivisor is not connected (connection refused)". */
export function staleRefusal(stale: readonly Finding[]): string {
  const why = [...new Map(stale.map((f) => [staleOf(f)!.source, staleOf(f)!.why])).entries()].map(([name, w]) => `${name} is not connected (${w})`).join('; ');
  const n = stale.length;
  return `not evicted: ${n === 1 ? 'a stale row' : `${n} stale rows`}; ${why}. Evict once it reconnects.`;
}

/** The marked rows (in row order) if any are marked, else the current row. */
function selected(s: ViewState, ctx: Context): Finding[] {
  if (s.mode === 'detail') {
    const f = ctx.all.find((x) => findingKey(x) === s.detailKey);
    return f ? [f] : [];
  }
  if (s.marks.size > 0) {
    const marked = ctx.all.filter((f) => s.marks.has(findingKey(f)));
    if (marked.length > 0) return marked;
  }
  const current = ctx.rows[s.cursor];
  return current ? [current] : [];
}

function currentKey(s: ViewState, ctx: Context): string | undefined {
  const f = ctx.rows[s.cursor];
  return f ? findingKey(f) : undefined;
}

function sortBy(s: ViewState, dir: 1 | -1): ViewState {
  const ids = [undefined, ...columnsFor(s.tab).map((c) => c.id)];
  const at = ids.indexOf(s.sortColumn);
  const next = ids[(at + dir + ids.length) % ids.length];
  return { ...s, sortColumn: next };
}

function isScrolling(s: ViewState): boolean {
  return s.mode === 'detail' || s.mode === 'help';
}

function scrollDetail(s: ViewState, by: number, ctx: Context): Step {
  const max = Math.max(0, (ctx.detailLines ?? 0) - ctx.pageSize);
  return { state: { ...s, detailScroll: Math.min(max, Math.max(0, s.detailScroll + by)) } };
}

/** Put the cursor on row `index` (clamped) and scroll just enough to show it. */
function moveTo(s: ViewState, index: number, ctx: Context): ViewState {
  const n = ctx.rows.length;
  const cursor = n === 0 ? 0 : Math.min(n - 1, Math.max(0, index));
  const f = ctx.rows[cursor];
  return { ...s, cursor, cursorKey: f ? findingKey(f) : undefined, top: scrollFor(cursor, s.top, ctx.pageSize, n) };
}

/** After the rows changed: find the cursor's finding again, or keep its position. */
function anchor(s: ViewState, ctx: Context): ViewState {
  let index = s.cursor;
  if (s.pinned && s.cursorKey !== undefined) {
    const found = ctx.rows.findIndex((f) => findingKey(f) === s.cursorKey);
    if (found !== -1) index = found;
  }
  const moved = moveTo(s, index, ctx);
  // Marks of findings that are gone would evict nothing; drop them so the count stays honest.
  if (s.marks.size === 0) return moved;
  const present = new Set(ctx.all.map(findingKey));
  const marks = new Set([...s.marks].filter((k) => present.has(k)));
  return marks.size === s.marks.size ? moved : { ...moved, marks };
}

function scrollFor(cursor: number, top: number, page: number, n: number): number {
  const size = Math.max(1, page);
  let t = top;
  if (cursor < t) t = cursor;
  if (cursor >= t + size) t = cursor - size + 1;
  return Math.max(0, Math.min(t, Math.max(0, n - size)));
}

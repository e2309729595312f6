// The monitor's view state and its reducer: pure, with side effects returned as data (quit,
// refresh, evict) for the App to carry out. Behaviour lives here, so tests need no terminal.
// The modes form a stack (table → detail → help or confirm; table → filter): a view opens over
// the one under it, and closing it (Esc, q, No) goes back to that one, not always to the table.
import { findingKey } from '../core/evict-plan.js';
import { sanitize } from '../core/sanitize.js';
import type { TmuxPane } from '../core/tmux.js';
import type { Finding } from '../core/types.js';
import { isUsablePid } from '../core/pid.js';
import { columnsFor, paneKeyOfRow, type Tab } from './columns.js';
import { confirmFor, type ConfirmState } from './confirm-state.js';
import { departedOf, leftoversOf } from '../engine/types.js';
import type { LeftoverTarget } from '../engine/end-leftovers.js';
import { anchor, currentKey, moveTo, type CursorState, type RowsOnScreen } from './cursor.js';
import { keysOf, type Command, type Mode } from './keymap.js';
import { matchesFilter } from './rows.js';

export interface ViewState extends CursorState {
  /** The modes open, bottom first: the table, then each view opened over it. The top takes the keys. */
  readonly stack: readonly Mode[];
  readonly tab: Tab;
  readonly filter: string;
  readonly problemsOnly: boolean;
  readonly sortColumn: string | undefined;
  readonly sortReverse: boolean;
  /** The finding the detail view shows, and how far it is scrolled. */
  readonly detailKey: string | undefined;
  readonly detailScroll: number;
  readonly helpScroll: number;
  /** How far the events pane is scrolled (0: the newest on top). */
  readonly eventsScroll: number;
  /** How far the confirm dialog's list of entries is scrolled. */
  readonly confirmScroll: number;
  readonly confirm: ConfirmState | undefined;
  /** The K dialog: the leftovers it asks about, each with its agent. */
  readonly leftoverConfirm?: { readonly targets: readonly LeftoverTarget[] } | undefined;
  /** One line for the person: what happened, or why a key did nothing. */
  readonly message: { readonly text: string; readonly tone: 'info' | 'warn' | 'error' } | undefined;
}

export type Effect =
  | { readonly type: 'quit' }
  | { readonly type: 'refresh' }
  | { readonly type: 'evict'; readonly selection: readonly Finding[]; readonly force: boolean }
  /** Stop the running eviction after the entry being sent. */
  | { readonly type: 'cancel' }
  /** Switch the tmux client to the pane this pid runs (or ran) in. */
  | { readonly type: 'jump'; readonly pid: number }
  /** Put this text (already sanitized) on the clipboard. */
  | { readonly type: 'copy'; readonly text: string }
  /** End these leftovers: SIGTERM, then SIGKILL after the grace. */
  | { readonly type: 'end-leftovers'; readonly selection: readonly LeftoverTarget[] };

/** What the reducer needs to know of the screen: the rows shown, the page, the overlay's length. */
export interface ScreenFacts extends RowsOnScreen {
  readonly readOnly: boolean;
  /** Lines of the detail view or help overlay, for their scrolling. */
  readonly overlayLines?: number;
  /** Local pid → its tmux pane (the engine's). */
  readonly panes?: ReadonlyMap<number, TmuxPane> | undefined;
  /** How many registries are read: with one, the table has no SOURCE column to sort by. */
  readonly sourceCount?: number | undefined;
  /** Lines the overlay scrolls in, when not the page (the confirm dialog's list under its question). */
  readonly overlayPage?: number;
  /** The ids of the columns shown at this width: `<` `>` sort by these only. Default every column of the tab. */
  readonly sortable?: readonly string[] | undefined;
  /** Some row has leftovers: the table has its LEFT column to sort by. */
  readonly withLeftovers?: boolean | undefined;
}

export type Action =
  /** A key of the keymap; `text` is what was typed, for a binding that takes text. */
  | { readonly type: 'command'; readonly command: Command; readonly text?: string | undefined }
  /** The rows changed (new snapshot, resize): keep the cursor on its finding. */
  | { readonly type: 'rows' }
  | { readonly type: 'evicted'; readonly text: string; readonly tone: 'info' | 'warn' | 'error' }
  | { readonly type: 'message'; readonly text: string; readonly tone: 'info' | 'warn' | 'error' }
  /** A K run is over: what became of the leftovers, in one line. */
  | { readonly type: 'ended'; readonly text: string; readonly tone: 'info' | 'warn' | 'error' }
  /** This message has been shown long enough (the App's timer): it goes, unless another replaced it. */
  | { readonly type: 'message-expired'; readonly message: ViewState['message'] };

/** The next state, and the side effect to carry out, if any. */
export interface ViewTransition {
  readonly state: ViewState;
  readonly effect?: Effect | undefined;
}

export const initialViewState: ViewState = {
  stack: ['table'],
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
  helpScroll: 0,
  eventsScroll: 0,
  confirmScroll: 0,
  confirm: undefined,
  message: undefined,
};

/** The choices kept from one run to the next (the monitor stores them in the state dir). */
export interface KeptView {
  readonly tab: Tab;
  readonly sortColumn: string | undefined;
  readonly sortReverse: boolean;
  readonly problemsOnly: boolean;
}

export function keptOf(s: ViewState): KeptView {
  return { tab: s.tab, sortColumn: s.sortColumn, sortReverse: s.sortReverse, problemsOnly: s.problemsOnly };
}

/** Kept choices as view state; a column the tab does not have is the default order. */
export function fromKept(k: KeptView): Partial<ViewState> {
  const known = k.sortColumn !== undefined && columnsFor(k.tab, undefined, 2, true).some((c) => c.id === k.sortColumn);
  return { tab: k.tab, sortColumn: known ? k.sortColumn : undefined, sortReverse: k.sortReverse, problemsOnly: k.problemsOnly };
}

export const READ_ONLY_MESSAGE = 'read-only: eviction is off (started with --read-only)';
/** Marks are for evicting: in --read-only they would promise what no key does. */
export const READ_ONLY_MARKS = 'read-only: no marks (they are for evicting, which is off)';
export const READ_ONLY_LEFTOVERS_MESSAGE = 'read-only: no process is signalled (started with --read-only); K would end what a dead agent left running';

/** The mode on top of the stack: the one that takes the keys and draws the footer. */
export function modeOf(s: ViewState): Mode {
  return s.stack[s.stack.length - 1] ?? 'table';
}

/** Open a view over the current one (opening the one already on top opens it afresh). */
function push(s: ViewState, mode: Mode): ViewState {
  return modeOf(s) === mode ? s : { ...s, stack: [...s.stack, mode] };
}

/** Close the view on top; the table at the bottom is never closed. */
function pop(s: ViewState): ViewState {
  return s.stack.length > 1 ? { ...s, stack: s.stack.slice(0, -1) } : s;
}

/** The next stage of the view on top (the confirm dialog's second question, its progress). */
function replaceTop(s: ViewState, mode: Mode): ViewState {
  return { ...s, stack: [...s.stack.slice(0, -1), mode] };
}

const DIALOG: ReadonlySet<Mode> = new Set(['confirm', 'confirm-force', 'evicting', 'cancelling', 'confirm-leftovers', 'ending']);

export function reduce(state: ViewState, action: Action, facts: ScreenFacts): ViewTransition {
  switch (action.type) {
    case 'rows':
      return { state: anchor(state, facts) };
    case 'message':
      return { state: { ...state, message: { text: action.text, tone: action.tone } } };
    case 'message-expired': {
      // The cancel's word stays while the run it cancels is still sending.
      const running = modeOf(state) === 'evicting' || modeOf(state) === 'cancelling';
      return { state: state.message === action.message && !running ? { ...state, message: undefined } : state };
    }
    case 'evicted':
      return { state: anchor({ ...closeDialog(state), marks: new Set(), message: { text: action.text, tone: action.tone } }, facts) };
    case 'ended':
      return { state: anchor({ ...closeDialog(state), message: { text: action.text, tone: action.tone } }, facts) };
    case 'command':
      return command(state, action.command, action.text ?? '', facts);
  }
}

/** Close the dialog, and the detail view under it if it showed a row that was up for eviction. */
function closeDialog(s: ViewState): ViewState {
  const selection = s.confirm?.selection ?? [];
  let next: ViewState = DIALOG.has(modeOf(s)) ? pop(s) : s;
  if (modeOf(next) === 'detail' && selection.some((f) => findingKey(f) === s.detailKey)) next = pop(next);
  return { ...next, confirm: undefined, leftoverConfirm: undefined };
}

const MOVES: ReadonlySet<Command> = new Set(['nav.up', 'nav.down', 'nav.pageUp', 'nav.pageDown', 'nav.top', 'nav.bottom', 'mark.toggle']);

function command(s: ViewState, cmd: Command, text: string, facts: ScreenFacts): ViewTransition {
  const base = s.message ? { ...s, message: undefined } : s;
  const cleared = MOVES.has(cmd) && modeOf(s) === 'table' ? { ...base, pinned: true } : base;
  const filterTo = (filter: string) => ({ state: anchor({ ...s, filter, cursor: 0, top: 0, pinned: false }, facts) });
  switch (cmd) {
    case 'nav.up':
      return isScrolling(s) ? scrollBy(s, -1, facts) : { state: moveTo(cleared, s.cursor - 1, facts) };
    case 'nav.down':
      return isScrolling(s) ? scrollBy(s, 1, facts) : { state: moveTo(cleared, s.cursor + 1, facts) };
    case 'nav.pageUp':
      return isScrolling(s) ? scrollBy(s, -(facts.overlayPage ?? facts.pageSize), facts) : { state: moveTo(cleared, s.cursor - facts.pageSize, facts) };
    case 'nav.pageDown':
      return isScrolling(s) ? scrollBy(s, facts.overlayPage ?? facts.pageSize, facts) : { state: moveTo(cleared, s.cursor + facts.pageSize, facts) };
    case 'nav.top':
      return isScrolling(s) ? scrollBy(s, -Number.MAX_SAFE_INTEGER, facts) : { state: moveTo(cleared, 0, facts) };
    case 'nav.bottom':
      return isScrolling(s) ? scrollBy(s, Number.MAX_SAFE_INTEGER, facts) : { state: moveTo(cleared, facts.rows.length - 1, facts) };
    case 'filter.start':
      return { state: push(cleared, 'filter') };
    case 'filter.type':
      return filterTo(s.filter + sanitize(text, 64));
    case 'filter.backspace':
      return filterTo([...s.filter].slice(0, -1).join(''));
    case 'filter.accept':
      return { state: pop(s) };
    case 'filter.clear':
      // At the prompt, or on the table with a kept filter: the rows come back, the prompt closes.
      return { state: anchor({ ...pop(cleared), filter: '' }, facts) };
    case 'filter.next':
    case 'filter.prev':
      return nextMatch(cleared, cmd === 'filter.next' ? 1 : -1, facts);
    case 'sort.next':
    case 'sort.prev':
      return { state: sortBy(cleared, cmd === 'sort.next' ? 1 : -1, facts) };
    case 'sort.reverse':
      return { state: { ...cleared, sortReverse: !s.sortReverse } };
    case 'mark.toggle': {
      if (facts.readOnly) return { state: { ...cleared, message: { text: READ_ONLY_MARKS, tone: 'warn' } } };
      const key = currentKey(s, facts);
      if (key === undefined) return { state: s };
      const marks = new Set(s.marks);
      if (!marks.delete(key)) marks.add(key);
      return { state: moveTo({ ...cleared, marks }, s.cursor + 1, facts) };
    }
    case 'mark.problems': {
      if (facts.readOnly) return { state: { ...s, message: { text: READ_ONLY_MARKS, tone: 'warn' } } };
      const marks = new Set(s.marks);
      let n = 0;
      for (const f of facts.rows) if (f.problem && f.evictable) (marks.add(findingKey(f)), n++);
      return { state: { ...s, marks, message: { text: n === 0 ? 'no problems to mark here' : `marked ${n} problem${n === 1 ? '' : 's'}`, tone: 'info' } } };
    }
    case 'mark.none':
      return { state: { ...cleared, marks: new Set() } };
    case 'evict.selected':
      return askToEvict(s, selected(s, facts), facts, 'nothing to evict: no row here');
    case 'evict.problems':
      return askToEvict(s, facts.rows.filter((f) => f.problem), facts, problemsEmpty(s, facts), problemsScope(s, facts));
    case 'evict.cancel':
      if (modeOf(s) === 'ending') return { state: { ...s, message: { text: 'stopping: no more SIGTERM, and no SIGKILL', tone: 'warn' } }, effect: { type: 'cancel' } };
      return {
        state: { ...replaceTop(s, 'cancelling'), message: { text: `cancelling: stops after the entry being sent; ${keysOf('app.quit', 'cancelling')} again quits`, tone: 'warn' } },
        effect: { type: 'cancel' },
      };
    case 'leftovers.end':
      return askToEnd(s, facts);
    case 'view.problems':
      return { state: anchor({ ...cleared, problemsOnly: !s.problemsOnly }, facts) };
    case 'view.details': {
      const key = currentKey(s, facts);
      return key === undefined ? { state: s } : { state: { ...push(cleared, 'detail'), detailKey: key, detailScroll: 0 } };
    }
    case 'view.tab':
      return { state: { ...cleared, tab: s.tab === 'sessions' ? 'claims' : 'sessions', cursor: 0, top: 0, cursorKey: undefined, pinned: false, sortColumn: undefined } };
    case 'view.events':
      return { state: { ...push(cleared, 'events'), eventsScroll: 0 } };
    case 'view.help':
      return { state: { ...push(cleared, 'help'), helpScroll: 0 } };
    case 'view.back':
      return { state: pop(cleared) };
    case 'pane.jump':
      return jumpTo(cleared, facts);
    case 'row.copy': {
      const f = currentFinding(s, facts);
      if (!f) return { state: { ...cleared, message: { text: 'nothing to copy: no row here', tone: 'info' } } };
      return { state: cleared, effect: { type: 'copy', text: sanitize(f.id, 400) } };
    }
    case 'app.refresh':
      return { state: { ...s, message: { text: 'refreshing: probing every pid and re-syncing', tone: 'info' } }, effect: { type: 'refresh' } };
    case 'app.quit':
      return { state: s, effect: { type: 'quit' } };
    case 'confirm.yes': {
      if (modeOf(s) === 'confirm-leftovers') {
        const targets = s.leftoverConfirm?.targets ?? [];
        return { state: replaceTop(s, 'ending'), effect: { type: 'end-leftovers', selection: targets } };
      }
      const c = s.confirm;
      if (!c) return { state: s };
      if (modeOf(s) === 'confirm' && c.needsForce.length > 0) return { state: replaceTop(s, 'confirm-force') };
      // Every entry needs force: y has nothing to send. Say why, and keep the dialog open on f.
      if (c.evictable.length === 0) return { state: { ...s, confirm: { ...c, yesSentNothing: true }, message: { text: onlyForced(c), tone: 'warn' } } };
      return { state: replaceTop(base, 'evicting'), effect: { type: 'evict', selection: c.evictable, force: false } };
    }
    case 'confirm.force': {
      const c = s.confirm;
      if (!c || modeOf(s) !== 'confirm-force') return { state: s };
      return { state: replaceTop(base, 'evicting'), effect: { type: 'evict', selection: c.selection, force: true } };
    }
    case 'confirm.no':
      if (modeOf(s) === 'confirm-leftovers') return { state: { ...pop(s), leftoverConfirm: undefined, message: { text: 'cancelled: no process signalled', tone: 'info' } } };
      return { state: { ...pop(s), confirm: undefined, message: { text: 'cancelled: nothing evicted', tone: 'info' } } };
  }
}

/** Why y sends nothing when every entry needs force, and what does (the dialog says it too). */
function onlyForced(c: ConfirmState): string {
  const all = c.needsForce.length === 1 ? 'it needs' : `all ${c.needsForce.length} need`;
  return `nothing sent: ${all} force; ${keysOf('confirm.force', 'confirm-force')} evicts anyway`;
}

/** K: the leftovers of the detail view's row, the marked rows, or the current row, in a dialog that asks first. */
function askToEnd(s: ViewState, facts: ScreenFacts): ViewTransition {
  if (facts.readOnly) return { state: { ...s, message: { text: READ_ONLY_LEFTOVERS_MESSAGE, tone: 'warn' } } };
  const rows = selected(s, facts);
  const targets: LeftoverTarget[] = rows.flatMap((f) => (leftoversOf(f) ?? []).map((leftover) => ({ leftover, agent: { source: f.source, id: f.id, pid: leftover.agentPid } })));
  if (targets.length === 0) {
    const text = rows.length === 0 ? 'no row here' : `nothing to end: ${rows.length === 1 ? 'this row has' : 'these rows have'} no leftovers (processes a dead agent started that still run)`;
    return { state: { ...s, message: { text, tone: 'info' } } };
  }
  return { state: { ...push(s, 'confirm-leftovers'), leftoverConfirm: { targets }, confirmScroll: 0, message: undefined } };
}

function askToEvict(s: ViewState, chosen: Finding[], facts: ScreenFacts, empty: string, scope?: string): ViewTransition {
  if (facts.readOnly) return { state: { ...s, message: { text: READ_ONLY_MESSAGE, tone: 'warn' } } };
  // A row gone from its registry is shown for its leftovers only: there is nothing to evict.
  const selection = chosen.filter((f) => !departedOf(f));
  if (selection.length === 0 && chosen.length > 0) {
    return { state: { ...s, message: { text: `nothing to evict: no longer in its registry (${keysOf('leftovers.end', 'table')} ends what it left running)`, tone: 'info' } } };
  }
  if (selection.length === 0) return { state: { ...s, message: { text: empty, tone: 'info' } } };
  const confirm = confirmFor(selection, scope);
  if ('refused' in confirm) return { state: { ...s, message: { text: confirm.refused, tone: 'warn' } } };
  return { state: { ...push(s, 'confirm'), confirm, confirmScroll: 0, message: undefined } };
}

/** X evicts the problems the table shows: how they relate to every problem ("3 shown of 12 problems; filter: foo"). */
function problemsScope(s: ViewState, facts: ScreenFacts): string {
  const shown = facts.rows.filter((f) => f.problem).length;
  const all = facts.all.filter((f) => f.problem).length;
  const bits = [`${shown} shown of ${all} problem${all === 1 ? '' : 's'}`];
  if (s.filter) bits.push(`filter: ${s.filter}`);
  if (s.problemsOnly) bits.push('problems only');
  bits.push(s.tab);
  return bits.join('; ');
}

function problemsEmpty(s: ViewState, facts: ScreenFacts): string {
  const all = facts.all.filter((f) => f.problem).length;
  if (all === 0) return 'no problems: nothing to evict';
  return `no problems shown here (${all} in all${s.filter ? `; the filter "${s.filter}" hides them` : ''}): nothing to evict`;
}

/** The next (or previous) row after the cursor that matches the kept filter, round the end. */
function nextMatch(s: ViewState, dir: 1 | -1, facts: ScreenFacts): ViewTransition {
  if (!s.filter.trim()) return { state: { ...s, message: { text: `no filter to match: ${keysOf('filter.start', 'table')} sets one`, tone: 'info' } } };
  const n = facts.rows.length;
  for (let step = 1; step <= n; step++) {
    const i = (((s.cursor + dir * step) % n) + n) % n;
    if (matchesFilter(facts.rows[i]!, s.filter)) return { state: moveTo({ ...s, pinned: true }, i, facts) };
  }
  return { state: { ...s, message: { text: `nothing matches "${s.filter}"`, tone: 'info' } } };
}

/** In the detail view, its finding; else the marked rows (in row order) if any are marked, else the current row. */
function selected(s: ViewState, facts: ScreenFacts): Finding[] {
  if (modeOf(s) === 'detail') {
    const f = facts.all.find((x) => findingKey(x) === s.detailKey);
    return f ? [f] : [];
  }
  if (s.marks.size > 0) {
    const marked = facts.all.filter((f) => s.marks.has(findingKey(f)));
    if (marked.length > 0) return marked;
  }
  const current = facts.rows[s.cursor];
  return current ? [current] : [];
}

/** The detail view's finding, else the row under the cursor. */
function currentFinding(s: ViewState, facts: ScreenFacts): Finding | undefined {
  if (modeOf(s) === 'detail') return facts.all.find((x) => findingKey(x) === s.detailKey);
  return facts.rows[s.cursor];
}

function jumpTo(s: ViewState, facts: ScreenFacts): ViewTransition {
  const f = currentFinding(s, facts);
  const pid = f?.entry.pid;
  if (!f || !isUsablePid(pid)) return { state: { ...s, message: { text: 'no tmux pane: this row has no local pid', tone: 'info' } } };
  if (!f.evidence.host.local) return { state: { ...s, message: { text: `no tmux pane: pid ${pid} runs on another host`, tone: 'info' } } };
  const key = paneKeyOfRow(f, facts.panes);
  if (key === undefined) return { state: { ...s, message: { text: `no tmux pane known for pid ${pid}`, tone: 'info' } } };
  return { state: s, effect: { type: 'jump', pid: key } };
}

/**
 * The next (or previous) column shown, in table order, round the end. The default order is the
 * verdict column's (it carries the mark), so the first `>` moves to the column after it; a
 * column not shown at this width is passed over (the sorted one itself is always shown).
 */
function sortBy(s: ViewState, dir: 1 | -1, facts: ScreenFacts): ViewState {
  const current = s.sortColumn ?? VERDICT_COLUMN;
  const shown = facts.sortable === undefined ? undefined : new Set(facts.sortable);
  const ids = columnsFor(s.tab, facts.panes, facts.sourceCount, facts.withLeftovers)
    .map((c) => c.id)
    .filter((id) => shown === undefined || shown.has(id) || id === current);
  const at = ids.indexOf(current);
  const next = ids[(at + dir + ids.length) % ids.length];
  return { ...s, sortColumn: next === VERDICT_COLUMN ? undefined : next };
}

/** The column of the default order (worst verdict first). */
const VERDICT_COLUMN = 'verdict';

function isScrolling(s: ViewState): boolean {
  const mode = modeOf(s);
  return mode === 'detail' || mode === 'help' || mode === 'events' || DIALOG.has(mode);
}

/** How far the overlay on top (detail, events, help, the confirm dialog's list) is scrolled. */
export function overlayScroll(s: ViewState): number {
  const mode = modeOf(s);
  if (DIALOG.has(mode)) return s.confirmScroll;
  return mode === 'help' ? s.helpScroll : mode === 'events' ? s.eventsScroll : s.detailScroll;
}

function scrollBy(s: ViewState, by: number, facts: ScreenFacts): ViewTransition {
  const page = facts.overlayPage ?? facts.pageSize;
  const max = Math.max(0, (facts.overlayLines ?? 0) - page);
  const to = Math.min(max, Math.max(0, overlayScroll(s) + by));
  const mode = modeOf(s);
  if (DIALOG.has(mode)) return { state: { ...s, confirmScroll: to } };
  return { state: mode === 'help' ? { ...s, helpScroll: to } : mode === 'events' ? { ...s, eventsScroll: to } : { ...s, detailScroll: to } };
}

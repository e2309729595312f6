// Which findings the table shows, in which order: the tab's kind, the filter, problems-only,
// then problems first (always: they are why the tool exists), then the sort column, then id.
import { sanitize } from '../core/sanitize.js';
import type { Finding } from '../core/types.js';
import { sortSteps, type Steps } from '../plumbing/steps.js';
import { columnsFor, VERDICT_ORDER, type CellContext, type Tab } from './columns.js';

export interface RowQuery {
  readonly tab: Tab;
  readonly filter: string;
  readonly problemsOnly: boolean;
  /** A column id of the tab, or undefined for the default (verdict, worst first). */
  readonly sortColumn?: string | undefined;
  readonly sortReverse: boolean;
}

/**
 * The text the filter matches: each field as the table shows it (sanitized: "^[" for an ESC, a
 * nested pid as flat text). Never Array#join over raw values, whose toString recursion a pid
 * nested 100,000 levels deep would overflow.
 */
function haystack(f: Finding): string {
  const parts: unknown[] = [f.id, f.verdict, f.source, f.note, f.entry.pid];
  if (f.kind === 'session') parts.push(f.entry.cwd, f.entry.machine, f.entry.status, f.entry.port);
  else parts.push(f.holder);
  let text = '';
  for (const p of parts) if (p !== undefined && p !== null) text += `${text ? ' ' : ''}${typeof p === 'number' ? String(p) : sanitize(p, 400)}`;
  return text.toLowerCase();
}

/** The finding matches the filter's text (any shown field, case-insensitive; an empty filter matches all). */
export function matchesFilter(f: Finding, filter: string): boolean {
  const needle = filter.trim().toLowerCase();
  return needle === '' || haystack(f).includes(needle);
}

export function visibleRows(findings: readonly Finding[], q: RowQuery, ctx: CellContext): Finding[] {
  const order = rowOrder(q, ctx);
  const rows = findings.filter((f) => order.shows(f));
  // Decorate once: sort keys can be costly (ages), and 10,000 rows sort in n log n comparisons.
  const decorated = rows.map((f) => ({ f, key: order.keyOf(f) }));
  decorated.sort(order.compare);
  return decorated.map((d) => d.f);
}

/**
 * Findings a table may have for a new snapshot's rows to be worked out in the render of its
 * frame; past it they are worked out in slices (nextRowsSteps, useTableRows).
 */
export const SLICED_ROWS = 5_000;
/** Findings looked at between two pauses of nextRowsSteps. */
const ROWS_STEP = 2_000;

/** The rows of one snapshot as the table shows them, kept to build the next snapshot's from. */
export interface RowsMemo {
  readonly findings: readonly Finding[];
  readonly query: RowQuery;
  readonly ctx: CellContext;
  readonly rows: readonly Finding[];
  /** `findings` as a set: what the next snapshot has that this one did not. */
  readonly present: ReadonlySet<Finding>;
}

/** The rows for a query and context (a key changed them, or the first snapshot): sorted whole. */
export function firstRows(findings: readonly Finding[], q: RowQuery, ctx: CellContext): RowsMemo {
  return { findings, query: q, ctx, rows: visibleRows(findings, q, ctx), present: new Set(findings) };
}

/** Whether `memo` holds rows of this query (then a new snapshot's rows can be built from it). */
export function sameView(memo: RowsMemo | undefined, q: RowQuery): memo is RowsMemo {
  return memo !== undefined && sameQuery(memo.query, q);
}

/**
 * A new snapshot's rows (or the same rows in a new context: the minute moved the ages), as
 * visibleRows orders them, from the rows of the last one with the same query, pausing every
 * ROWS_STEP findings. A snapshot keeps the objects of the rows that did not change (the engine
 * reuses them), so only the new objects are sorted and put in place: the thousands that stayed
 * are not sorted again. When most rows changed, or the context did, all are sorted, in slices
 * too (sortSteps).
 */
export function* nextRowsSteps(memo: RowsMemo, findings: readonly Finding[], ctx: CellContext): Steps<RowsMemo> {
  const q = memo.query;
  const order = rowOrder(q, ctx);
  const present = new Set<Finding>();
  const fresh: Finding[] = [];
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    present.add(f);
    if (!memo.present.has(f) && order.shows(f)) fresh.push(f);
    if ((i + 1) % ROWS_STEP === 0) yield;
  }
  if (memo.ctx !== ctx || fresh.length > findings.length / 4) {
    // Most rows changed (a reconnect, a flood of events between two snapshots), or their sort keys may have: all are sorted.
    const shown: Keyed[] = [];
    for (let i = 0; i < findings.length; i++) {
      const f = findings[i]!;
      if (order.shows(f)) shown.push({ f, key: order.keyOf(f) });
      if ((i + 1) % ROWS_STEP === 0) yield;
    }
    const sorted = yield* sortSteps(shown, order.compare);
    return { findings, query: q, ctx, rows: sorted.map((d) => d.f), present };
  }
  const kept: Finding[] = [];
  for (let i = 0; i < memo.rows.length; i++) {
    const f = memo.rows[i]!;
    if (present.has(f)) kept.push(f);
    if ((i + 1) % ROWS_STEP === 0) yield;
  }
  const added = yield* sortSteps(
    fresh.map((f) => ({ f, key: order.keyOf(f) })),
    order.compare,
  );
  const rows = yield* insertSorted(kept, added, order);
  return { findings, query: q, ctx, rows, present };
}

/** `kept` (in order) with `added` (in order) put in their places: each found by a binary search, then one pass. */
function* insertSorted(kept: readonly Finding[], added: readonly Keyed[], order: RowOrder): Steps<Finding[]> {
  const at: number[] = [];
  for (const a of added) {
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order.compare({ f: kept[mid]!, key: order.keyOf(kept[mid]!) }, a) <= 0) lo = mid + 1;
      else hi = mid;
    }
    at.push(lo);
    if (at.length % 256 === 0) yield;
  }
  yield;
  const rows: Finding[] = [];
  let j = 0;
  for (let i = 0; i <= kept.length; i++) {
    while (j < added.length && at[j] === i) rows.push(added[j++]!.f);
    if (i < kept.length) rows.push(kept[i]!);
  }
  return rows;
}

interface Keyed {
  readonly f: Finding;
  readonly key: string | number;
}

interface RowOrder {
  shows(f: Finding): boolean;
  keyOf(f: Finding): string | number;
  compare(a: Keyed, b: Keyed): number;
}

/** Which rows a query shows and in which order: problems first, then the sort key, then the id, source and kind. */
function rowOrder(q: RowQuery, ctx: CellContext): RowOrder {
  const kind = q.tab === 'sessions' ? 'session' : 'claim';
  const needle = q.filter.trim().toLowerCase();
  const column = q.sortColumn === undefined ? undefined : columnsFor(q.tab, ctx.panes, 2, true).find((c) => c.id === q.sortColumn);
  const dir = q.sortReverse ? -1 : 1;
  return {
    shows: (f) => f.kind === kind && (!q.problemsOnly || f.problem) && (needle === '' || haystack(f).includes(needle)),
    keyOf: column ? (f) => column.sortKey(f, ctx) : (f) => VERDICT_ORDER.indexOf(f.verdict),
    compare: (a, b) => {
      if (a.f.problem !== b.f.problem) return a.f.problem ? -1 : 1;
      return compare(a.key, b.key) * dir || compare(a.f.id, b.f.id) || compare(a.f.source, b.f.source) || compare(a.f.kind, b.f.kind);
    },
  };
}

function sameQuery(a: RowQuery, b: RowQuery): boolean {
  return a.tab === b.tab && a.filter === b.filter && a.problemsOnly === b.problemsOnly && a.sortColumn === b.sortColumn && a.sortReverse === b.sortReverse;
}

function compare(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

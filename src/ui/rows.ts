// Which findings the table shows, in which order: the tab's kind, the filter, problems-only,
// then problems first (always: they are why the tool exists), then the sort column, then id.
import { sanitize } from '../core/sanitize.js';
import type { Finding } from '../core/types.js';
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
  const kind = q.tab === 'sessions' ? 'session' : 'claim';
  const needle = q.filter.trim().toLowerCase();
  const rows = findings.filter(
    (f) => f.kind === kind && (!q.problemsOnly || f.problem) && (needle === '' || haystack(f).includes(needle)),
  );
  const column = q.sortColumn === undefined ? undefined : columnsFor(q.tab, ctx.panes, 2, true).find((c) => c.id === q.sortColumn);
  const keyOf = column ? (f: Finding) => column.sortKey(f, ctx) : (f: Finding) => VERDICT_ORDER.indexOf(f.verdict);
  // Decorate once: sort keys can be costly (ages), and 10,000 rows sort in n log n comparisons.
  const decorated = rows.map((f) => ({ f, key: keyOf(f) }));
  const dir = q.sortReverse ? -1 : 1;
  decorated.sort((a, b) => {
    if (a.f.problem !== b.f.problem) return a.f.problem ? -1 : 1;
    const byKey = compare(a.key, b.key) * dir;
    return byKey !== 0 ? byKey : compare(a.f.id, b.f.id);
  });
  return decorated.map((d) => d.f);
}

function compare(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

// Column definitions, k9s-style: one generic table, driven per tab by columns that each carry a
// priority. Narrow panes drop the least important columns instead of wrapping.
import { sanitize } from '../core/sanitize.js';
import { VERDICTS_WORST_FIRST, type ClaimFinding, type Finding, type SessionFinding } from '../core/types.js';
import { isUsablePid, isUsablePort } from '../core/pid.js';
import { judgedPid } from '../core/rules/pid-domain.js';
import type { TmuxPane } from '../core/tmux.js';
import { bytesText, cpuText } from '../core/usage.js';
import { cellWidth, checkingText, formatAge, shortenPath, truncate } from './text.js';
import { ageOrigin, ageSortKey, ageText } from './ages.js';
import { checkingOf, leftoversOf, staleOf } from '../engine/types.js';
import { leftoverCell } from '../core/leftovers.js';
import { STALE_MARKER, verdictMarker } from './theme.js';

export type Tab = 'sessions' | 'claims';

export interface CellContext {
  /** Local clock. */
  readonly now: number;
  readonly home?: string | undefined;
  /** Per source: registry clock minus local clock. */
  readonly clockOffsetMs?: Readonly<Record<string, number>> | undefined;
  /** Cuts the ids of the rows shown so that different ids read differently (see ids.ts). */
  readonly shortId?: ((id: string, width: number) => string) | undefined;
  /** The same for the claims' holders. */
  readonly shortHolder?: ((id: string, width: number) => string) | undefined;
  /** Local pid → the tmux pane it runs (or, dead, ran) in. */
  readonly panes?: ReadonlyMap<number, TmuxPane> | undefined;
}

export interface Column {
  readonly id: string;
  readonly title: string;
  /** Fixed width, or the minimum of a flexible column. */
  readonly width: number;
  /** Flexible columns share what is left, in proportion to this weight. */
  readonly flex?: number;
  /** 0 is kept longest; higher numbers are dropped first in a narrow pane. */
  readonly priority: number;
  readonly align?: 'left' | 'right';
  /** Cell text, already inert (sanitized); `width` is the cell's width, for shortening. */
  value(f: Finding, ctx: CellContext, width: number): string;
  sortKey(f: Finding, ctx: CellContext): string | number;
}

const pidText = (pid: unknown): string => (isUsablePid(pid) ? String(pid) : pid === undefined || pid === null ? '-' : sanitize(pid, 12));

const verdictColumn: Column = {
  id: 'verdict',
  title: 'VERDICT',
  width: 12,
  priority: 0,
  // A stale row (its registry is not read now) is marked in text, before the verdict's own marker.
  // A row whose process has not had its first probe says so, not a premature `unverified`.
  value: (f) => `${staleOf(f) ? STALE_MARKER : ''}${checkingOf(f) ? ` ${checkingText()}` : `${verdictMarker(f.verdict, f.problem)}${f.verdict}`}`,
  sortKey: (f) => VERDICT_ORDER.indexOf(f.verdict),
};

/** Worst first: the order problems are listed in. */
export const VERDICT_ORDER: readonly Finding['verdict'][] = VERDICTS_WORST_FIRST;

function pidColumn(priority: number): Column {
  return {
    id: 'pid',
    title: 'PID',
    width: 7,
    priority,
    align: 'right',
    value: (f) => pidText(f.entry.pid),
    sortKey: (f) => (isUsablePid(f.entry.pid) ? f.entry.pid : -1),
  };
}

/**
 * The tmux pane of a local row's process (a record of another pid namespace: its host pid), if
 * one is known; else the pane the record itself names (Claude Code's `tmux`: "work:@3.%12"), when
 * that pane is one ghostwatch knows.
 */
export function paneOfRow(f: Finding, panes: ReadonlyMap<number, TmuxPane> | undefined): TmuxPane | undefined {
  const key = paneKeyOfRow(f, panes);
  return key === undefined ? undefined : panes?.get(key);
}

/** The pid under which the engine knows that pane (what `o` asks the engine to jump to). */
export function paneKeyOfRow(f: Finding, panes: ReadonlyMap<number, TmuxPane> | undefined): number | undefined {
  if (panes === undefined || !f.evidence.host.local) return undefined;
  const pid = f.kind === 'session' ? judgedPid(f.entry, f.evidence) : f.entry.pid;
  if (isUsablePid(pid) && panes.has(pid)) return pid;
  const named = f.kind === 'session' ? recordedPaneId(f.entry.raw?.tmux) : undefined;
  if (named === undefined) return undefined;
  for (const [key, pane] of panes) if (pane.id === named) return key;
  return undefined;
}

/** The pane id (`%12`) of a record's `tmux` field ("<session>:@<window>.%<pane>"). */
export function recordedPaneId(tmux: unknown): string | undefined {
  return typeof tmux === 'string' ? /\.(%\d{1,9})$/.exec(tmux)?.[1] : undefined;
}

/** Where the agent runs in tmux (`work:2.1`): narrow, and the first column a narrow pane drops. */
const paneColumn: Column = {
  id: 'pane',
  title: 'PANE',
  width: 8,
  priority: 10,
  value: (f, ctx, w) => truncate(paneOfRow(f, ctx.panes)?.target ?? '-', w),
  sortKey: (f, ctx) => paneOfRow(f, ctx.panes)?.target ?? '',
};

/** What a dead agent left running: how many processes, and the first port one listens on ("2 :3000"). Shown while some row has leftovers. */
const leftColumn: Column = {
  id: 'left',
  title: 'LEFT',
  width: 8,
  priority: 1.5,
  align: 'right',
  value: (f, _c, w) => truncate(leftoverCell(leftoversOf(f)), w),
  sortKey: (f) => leftoversOf(f)?.length ?? 0,
};

/** Sorted heaviest first; rows whose cost is unknown (another host, a dead process) last. */
const UNKNOWN_COST = Number.MAX_SAFE_INTEGER;

/** CPU % of one core over the last probe interval (above 100 on several cores): optional, dropped right after PANE. */
const cpuColumn: Column = {
  id: 'cpu',
  title: 'CPU%',
  width: 5,
  priority: 9,
  align: 'right',
  value: (f) => cpuText(f.evidence.usage?.cpuPct),
  sortKey: (f) => -(f.evidence.usage?.cpuPct ?? -UNKNOWN_COST),
};

/** Resident memory: as optional as CPU%. */
const memColumn: Column = {
  id: 'mem',
  title: 'MEM',
  width: 5,
  priority: 9,
  align: 'right',
  value: (f) => bytesText(f.evidence.usage?.rssBytes),
  sortKey: (f) => -(f.evidence.usage?.rssBytes ?? -UNKNOWN_COST),
};

const sourceColumn: Column = {
  id: 'source',
  title: 'SOURCE',
  width: 9,
  priority: 8,
  value: (f) => sanitize(f.source, 32),
  sortKey: (f) => f.source,
};

export const SESSION_COLUMNS: readonly Column[] = [
  verdictColumn,
  {
    id: 'id',
    title: 'SESSION',
    width: 12,
    flex: 2,
    priority: 0,
    value: (f, ctx, w) => (ctx.shortId ?? truncate)(sanitize(f.id, 128), w),
    sortKey: (f) => f.id,
  },
  pidColumn(1),
  paneColumn,
  cpuColumn,
  memColumn,
  {
    id: 'age',
    title: 'AGE',
    width: 4,
    priority: 2,
    align: 'right',
    // For a problem whose process is gone: how long it has been gone (ages.ts); else how long the registry has had it.
    value: (f, ctx) => ageText(ageOrigin(f, ctx), ctx.now),
    sortKey: (f, ctx) => ageSortKey(f, ctx),
  },
  {
    // The widest column when there is room: a path is what tells agents apart.
    id: 'cwd',
    title: 'CWD',
    width: 10,
    flex: 4,
    priority: 3,
    value: (f, ctx, w) => (f.kind === 'session' && f.entry.cwd !== undefined ? shortenPath(sanitize(f.entry.cwd, 512), ctx.home, w) : '-'),
    sortKey: (f) => (f.kind === 'session' ? (f.entry.cwd ?? '') : ''),
  },
  {
    id: 'host',
    title: 'HOST',
    width: 10,
    priority: 4,
    value: (f, _c, w) => (f.kind === 'session' ? truncate(sanitize(f.entry.machine ?? '-', 64), w) : '-'),
    sortKey: (f) => (f.kind === 'session' ? (f.entry.machine ?? '') : ''),
  },
  {
    id: 'port',
    title: 'PORT',
    width: 5,
    priority: 5,
    align: 'right',
    value: (f) => (f.kind === 'session' && isUsablePort(f.entry.port) ? String(f.entry.port) : '-'),
    sortKey: (f) => (f.kind === 'session' && isUsablePort(f.entry.port) ? f.entry.port : -1),
  },
  {
    // Narrow and fixed: the registry's status word ("active", "offline"); a note is cut here and
    // read whole in the detail view. The room goes to CWD and SESSION.
    id: 'status',
    title: 'STATUS',
    width: 10,
    priority: 6,
    value: (f, ctx, w) => truncate(statusText(f, ctx), w),
    sortKey: (f) => statusText(f),
  },
  sourceColumn,
];

/**
 * The registry's status word first (what the column is for, also on a stale row), then how old a
 * stale row is ("active, stale 3m": the '~' in VERDICT marks it too), then the note.
 */
function statusText(f: Finding, ctx?: CellContext): string {
  const status = f.kind === 'session' ? sanitize(f.entry.status ?? '-', 24) : '-';
  const stale = staleOf(f);
  const age = stale && ctx ? `, stale ${formatAge(Math.max(0, ctx.now - stale.since))}` : '';
  return `${status}${age}${f.note ? `, ${f.note}` : ''}`;
}

export const CLAIM_COLUMNS: readonly Column[] = [
  verdictColumn,
  {
    id: 'resource',
    title: 'RESOURCE',
    width: 14,
    flex: 3,
    priority: 0,
    value: (f, ctx, w) => shortenPath(sanitize(f.id, 512), ctx.home, w),
    sortKey: (f) => f.id,
  },
  {
    id: 'holder',
    title: 'HOLDER',
    width: 12,
    flex: 2,
    priority: 1,
    value: (f, ctx, w) => (ctx.shortHolder ?? truncate)(sanitize((f as ClaimFinding).holder ?? '-', 128), w),
    sortKey: (f) => (f as ClaimFinding).holder ?? '',
  },
  pidColumn(2),
  {
    id: 'age',
    title: 'AGE',
    width: 4,
    priority: 3,
    align: 'right',
    value: (f, ctx) => ageText(ageOrigin(f, ctx), ctx.now),
    sortKey: (f, ctx) => ageSortKey(f, ctx),
  },
  sourceColumn,
  {
    // What the registry says about the lock: who set a manual lock and why, whose auto-lock it is.
    id: 'note',
    title: 'NOTE',
    width: 10,
    flex: 2,
    priority: 9,
    value: (f, _c, w) => truncate(sanitize(f.kind === 'claim' ? (f.entry.note ?? '-') : '-', 200), w),
    sortKey: (f) => (f.kind === 'claim' ? (f.entry.note ?? '') : ''),
  },
];

const SESSION_COLUMNS_NO_PANE = SESSION_COLUMNS.filter((c) => c !== paneColumn);
const SESSION_COLUMNS_ONE_SOURCE = SESSION_COLUMNS.filter((c) => c !== sourceColumn);
const SESSION_COLUMNS_NO_PANE_ONE_SOURCE = SESSION_COLUMNS_NO_PANE.filter((c) => c !== sourceColumn);

/**
 * The columns of a tab. PANE only while some agent runs in a tmux pane; SOURCE only when more than
 * one registry is read (with one, the header names it and the column would repeat it on every row);
 * LEFT only while some row has leftovers (after PID).
 */
export function columnsFor(tab: Tab, panes?: ReadonlyMap<number, TmuxPane>, sourceCount = 2, withLeftovers = false): readonly Column[] {
  if (tab === 'claims') return CLAIM_COLUMNS;
  const withPanes = panes !== undefined && panes.size > 0;
  const columns = sourceCount > 1 ? (withPanes ? SESSION_COLUMNS : SESSION_COLUMNS_NO_PANE) : withPanes ? SESSION_COLUMNS_ONE_SOURCE : SESSION_COLUMNS_NO_PANE_ONE_SOURCE;
  if (!withLeftovers) return columns;
  const at = columns.findIndex((c) => c.id === 'pid') + 1;
  return [...columns.slice(0, at), leftColumn, ...columns.slice(at)];
}

/** Cells before the first column: the cursor and the mark. */
export const GUTTER = 2;

export interface PlacedColumn {
  readonly column: Column;
  readonly width: number;
}

/** What layoutColumns knows of the rows besides the columns. */
export interface LayoutHints {
  /** Per column id, the cells its widest cell takes (columnNeeds): a column narrower is cut. */
  readonly needs?: ReadonlyMap<string, number> | undefined;
  /** A column shown whatever its priority: the one the table is sorted by, so its mark shows. */
  readonly keep?: string | undefined;
}

/**
 * Which columns fit in `total` cells, and how wide each is: columns are taken by priority while
 * their minimum widths (plus one space between) fit (`keep` first). The spare cells go first to
 * the columns whose content is cut, up to what it needs: the flexible ones by weight, then the
 * fixed ones by priority; what is left widens the flexible ones. Shown in their defined order.
 */
export function layoutColumns(columns: readonly Column[], total: number, hints: LayoutHints = {}): PlacedColumn[] {
  const room = total - GUTTER;
  const rank = (c: Column): number => (c.id === hints.keep ? -1 : c.priority);
  const chosen = new Set<Column>();
  let used = 0;
  for (const c of [...columns].sort((a, b) => rank(a) - rank(b))) {
    const need = c.width + (chosen.size > 0 ? 1 : 0);
    // Strictly by priority: once one does not fit, the rest go too and flexible columns widen.
    if (used + need > room) break;
    chosen.add(c);
    used += need;
  }
  const shown = columns.filter((c) => chosen.has(c));
  const widths = new Map(shown.map((c) => [c, c.width]));
  const cutBy = (c: Column): number => (hints.needs?.get(c.id) ?? 0) - widths.get(c)!;
  const flexible = shown.filter((c) => c.flex);
  let spare = share(flexible, Math.max(0, room - used), widths, cutBy);
  for (const c of shown.filter((x) => !x.flex).sort((a, b) => a.priority - b.priority)) {
    const give = Math.min(spare, Math.max(0, cutBy(c)));
    widths.set(c, widths.get(c)! + give);
    spare -= give;
  }
  share(flexible, spare, widths, () => Number.POSITIVE_INFINITY);
  return shown.map((c) => ({ column: c, width: widths.get(c)! }));
}

/** The same columns in the same widths. */
export function samePlacement(a: readonly PlacedColumn[], b: readonly PlacedColumn[]): boolean {
  return a.length === b.length && a.every((p, i) => p.column === b[i]!.column && p.width === b[i]!.width);
}

/** Gives up to `spare` cells to `columns` by their flex weight, each at most `room(c)` more; returns what is left. */
function share(columns: readonly Column[], spare: number, widths: Map<Column, number>, room: (c: Column) => number): number {
  let left = spare;
  let open = columns.filter((c) => room(c) > 0);
  while (left > 0 && open.length > 0) {
    const weights = open.reduce((sum, c) => sum + (c.flex ?? 1), 0);
    let given = 0;
    for (const c of open) {
      const portion = Math.min(room(c), Math.max(1, Math.floor((left * (c.flex ?? 1)) / weights)), left - given);
      widths.set(c, widths.get(c)! + portion);
      given += portion;
    }
    left -= given;
    open = open.filter((c) => room(c) > 0);
  }
  return left;
}

/** The widest a cell of a column is asked to be when measuring what it needs. */
const NEED_CAP = 160;

/**
 * Per column id, the cells its widest cell takes over `rows` (and its title with the sort mark):
 * what the column needs for none of them to be cut. The App measures the rows on screen.
 */
export function columnNeeds(columns: readonly Column[], rows: readonly Finding[], ctx: CellContext): Map<string, number> {
  const needs = new Map(columns.map((c) => [c.id, c.title.length + 1]));
  for (const f of rows) {
    for (const c of columns) {
      const cells = cellWidth(c.value(f, ctx, NEED_CAP));
      if (cells > needs.get(c.id)!) needs.set(c.id, cells);
    }
  }
  return needs;
}

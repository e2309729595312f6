// The table's cursor: where it is, what row it is on, the first row shown, and the marks that
// still name a row. Pure; the view reducer (view-state.ts) moves it.
import { findingKey } from '../core/evict-plan.js';
import type { Finding } from '../core/types.js';

export interface CursorState {
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
  readonly marks: ReadonlySet<string>;
}

/** The rows the cursor moves over. */
export interface RowsOnScreen {
  /** The rows on screen now, in order. */
  readonly rows: readonly Finding[];
  /** Every finding of every tab: marks of findings that are gone are dropped. */
  readonly all: readonly Finding[];
  readonly pageSize: number;
}

/** Put the cursor on row `index` (clamped) and scroll just enough to show it. */
export function moveTo<S extends CursorState>(s: S, index: number, on: RowsOnScreen): S {
  const n = on.rows.length;
  const cursor = n === 0 ? 0 : Math.min(n - 1, Math.max(0, index));
  const f = on.rows[cursor];
  const cursorKey = f ? findingKey(f) : undefined;
  const top = scrollFor(cursor, s.top, on.pageSize, n);
  // Nothing moved: the same state, so that a new snapshot's rows draw one frame, not two.
  if (cursor === s.cursor && cursorKey === s.cursorKey && top === s.top) return s;
  return { ...s, cursor, cursorKey, top };
}

/** After the rows changed: find the cursor's finding again, or keep its position. */
export function anchor<S extends CursorState>(s: S, on: RowsOnScreen): S {
  let index = s.cursor;
  if (s.pinned && s.cursorKey !== undefined) {
    const found = indexOfKey(on.rows, s.cursorKey, s.cursor);
    if (found !== -1) index = found;
  }
  const moved = moveTo(s, index, on);
  // Marks of findings that are gone would evict nothing; drop them so the count stays honest.
  if (s.marks.size === 0) return moved;
  const present = new Set(on.all.map(findingKey));
  const marks = new Set([...s.marks].filter((k) => present.has(k)));
  return marks.size === s.marks.size ? moved : { ...moved, marks };
}

/**
 * Where the row with this finding key is: at `hint` (where it was) or found by a scan that builds
 * a key only for rows whose id ends the key; -1 when no row has it. A flood of snapshots of 37,000
 * rows each moves the cursor's row: 37,000 key texts a snapshot are worth not making.
 */
function indexOfKey(rows: readonly Finding[], wanted: string, hint: number): number {
  const at = rows[hint];
  if (at !== undefined && findingKey(at) === wanted) return hint;
  for (let i = 0; i < rows.length; i++) {
    const f = rows[i]!;
    if (wanted.endsWith(f.id) && findingKey(f) === wanted) return i;
  }
  // A claim's key names its entry's key, not its id.
  return rows.findIndex((f) => findingKey(f) === wanted);
}

/** The finding key of the row under the cursor. */
export function currentKey(s: CursorState, on: RowsOnScreen): string | undefined {
  const f = on.rows[s.cursor];
  return f ? findingKey(f) : undefined;
}

function scrollFor(cursor: number, top: number, page: number, n: number): number {
  const size = Math.max(1, page);
  let t = top;
  if (cursor < t) t = cursor;
  if (cursor >= t + size) t = cursor - size + 1;
  return Math.max(0, Math.min(t, Math.max(0, n - size)));
}

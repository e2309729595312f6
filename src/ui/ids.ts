// Ids cut to a column's width so that rows that differ still read differently. UUIDv7 session
// ids begin with their creation time: sessions started minutes apart share their first 8–12 hex
// characters, so cutting the end (what `truncate` does) keeps exactly the part they share.
import { cellWidth, ELLIPSIS, headCells, tailCells, truncate } from './text.js';

/** How the ids of one table are cut: the end, the shared start, or the middle. */
export type IdStyle =
  | { readonly kind: 'head' }
  /** The start every id shares, collapsed to its first few characters, then what follows it. */
  | { readonly kind: 'skip'; readonly prefix: number }
  | { readonly kind: 'tail' };

/** One id in `width` cells in the given style; an id that fits is shown whole. */
export function cutId(id: string, width: number, style: IdStyle): string {
  if (cellWidth(id) <= width) return id;
  if (width <= 1) return truncate(id, width);
  switch (style.kind) {
    case 'head':
      return truncate(id, width);
    case 'skip': {
      const chars = [...id];
      const keep = Math.min(style.prefix, Math.max(2, Math.min(8, Math.floor((width - 2) / 3))));
      const head = headCells(chars.slice(0, keep).join(''), width - 2);
      const rest = chars.slice(style.prefix).join('');
      const room = width - cellWidth(head) - 1;
      return `${head}${ELLIPSIS}${cellWidth(rest) <= room ? rest : truncate(rest, room)}`;
    }
    case 'tail': {
      const head = headCells(id, Math.min(4, Math.floor((width - 1) / 3)));
      return `${head}${ELLIPSIS}${tailCells(id, width - cellWidth(head) - cellWidth(ELLIPSIS))}`;
    }
  }
}

function commonPrefix(ids: readonly string[]): number {
  if (ids.length < 2) return 0;
  const first = [...ids[0]!];
  let n = first.length;
  for (const id of ids) {
    const chars = [...id];
    let i = 0;
    while (i < n && i < chars.length && chars[i] === first[i]) i++;
    n = i;
    if (n === 0) break;
  }
  return n;
}

/**
 * The style for these ids at this width: plain truncation when it already tells every id apart,
 * else the shared start collapsed, else the end kept; when none tells them all apart, the one
 * that tells the most apart.
 */
export function chooseIdStyle(ids: readonly string[], width: number): IdStyle {
  const distinct = [...new Set(ids)];
  const long = distinct.filter((id) => cellWidth(id) > width);
  if (long.length < 2) return { kind: 'head' };
  const prefix = commonPrefix(distinct);
  const styles: IdStyle[] = [{ kind: 'head' }, ...(prefix > 0 ? [{ kind: 'skip', prefix } as const] : []), { kind: 'tail' }];
  let best: { style: IdStyle; apart: number } | undefined;
  for (const style of styles) {
    const apart = new Set(distinct.map((id) => cutId(id, width, style))).size;
    if (apart === distinct.length) return style;
    if (!best || apart > best.apart) best = { style, apart };
  }
  return best!.style;
}

/** For the ids of a table's rows: a cutter that picks the style once per width. */
export function idShortener(ids: readonly string[]): (id: string, width: number) => string {
  const styles = new Map<number, IdStyle>();
  return (id, width) => {
    if (cellWidth(id) <= width) return id;
    let style = styles.get(width);
    if (!style) {
      style = chooseIdStyle(ids, width);
      styles.set(width, style);
    }
    return cutId(id, width, style);
  };
}

/** The id and holder cutters of a table's rows, with the texts they were made for. */
export interface RowShorteners {
  readonly ids: readonly string[];
  readonly holders: readonly string[];
  readonly shortId: (id: string, width: number) => string;
  readonly shortHolder: (id: string, width: number) => string;
}

/**
 * The cutters for these rows, by the texts `idOf` and `holderOf` show of each. When the rows show
 * the same ids and holders in the same order as `previous`, `previous` itself: a new snapshot of
 * the same registry does not list, and choose a style for, 10,000 ids again.
 */
export function rowShorteners<T>(rows: readonly T[], idOf: (row: T) => string, holderOf: (row: T) => string, previous?: RowShorteners): RowShorteners {
  if (previous && previous.ids.length === rows.length) {
    let same = true;
    for (let i = 0; i < rows.length && same; i++) same = idOf(rows[i]!) === previous.ids[i] && holderOf(rows[i]!) === previous.holders[i];
    if (same) return previous;
  }
  const ids = rows.map(idOf);
  const holders = rows.map(holderOf);
  return { ids, holders, shortId: idShortener(ids), shortHolder: idShortener(holders) };
}

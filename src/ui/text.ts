// Fitting text into terminal cells: widths are display widths (what Ink measures with), never
// string lengths, so a CJK directory name cannot push a column out of line.
import stringWidth from 'string-width';
import { formatDuration } from '../core/duration.js';
import { ELLIPSIS, inert } from '../core/sanitize.js';
import { INVALID_TIME } from '../core/time.js';

export { ELLIPSIS } from '../core/sanitize.js';

/** The ellipsis' width now: the locale may make it "..." (useAsciiEllipsis) after this module loaded. */
const ellipsisWidth = (): number => cellWidth(ELLIPSIS);
/**
 * Printable ASCII (most ids, paths, names), the ellipsis a cut leaves and the "≥" of an age that
 * is a lower bound: one cell a UTF-16 unit, so measuring it is its length and cutting it is
 * slicing it.
 */
const ONE_CELL_EACH = /^[\x20-\x7e\u2026\u2265]*$/;

/**
 * The cells `text` takes, as string-width counts them. Most of what a table shows is ASCII with at
 * most an ellipsis: counted here without string-width's grapheme segmenter, which costs ~1 µs a
 * character (a row of 120 cells cut somewhere took ~0.1 ms, every row of every frame).
 */
export function cellWidth(text: string): number {
  return ONE_CELL_EACH.test(text) ? text.length : stringWidth(text);
}

/**
 * Cut to at most `width` cells, ending with an ellipsis when cut. Every string the screen shows
 * passes here (through `fit` or directly), so here it is made inert as well: an escape, a C1
 * control, a bidi override or a zero-width character shows as visible text ("^[", "<U+202E>")
 * whichever path it came by, sanitized before or not.
 */
export function truncate(raw: string, width: number): string {
  if (width <= 0) return '';
  const text = inert(raw);
  if (cellWidth(text) <= width) return text;
  // Narrower than the mark itself: as much of the mark as fits.
  if (width < ellipsisWidth()) return ELLIPSIS.slice(0, width);
  if (ONE_CELL_EACH.test(text)) return text.slice(0, width - ellipsisWidth()) + ELLIPSIS;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = cellWidth(ch);
    if (used + w > width - ellipsisWidth()) break;
    out += ch;
    used += w;
  }
  return out + ELLIPSIS;
}

/** Exactly `width` cells: truncated, then padded on the right (or left for numbers). */
export function fit(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const cut = truncate(text, width);
  const pad = ' '.repeat(Math.max(0, width - cellWidth(cut)));
  return align === 'right' ? pad + cut : cut + pad;
}

/**
 * "~" for the home directory, then a middle ellipsis that keeps the leading "/" or "~", as many
 * first parts as fit, and the last part; when even that is too wide, the root, "…" and the end.
 */
export function shortenPath(path: string, home: string | undefined, width: number): string {
  let p = path;
  if (home && home !== '/' && (p === home || p.startsWith(`${home}/`))) p = `~${p.slice(home.length)}`;
  if (cellWidth(p) <= width) return p;
  const parts = p.split('/');
  const last = parts[parts.length - 1] ?? '';
  // parts[0] is '' for "/…", '~' for "~/…": it stays whatever else goes.
  let head = parts[0]!;
  for (let i = 1; i < parts.length - 1; i++) {
    const next = `${head}/${parts[i]}`;
    if (cellWidth(`${next}/${ELLIPSIS}/${last}`) > width) break;
    head = next;
  }
  const candidate = parts.length > 1 ? `${head}/${ELLIPSIS}/${last}` : p;
  if (cellWidth(candidate) <= width) return candidate;
  const root = parts.length > 1 && (parts[0] === '' || parts[0] === '~') ? `${parts[0]}/` : '';
  return `${root}${ELLIPSIS}${tailCells(p, width - cellWidth(root) - ellipsisWidth())}`;
}

/** The end of `text` that fits in `width` cells. */
export function tailCells(text: string, width: number): string {
  if (width <= 0) return '';
  if (ONE_CELL_EACH.test(text)) return text.slice(Math.max(0, text.length - width));
  const chars = [...text];
  let out = '';
  let used = 0;
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = cellWidth(chars[i]!);
    if (used + w > width) break;
    out = chars[i]! + out;
    used += w;
  }
  return out;
}

/** The start of `text` that fits in `width` cells (no ellipsis). */
export function headCells(text: string, width: number): string {
  if (ONE_CELL_EACH.test(text)) return text.slice(0, Math.max(0, width));
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = cellWidth(ch);
    if (used + w > width) break;
    out += ch;
    used += w;
  }
  return out;
}

/**
 * `text` over as many lines of `width` cells as it takes, never cut: each break at the last space
 * of the line when there is one in its second half, else anywhere; lines after the first start
 * with `indent`. Made inert, as `truncate` makes what it shows.
 */
export function wrapText(raw: string, width: number, indent = ''): string[] {
  const room = Math.max(1, width);
  const lead = cellWidth(indent) < room ? indent : '';
  const lines: string[] = [];
  let rest = inert(raw);
  let prefix = '';
  while (cellWidth(prefix + rest) > room) {
    const space = room - cellWidth(prefix);
    let piece = headCells(rest, space);
    const cut = piece.lastIndexOf(' ');
    if (cut > piece.length / 2) piece = piece.slice(0, cut + 1);
    if (piece === '') piece = [...rest][0]!; // a character wider than the room: on a line of its own
    lines.push((prefix + piece).trimEnd());
    rest = rest.slice(piece.length).replace(/^ +/, '');
    prefix = lead;
  }
  lines.push(prefix + rest);
  return lines;
}

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** A Date can hold it (±8.64e15 ms): the formatters below say INVALID_TIME for anything else, never throw. */
const datable = (ms: number): boolean => !Number.isNaN(new Date(ms).getTime());

/** A moment in UTC, ISO 8601 ("2026-11-22T09:30:00.000Z"); "invalid time" for any number that is none (toISOString throws). */
export function isoTime(ms: number): string {
  return datable(ms) ? new Date(ms).toISOString() : INVALID_TIME;
}

/** A moment as local wall-clock time, HH:MM:SS, with the date when it is not today's ("invalid time" for none). */
export function clockTime(ms: number, now: number): string {
  if (!datable(ms)) return INVALID_TIME;
  const d = new Date(ms);
  const time = `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  if (!datable(now)) return time;
  const today = new Date(now);
  const sameDay = d.getFullYear() === today.getFullYear() && d.getMonth() === today.getMonth() && d.getDate() === today.getDate();
  return sameDay ? time : `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${time}`;
}

/** "12:03:04 (12s ago)": local time and age; a moment ahead of now says "from now". */
export function momentText(ms: number, now: number): string {
  if (!datable(ms)) return INVALID_TIME;
  const delta = now - ms;
  const age = delta >= 0 ? `${formatDuration(Math.floor(delta / 1000) * 1000)} ago` : `in ${formatDuration(Math.ceil(-delta / 1000) * 1000)}`;
  return `${clockTime(ms, now)} (${age})`;
}

/** What a row waiting for its first probe says in place of a verdict. */
export function checkingText(): string {
  return `checking${ELLIPSIS}`;
}

/** Ages as the table shows them (ages.ts: floored, and redrawn when one would read differently). */
export { formatAge } from './ages.js';

// Fitting text into terminal cells: widths are display widths (what Ink measures with), never
// string lengths, so a CJK directory name cannot push a column out of line.
import stringWidth from 'string-width';

export const ELLIPSIS = '…';

/** Cut to at most `width` cells, ending with an ellipsis when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  if (stringWidth(text) <= width) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = stringWidth(ch);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return out + ELLIPSIS;
}

/** Exactly `width` cells: truncated, then padded on the right (or left for numbers). */
export function fit(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const cut = truncate(text, width);
  const pad = ' '.repeat(Math.max(0, width - stringWidth(cut)));
  return align === 'right' ? pad + cut : cut + pad;
}

/** "~" for the home directory, then a middle ellipsis that keeps the first and the last parts. */
export function shortenPath(path: string, home: string | undefined, width: number): string {
  let p = path;
  if (home && home !== '/' && (p === home || p.startsWith(`${home}/`))) p = `~${p.slice(home.length)}`;
  if (stringWidth(p) <= width) return p;
  const parts = p.split('/');
  const last = parts[parts.length - 1] ?? '';
  // Keep as many leading parts as fit before "…/last"; the last part is what names the project.
  let head = '';
  for (let i = 0; i < parts.length - 1; i++) {
    const next = head === '' ? parts[i]! : `${head}/${parts[i]}`;
    if (stringWidth(`${next}/${ELLIPSIS}/${last}`) > width) break;
    head = next;
  }
  const candidate = head === '' ? `${ELLIPSIS}/${last}` : `${head}/${ELLIPSIS}/${last}`;
  return stringWidth(candidate) <= width ? candidate : truncate(`${ELLIPSIS}/${last}`, width);
}

/** Coarse ages for a table that redraws at most once a minute. */
export function formatAge(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 60_000) return '<1m';
  const m = Math.floor(ms / 60_000);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

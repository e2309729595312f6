// The keys that apply now, from the keymap itself, most needed first: what fits the pane's width
// is what the user needs next (a ghost under the cursor: `d evict` before anything else). In
// --read-only the eviction keys say so.
import { Text } from 'ink';
import { footerFor, type Command, type Mode } from '../keymap.js';
import { cellWidth, fit } from '../text.js';

/** The keys every footer keeps: help, and quit (or back, in a view over the table). */
const PINNED: ReadonlySet<string> = new Set(['?', 'q']);

/**
 * The order keys are given room in, before the rest (keymap order): the actions on the row first,
 * then the ways to look around; moving (j/k, arrows) is last, as every user knows it.
 */
const BY_NEED: readonly Command[] = ['view.details', 'mark.toggle', 'view.tab', 'view.events', 'filter.start', 'evict.selected', 'view.problems', 'sort.next', 'nav.down'];

/**
 * What the row under the cursor (or the marked rows, or the detail view's row) wants: `evict`, an
 * evictable problem; `leftovers`, a dead agent's processes still running (K is offered only then,
 * and first: they are what still costs the machine).
 */
export interface FooterNeed {
  readonly evict?: boolean | undefined;
  readonly leftovers?: boolean | undefined;
  /** The table shows no row (nothing read yet, a filter or problems-only hiding all): no key that acts on a row is offered. */
  readonly noRows?: boolean | undefined;
}

/** The keys that act on rows: nothing to do in a table without any. (K needs a row with leftovers: it is never offered without one.) */
const ON_ROWS: ReadonlySet<Command> = new Set(['view.details', 'mark.toggle', 'evict.selected', 'sort.next', 'nav.down']);

export function footerOrder(mode: Mode, need: FooterNeed = {}): ReturnType<typeof footerFor> {
  // With no row shown, d stays while rows are marked: it evicts the marked rows, shown or not.
  const offRows = (c: Command): boolean => need.noRows === true && ON_ROWS.has(c) && !(c === 'evict.selected' && need.evict === true);
  const entries = footerFor(mode).filter((e) => (e.command !== 'leftovers.end' || need.leftovers === true) && !offRows(e.command));
  const rank = (c: Command): number => {
    if (need.leftovers === true && c === 'leftovers.end') return -2;
    if (need.evict === true && c === 'evict.selected') return -1;
    const i = BY_NEED.indexOf(c);
    return i === -1 ? BY_NEED.length : i;
  };
  return entries.map((e, i) => ({ e, i })).sort((a, b) => rank(a.e.command) - rank(b.e.command) || a.i - b.i).map(({ e }) => e);
}

export function Footer({ mode, width, readOnly, need }: { mode: Mode; width: number; readOnly: boolean; need?: FooterNeed }) {
  // In --read-only, marks are not offered (they are for evicting); the eviction keys say why they do nothing.
  const offered = footerOrder(mode, readOnly ? { leftovers: need?.leftovers } : need).filter((e) => !(readOnly && e.forEviction));
  const parts: { keys: string; word: string; dim: boolean }[] = offered.map((e) => ({
    keys: e.keys,
    word: e.evicts && readOnly ? `${e.word} (read-only)` : e.word,
    dim: e.evicts && readOnly,
  }));
  // Help and the way out are always shown; the others in order of need, each where it still fits.
  // ` d ` inverse, then ` evict`: the next key's inverse block is the separator.
  const widthOf = (p: (typeof parts)[number]) => cellWidth(` ${p.keys}  ${p.word}`);
  const kept = new Set(parts.filter((p) => PINNED.has(p.keys)));
  let room = width - [...kept].reduce((w, p) => w + widthOf(p), 0);
  for (const p of parts) {
    if (kept.has(p) || widthOf(p) > room) continue;
    kept.add(p);
    room -= widthOf(p);
  }
  const shown = parts.filter((p) => kept.has(p));
  return (
    <Text>
      {shown.map((p, i) => (
        <Text key={i} dimColor={p.dim}>
          <Text inverse> {p.keys} </Text>
          {` ${p.word}`}
        </Text>
      ))}
      {fit('', room)}
    </Text>
  );
}

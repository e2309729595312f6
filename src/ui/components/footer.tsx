// The keys that apply now, from the keymap itself. In --read-only the eviction keys say so.
import { Text } from 'ink';
import stringWidth from 'string-width';
import { footerFor, type Mode } from '../keymap.js';
import { fit } from '../text.js';

/** The keys every footer keeps: help, and quit (or back, in a view over the table). */
const PINNED: ReadonlySet<string> = new Set(['?', 'q']);

export function Footer({ mode, width, readOnly }: { mode: Mode; width: number; readOnly: boolean }) {
  const parts: { keys: string; word: string; dim: boolean }[] = footerFor(mode).map((e) => ({
    keys: e.keys,
    word: e.evicts && readOnly ? 'evict (read-only)' : e.word,
    dim: e.evicts && readOnly,
  }));
  // Help and the way out are always shown: the others go first, from the end, when the pane is narrow.
  const widthOf = (p: (typeof parts)[number]) => stringWidth(` ${p.keys}  ${p.word} `);
  const kept = new Set(parts.filter((p) => PINNED.has(p.keys)));
  let room = width - [...kept].reduce((w, p) => w + widthOf(p), 0);
  for (const p of parts) {
    if (kept.has(p)) continue;
    if (widthOf(p) > room) break;
    kept.add(p);
    room -= widthOf(p);
  }
  const shown = parts.filter((p) => kept.has(p));
  return (
    <Text>
      {shown.map((p, i) => (
        <Text key={i} dimColor={p.dim}>
          <Text inverse> {p.keys} </Text>
          {` ${p.word} `}
        </Text>
      ))}
      {fit('', room)}
    </Text>
  );
}

// The keys that apply now, from the keymap itself. In --read-only the eviction keys say so.
import { Text } from 'ink';
import stringWidth from 'string-width';
import { footerFor, type Mode } from '../keymap.js';
import { fit } from '../text.js';

export function Footer({ mode, width, readOnly }: { mode: Mode; width: number; readOnly: boolean }) {
  const parts: { keys: string; word: string; dim: boolean }[] = footerFor(mode).map((e) => ({
    keys: e.keys,
    word: e.evicts && readOnly ? 'evict (read-only)' : e.word,
    dim: e.evicts && readOnly,
  }));
  let room = width;
  const shown: typeof parts = [];
  for (const p of parts) {
    const w = stringWidth(` ${p.keys} ${p.word} `);
    if (w > room) break;
    shown.push(p);
    room -= w;
  }
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

// One line: the sources and their connection state, this host, and the count of each verdict.
import { Text } from 'ink';
import stringWidth from 'string-width';
import type { EngineSnapshot } from '../../engine/types.js';
import { sanitize } from '../../core/sanitize.js';
import type { SourceState } from '../../sources/types.js';
import { VERDICT_ORDER } from '../columns.js';
import { TONE_COLOR, VERDICT_TONE } from '../theme.js';
import { truncate } from '../text.js';

interface Segment {
  text: string;
  color?: string | undefined;
  bold?: boolean;
}

const STATUS_WORDS: Record<SourceState['status'], [string, string]> = {
  connecting: ['connecting', 'yellow'],
  connected: ['connected', 'green'],
  'auth-refused': ['token refused', 'red'],
  unreachable: ['unreachable', 'red'],
  stopped: ['stopped', 'gray'],
};

export function headerSegments(snap: EngineSnapshot): Segment[] {
  const segs: Segment[] = [{ text: 'ghostwatch', bold: true }];
  for (const s of snap.sources) {
    const [word, color] = STATUS_WORDS[s.status];
    segs.push({ text: `  ${sanitize(s.name, 20)} ` }, { text: word, color });
  }
  segs.push({ text: `  ${sanitize(snap.host, 40)}`, color: 'gray' });
  segs.push({ text: ' ' });
  for (const v of VERDICT_ORDER) {
    const n = snap.counts[v];
    if (n > 0) segs.push({ text: ` ${n} ${v}`, color: TONE_COLOR[VERDICT_TONE[v]] });
  }
  return segs;
}

export function Header({ snap, width }: { snap: EngineSnapshot; width: number }) {
  let room = width;
  const shown: Segment[] = [];
  for (const seg of headerSegments(snap)) {
    if (room <= 0) break;
    const text = stringWidth(seg.text) <= room ? seg.text : truncate(seg.text, room);
    shown.push({ ...seg, text });
    room -= stringWidth(text);
  }
  return (
    <Text>
      {shown.map((s, i) => (
        <Text key={i} color={s.color} bold={s.bold}>
          {s.text}
        </Text>
      ))}
      {' '.repeat(Math.max(0, room))}
    </Text>
  );
}

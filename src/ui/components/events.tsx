// The events pane: what happened, newest first, scrolled by the keys of the mode stack.
import { Text } from 'ink';
import type { EventLine } from '../events.js';
import { fit } from '../text.js';
import { ACCENT, TONE_COLOR } from '../theme.js';

export function EventsPane({ title, lines, scroll, height, width }: { title: string; lines: readonly EventLine[]; scroll: number; height: number; width: number }) {
  const shown = lines.slice(scroll, scroll + Math.max(0, height - 1));
  const timeWidth = Math.min(20, Math.max(...shown.map((l) => l.time.length), 8));
  return (
    <>
      <Text bold color={ACCENT}>
        {fit(title, width)}
      </Text>
      {shown.map((l, i) => (
        <Text key={i}>
          <Text color={TONE_COLOR.muted}>{fit(`  ${l.time}`, timeWidth + 2)}</Text>
          <Text color={TONE_COLOR[l.tone]}>{fit(`  ${l.text}`, Math.max(0, width - timeWidth - 2))}</Text>
        </Text>
      ))}
    </>
  );
}

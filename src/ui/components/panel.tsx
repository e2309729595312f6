// A scrollable list of label/value lines (detail view, help overlay), cut to the pane.
import { Text } from 'ink';
import type { DetailLine } from '../detail.js';
import { fit, truncate } from '../text.js';
import { ACCENT, TONE_COLOR } from '../theme.js';

export function Panel({ lines, scroll, height, width }: { lines: readonly DetailLine[]; scroll: number; height: number; width: number }) {
  const labelWidth = Math.min(18, Math.max(8, Math.floor(width / 4)));
  const shown = lines.slice(scroll, scroll + height);
  return (
    <>
      {shown.map((l, i) =>
        l.heading ? (
          <Text key={i} bold color={ACCENT}>
            {fit(l.value ? `${l.label}: ${l.value}` : l.label, width)}
          </Text>
        ) : (
          <Text key={i}>
            <Text color={TONE_COLOR.muted}>{fit(`  ${l.label}`, labelWidth)}</Text>
            {fit(` ${truncate(l.value, Math.max(0, width - labelWidth - 1))}`, Math.max(0, width - labelWidth))}
          </Text>
        ),
      )}
    </>
  );
}

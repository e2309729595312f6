// A scrollable list of label/value lines (detail view, help overlay), cut to the pane. A value
// too long for its line wraps onto the lines under it (wrapLines), never cut off.
import { Text } from 'ink';
import type { DetailLine } from '../detail.js';
import { cellWidth, fit, headCells } from '../text.js';
import { inert } from '../../core/sanitize.js';
import { ACCENT, TONE_COLOR } from '../theme.js';

export function labelWidthFor(width: number): number {
  return Math.min(18, Math.max(8, Math.floor(width / 4)));
}

/**
 * The lines as drawn in `width` cells: a long value goes on over as many lines as it takes, under
 * its label (continuation lines have no label). Breaks at a space when one is near, else anywhere.
 */
export function wrapLines(lines: readonly DetailLine[], width: number): DetailLine[] {
  const room = Math.max(1, width - labelWidthFor(width) - 1);
  const out: DetailLine[] = [];
  for (const l of lines) {
    if (l.heading) {
      out.push(l);
      continue;
    }
    let rest = inert(l.value);
    let label = l.label;
    do {
      let piece = cellWidth(rest) <= room ? rest : headCells(rest, room);
      if (piece.length < rest.length) {
        const space = piece.lastIndexOf(' ');
        if (space > piece.length / 2) piece = piece.slice(0, space + 1);
      }
      out.push({ label, value: piece.trimEnd() });
      rest = rest.slice(piece.length);
      label = '';
    } while (rest.length > 0);
  }
  return out;
}

export function Panel({ lines, scroll, height, width }: { lines: readonly DetailLine[]; scroll: number; height: number; width: number }) {
  const labelWidth = labelWidthFor(width);
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
            {fit(` ${l.value}`, Math.max(0, width - labelWidth))}
          </Text>
        ),
      )}
    </>
  );
}

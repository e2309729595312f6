// The findings table: a title line and only the rows that fit (virtualized), each exactly as
// wide as the pane. Cursor and marks are text ('>' and '*') as well as inverse video, so they
// show without colour.
import { Box, Text } from 'ink';
import { memo } from 'react';
import { findingKey } from '../../core/evict-plan.js';
import { checkingOf, staleOf } from '../../engine/types.js';
import type { Finding } from '../../core/types.js';
import { GUTTER, type CellContext, type PlacedColumn } from '../columns.js';
import { fit } from '../text.js';
import { TONE_COLOR, VERDICT_TONE } from '../theme.js';

export interface TableProps {
  readonly rows: readonly Finding[];
  readonly placed: readonly PlacedColumn[];
  readonly top: number;
  readonly height: number;
  readonly cursor: number;
  readonly marks: ReadonlySet<string>;
  readonly ctx: CellContext;
  readonly width: number;
  readonly sortColumn: string | undefined;
  readonly sortReverse: boolean;
  readonly empty: string;
}

export function TitleLine({ placed, width, sortColumn, sortReverse }: Pick<TableProps, 'placed' | 'width' | 'sortColumn' | 'sortReverse'>) {
  // The default order is by verdict, worst first: its column carries the mark then, so `r` shows.
  const sorted = sortColumn ?? 'verdict';
  const cells = placed.map(({ column, width: w }) => {
    const arrow = column.id === sorted ? sortArrow(sortReverse) : '';
    return fit(column.title + arrow, w, column.align);
  });
  return <Text bold>{fit(' '.repeat(GUTTER) + cells.join(' '), width)}</Text>;
}

/** The sorted column's mark, ASCII (arrows are ambiguous-width): v in the default direction, ^ reversed. */
export function sortArrow(reverse: boolean): string {
  return reverse ? '^' : 'v';
}

/**
 * `text` in pieces, each all printable ASCII or all not: one text node each in a row. Ink measures
 * every text node it draws with string-width, whose fast path takes printable ASCII only; a row
 * of 120 cells with one "…" or "≥" went through its grapheme segmenter whole (~65 µs and ~50
 * objects a row) in every frame. In pieces, only the "…" and the "≥" are. Empty text: no piece.
 */
export function asciiPieces(text: string): string[] {
  return text.match(ASCII_OR_NOT) ?? [];
}
const ASCII_OR_NOT = /[\x20-\x7e]+|[^\x20-\x7e]+/g;

interface PieceStyle {
  readonly color?: string | undefined;
  readonly bold?: boolean;
  readonly dimColor: boolean;
}

const Row = memo(function Row(props: { f: Finding; placed: readonly PlacedColumn[]; ctx: CellContext; width: number; isCursor: boolean; marked: boolean }) {
  const { f, placed, ctx, width, isCursor, marked } = props;
  const gutter = `${isCursor ? '>' : ' '}${marked ? '*' : ' '}`;
  const [first, ...rest] = placed;
  const verdictCell = first ? fit(first.column.value(f, ctx, first.width), first.width, first.column.align) : '';
  const others = rest.map(({ column, width: w }) => fit(column.value(f, ctx, w), w, column.align)).join(' ');
  const tail = fit(`${others.length > 0 ? ' ' : ''}${others}`, Math.max(0, width - GUTTER - (first?.width ?? 0)));
  // A stale row is dimmed as well as marked '~' (the marker is what shows without colour), and
  // not bold: bold and dim share their reset (SGR 22), which would end the dim of the rest.
  const dim = staleOf(f) !== undefined;
  const parts: [string, PieceStyle][] = [
    [gutter, { dimColor: dim }],
    [verdictCell, { color: checkingOf(f) ? TONE_COLOR.muted : TONE_COLOR[VERDICT_TONE[f.verdict]], bold: f.problem && !dim, dimColor: dim }],
    [tail, { dimColor: dim }],
  ];
  let key = 0;
  return (
    <Box flexShrink={0}>
      {parts.flatMap(([text, style]) =>
        asciiPieces(text).map((piece) => (
          <Text key={key++} inverse={isCursor} color={style.color} bold={style.bold} dimColor={style.dimColor}>
            {piece}
          </Text>
        )),
      )}
    </Box>
  );
});

export function Table(props: TableProps) {
  const { rows, placed, top, height, cursor, marks, ctx, width } = props;
  const lines = [];
  for (let i = top; i < Math.min(rows.length, top + height); i++) {
    const f = rows[i]!;
    const key = findingKey(f);
    lines.push(<Row key={key} f={f} placed={placed} ctx={ctx} width={width} isCursor={i === cursor} marked={marks.has(key)} />);
  }
  if (rows.length === 0) lines.push(<Text key="empty" color={TONE_COLOR.muted}>{fit(`  ${props.empty}`, width)}</Text>);
  return <>{lines}</>;
}

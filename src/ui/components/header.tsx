// The header: with one source, one line (the source and its state, this host, the count of each
// verdict); with several, that line without the states, then one state line per source — unless
// the pane is too short for them, when the first line carries every source's state word.
import { Box, Text } from 'ink';
import stringWidth from 'string-width';
import type { EngineSnapshot } from '../../engine/types.js';
import { sanitize } from '../../core/sanitize.js';
import { STATUS_TRAITS, type SourceState } from '../../engine/index.js';
import { VERDICT_ORDER } from '../columns.js';
import { TONE_COLOR, VERDICT_TONE, type Tone } from '../theme.js';
import { clockTime, truncate } from '../text.js';

interface Segment {
  text: string;
  color?: string | undefined;
  bold?: boolean;
}

const STATUS_WORDS: Record<SourceState['status'], [string, Tone]> = {
  connecting: ['connecting', 'warning'],
  connected: ['connected', 'ok'],
  watching: ['watching', 'ok'],
  'files-only': ['files only', 'warning'],
  absent: ['absent', 'muted'],
  'auth-refused': ['token refused', 'problem'],
  unreachable: ['unreachable', 'problem'],
  stopped: ['stopped', 'muted'],
};

/** Panes shorter than this keep the header to one line, whatever the number of sources. */
export const STATE_LINES_MIN_ROWS = 20;

/** How many lines the header takes in a pane this tall. */
export function headerHeight(sourceCount: number, rows: number): number {
  return sourceCount > 1 && rows >= STATE_LINES_MIN_ROWS ? 1 + sourceCount : 1;
}

/**
 * Why a source is not read, in words, since when, and when it tries again:
 * "token refused (401) since 12:03:04, retrying in 4 s". Undefined while it reads (or before
 * its first attempt has failed).
 */
export function downText(s: SourceState, now: number): string | undefined {
  if (STATUS_TRAITS[s.status].reading || s.cause === undefined) return undefined;
  const since = s.downSince !== undefined ? ` since ${clockTime(s.downSince, now)}` : '';
  let retry = '';
  if (s.status === 'connecting') retry = ', retrying now';
  else if (s.retryAt !== undefined) retry = s.retryAt > now ? `, retrying in ${Math.ceil((s.retryAt - now) / 1000)} s` : ', retrying now';
  return `${s.cause}${since}${retry}`;
}

/** Whether the header changes with the clock alone (a countdown to a retry): it then redraws once a second. */
export function headerTicks(sources: readonly SourceState[]): boolean {
  return sources.some((s) => !STATUS_TRAITS[s.status].reading && s.cause !== undefined);
}

export function headerSegments(snap: EngineSnapshot, withStates = true, now = snap.computedAt): Segment[] {
  const segs: Segment[] = [{ text: 'ghostwatch', bold: true }];
  for (const s of withStates ? snap.sources : []) {
    const down = downText(s, now);
    // Not read: where, and why in words ("registry ws://…: token refused (401) since …").
    if (down) segs.push({ text: `  ${sanitize(s.name, 20)} ${sanitize(s.url, 80)}: ` }, { text: down, color: TONE_COLOR.problem });
    else {
      const [word, tone] = STATUS_WORDS[s.status];
      segs.push({ text: `  ${sanitize(s.name, 20)} ` }, { text: word, color: TONE_COLOR[tone] });
    }
  }
  segs.push({ text: `  ${sanitize(snap.host, 40)}`, color: TONE_COLOR.muted });
  segs.push({ text: ' ' });
  for (const v of VERDICT_ORDER) {
    const n = snap.counts[v];
    if (n > 0) segs.push({ text: ` ${n} ${v}`, color: TONE_COLOR[VERDICT_TONE[v]] });
  }
  return segs;
}

/** One source's state line: name, state, where, and what is wrong or worth knowing there. */
export function sourceLineSegments(s: SourceState, nameWidth: number, now = s.since): Segment[] {
  const [word, tone] = STATUS_WORDS[s.status];
  const segs: Segment[] = [{ text: `  ${sanitize(s.name, 20).padEnd(nameWidth)}  ` }, { text: word.padEnd(11), color: TONE_COLOR[tone] }, { text: sanitize(s.url, 80), color: TONE_COLOR.muted }];
  const notes: Segment[] = [];
  const down = downText(s, now);
  if (down) notes.push({ text: down, color: TONE_COLOR.problem });
  else if (s.lastError) notes.push({ text: s.lastError, color: STATUS_TRAITS[s.status].error ? TONE_COLOR.problem : TONE_COLOR.warning });
  const warnings = s.warnings ?? [];
  if (warnings.length > 0) notes.push({ text: `${warnings[0]}${warnings.length > 1 ? ` (+${warnings.length - 1} more warnings)` : ''}`, color: TONE_COLOR.warning });
  if (s.eviction && !s.eviction.available && STATUS_TRAITS[s.status].reading) notes.push({ text: 'eviction unavailable', color: TONE_COLOR.muted });
  for (const n of notes) segs.push({ text: '  ' }, n);
  return segs;
}

function Line({ segments, width }: { segments: Segment[]; width: number }) {
  let room = width;
  const shown: Segment[] = [];
  for (const seg of segments) {
    if (room <= 0) break;
    const text = truncate(seg.text, room); // inert, and cut when it does not fit
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

export function Header({ snap, width, height = 1, now = snap.computedAt }: { snap: EngineSnapshot; width: number; height?: number; now?: number }) {
  const lines = height > 1 && snap.sources.length > 1;
  const nameWidth = Math.max(...snap.sources.map((s) => sanitize(s.name, 20).length), 4);
  return (
    <Box flexDirection="column" height={lines ? 1 + snap.sources.length : 1} flexShrink={0}>
      <Line segments={headerSegments(snap, !lines, now)} width={width} />
      {lines ? snap.sources.map((s, i) => <Line key={i} segments={sourceLineSegments(s, nameWidth, now)} width={width} />) : null}
    </Box>
  );
}

// The header: with one source, one line (the source and its state, this host, the count of each
// verdict); with several, that line without the states, then one state line per source — unless
// the pane is too short for them, when the first line carries every source's state word. With no
// registry named (every one on this host looked for), the ones not here share one line instead.
import { Box, Text } from 'ink';
import type { EngineSnapshot } from '../../engine/types.js';
import { sanitize } from '../../core/sanitize.js';
import { STATUS_TRAITS, type SourceState } from '../../engine/index.js';
import { VERDICT_TRAITS } from '../../core/verdicts.js';
import { VERDICT_ORDER } from '../columns.js';
import { TONE_COLOR, VERDICT_TONE, type Tone } from '../theme.js';
import { cellWidth, checkingText, clockTime, truncate } from '../text.js';
import { problemsText, shownCounts } from '../counts.js';

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

/** Which source states come first when not all fit: the ones in trouble. */
const TONE_RANK: Record<Tone, number> = { problem: 0, warning: 1, muted: 2, info: 3, ok: 4 };

/** Panes shorter than this keep the header to one line, whatever the number of sources. */
export const STATE_LINES_MIN_ROWS = 20;

/** A registry looked for on this host (none was named) and not there: its name and where it was looked for. */
export interface AbsentRegistry {
  readonly name: string;
  readonly where: string;
}

/** The sources that get a state of their own: with none named (`absent` given), only those found. */
function shownSources(sources: readonly SourceState[], absent: readonly AbsentRegistry[] | undefined): readonly SourceState[] {
  return absent ? sources.filter((s) => s.status !== 'absent') : sources;
}

/** With none named: every registry not here, the sources that found nothing first, then those not looked into further. */
export function notHere(sources: readonly SourceState[], absent: readonly AbsentRegistry[] | undefined): AbsentRegistry[] {
  if (!absent) return [];
  return [...sources.filter((s) => s.status === 'absent').map((s) => ({ name: s.name, where: s.url })), ...absent];
}

/** How many source lines the header would have: one per source shown, and one for all the registries not here. */
export function headerSourceLines(sources: readonly SourceState[], absent?: readonly AbsentRegistry[]): number {
  return shownSources(sources, absent).length + (notHere(sources, absent).length > 0 ? 1 : 0);
}

/** "looked for, not here: hypivisor (ws://localhost:31415/ws), agentctl (/home/me/.agentctl/agentctl.sock)" */
export function notHereText(list: readonly AbsentRegistry[]): string {
  return `looked for, not here: ${list.map((a) => `${sanitize(a.name, 32)} (${sanitize(a.where, 80)})`).join(', ')}`;
}

/** How many lines the header takes in a pane this tall. */
export function headerHeight(sourceCount: number, rows: number): number {
  return sourceCount > 1 && rows >= STATE_LINES_MIN_ROWS ? 1 + sourceCount : 1;
}

/**
 * That a source is not read and since when, first (a narrow header cuts from the end), then why
 * in words and when it tries again: "not connected since 12:03 (token refused (401)), retrying in
 * 4 s". Undefined while it reads (or before its first attempt has failed).
 */
export function downText(s: SourceState, now: number): string | undefined {
  if (STATUS_TRAITS[s.status].reading || s.cause === undefined) return undefined;
  // HH:MM: the seconds cost three cells of an 80-column header and tell a person little here.
  const since = s.downSince !== undefined ? ` since ${clockTime(s.downSince, now).replace(/:\d\d$/, '')}` : '';
  let retry = '';
  if (s.status === 'connecting') retry = ', retrying now';
  else if (s.retryAt !== undefined) retry = s.retryAt > now ? `, retrying in ${Math.ceil((s.retryAt - now) / 1000)} s` : ', retrying now';
  return `not connected${since} (${s.cause})${retry}`;
}

/** Whether the header changes with the clock alone (a countdown to a retry): it then redraws once a second. */
export function headerTicks(sources: readonly SourceState[]): boolean {
  return sources.some((s) => !STATUS_TRAITS[s.status].reading && s.cause !== undefined);
}

/** A count with its noun: "1 problem", "3 problems". */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}

/**
 * The counts, fullest first: every verdict shown; then the problems by verdict; then one
 * number. The header takes the fullest that leaves room for its name, and never cuts a count.
 * Only what has its evidence (counts.ts): rows still checking are "N checking…", the last known
 * rows of a registry not read are not counted, and with no registry read there is no count.
 */
export function countForms(snap: EngineSnapshot): Segment[][] {
  const shown = shownCounts(snap);
  const one = problemsText(shown);
  if (one === undefined) return [[]];
  const all: Segment[] = [];
  const problems: Segment[] = [];
  for (const v of VERDICT_ORDER) {
    const n = shown.counts[v];
    if (n === 0) continue;
    const seg = { text: ` ${n} ${v}`, color: TONE_COLOR[VERDICT_TONE[v]] };
    all.push(seg);
    if (VERDICT_TRAITS[v].problem) problems.push(seg);
  }
  const checking: Segment[] = shown.checking > 0 ? [{ text: ` ${shown.checking} ${checkingText()}`, color: TONE_COLOR.muted }] : [];
  all.push(...checking);
  const oneSeg: Segment[] = [{ text: ` ${one}`, color: TONE_COLOR[shown.problems > 0 ? 'problem' : shown.checking > 0 ? 'muted' : 'ok'] }];
  return [all, problems.length > 0 ? [...problems, ...checking] : oneSeg, oneSeg];
}

/** The name, and what is always said with it (read-only). */
function titleSegments(readOnly: boolean): Segment[] {
  const segs: Segment[] = [{ text: 'ghostwatch', bold: true }];
  if (readOnly) segs.push({ text: ' ' }, { text: 'read-only', color: TONE_COLOR.warning });
  return segs;
}

/** Every source's state, then this host: what is cut first when the line is too narrow. */
function stateSegments(snap: EngineSnapshot, withStates: boolean, now: number, troubleFirst = false, hostsCounted = false, absent?: readonly AbsentRegistry[]): Segment[] {
  const segs: Segment[] = [];
  const sources = withStates ? [...shownSources(snap.sources, absent)] : [];
  if (troubleFirst) sources.sort((a, b) => TONE_RANK[STATUS_WORDS[a.status][1]] - TONE_RANK[STATUS_WORDS[b.status][1]]);
  for (const s of sources) {
    const down = downText(s, now);
    // Not read: where, and why in words ("registry ws://…: not connected since 12:03 (token refused (401))").
    // Cut to fit, the state comes before the address: "hypivisor: not connected since 12:03 (…".
    if (down && troubleFirst) segs.push({ text: `  ${sanitize(s.name, 32)}: ` }, { text: down, color: TONE_COLOR.problem }, { text: ` ${sanitize(s.url, 80)}` });
    else if (down) segs.push({ text: `  ${sanitize(s.name, 32)} ${sanitize(s.url, 80)}: ` }, { text: down, color: TONE_COLOR.problem });
    else {
      const [word, tone] = STATUS_WORDS[s.status];
      segs.push({ text: `  ${sanitize(s.name, 32)} ` }, { text: word, color: TONE_COLOR[tone] });
    }
  }
  const missing = withStates ? notHere(snap.sources, absent) : [];
  if (missing.length > 0) segs.push({ text: `  not here: ${missing.map((a) => sanitize(a.name, 32)).join(', ')}`, color: TONE_COLOR.muted });
  segs.push(...hostSegments(snap.hosts, hostsCounted));
  segs.push({ text: `  ${sanitize(snap.host, 40)}`, color: TONE_COLOR.muted });
  segs.push({ text: ' ' });
  return segs;
}

const HOST_TONE: Record<NonNullable<EngineSnapshot['hosts']>[number]['state'], Tone> = { up: 'ok', connecting: 'warning', down: 'problem' };
/** Past this many hosts the header counts them by state instead of naming each. */
export const HOSTS_NAMED = 4;

/** The remote hosts verified over ssh: `  ssh: build-42 up 12ms · build-43 down`, or `  ssh: 2 down · 8 up` for many (or `counted`). */
export function hostSegments(hosts: EngineSnapshot['hosts'], counted = false): Segment[] {
  if (!hosts || hosts.length === 0) return [];
  const segs: Segment[] = [{ text: '  ssh:' }];
  if (counted || hosts.length > HOSTS_NAMED) {
    const states = (['down', 'connecting', 'up'] as const).filter((st) => hosts.some((h) => h.state === st));
    states.forEach((st, i) => {
      segs.push({ text: `${i === 0 ? ' ' : ' · '}` }, { text: `${hosts.filter((h) => h.state === st).length} ${st}`, color: TONE_COLOR[HOST_TONE[st]] });
    });
    return segs;
  }
  hosts.forEach((h, i) => {
    const rtt = h.state === 'up' && h.rttMs !== undefined ? ` ${h.rttMs}ms` : '';
    segs.push({ text: `${i === 0 ? ' ' : ' · '}${sanitize(h.machine, 24)} ` }, { text: `${h.state}${rtt}`, color: TONE_COLOR[HOST_TONE[h.state]] });
  });
  return segs;
}

const widthOf = (segs: readonly Segment[]): number => segs.reduce((w, s) => w + cellWidth(s.text), 0);

/**
 * The first line's segments for `width` cells: in one flow when all fits; else the counts
 * (in the fullest form that fits) stay whole at the end and the states before them are cut.
 */
export function headerSegments(
  snap: EngineSnapshot,
  withStates = true,
  now = snap.computedAt,
  width = Number.MAX_SAFE_INTEGER,
  readOnly = false,
  absent?: readonly AbsentRegistry[],
): Segment[] {
  const title = titleSegments(readOnly);
  const states = stateSegments(snap, withStates, now, false, false, absent);
  const forms = countForms(snap);
  const titleWidth = widthOf(title);
  // The fullest form that fits after every state (the first, the fullest, when all fits).
  const fitAfter = (segs: readonly Segment[]): Segment[] | undefined => {
    const before = titleWidth + widthOf(segs);
    return forms.find((f) => before + widthOf(f) <= width);
  };
  const fits = fitAfter(states);
  if (fits) return [...title, ...states, ...fits];
  // The hosts counted by state before anything is cut: a host named with its state cut off would read as fine.
  if (snap.hosts && snap.hosts.length > 0) {
    const counted = stateSegments(snap, withStates, now, false, true, absent);
    const fitsCounted = fitAfter(counted);
    if (fitsCounted) return [...title, ...counted, ...fitsCounted];
  }
  // Too narrow for every state: the smallest count stays whole, the sources in trouble come first.
  const counts = forms[forms.length - 1]!;
  const room = Math.max(0, width - titleWidth - widthOf(counts));
  return [...title, ...cutSegments(stateSegments(snap, withStates, now, true, true, absent), room), ...counts];
}

/** The segments cut to `room` cells (the last kept one ends with an ellipsis), padded to exactly `room`. */
function cutSegments(segs: readonly Segment[], room: number): Segment[] {
  const out: Segment[] = [];
  let left = room;
  for (const seg of segs) {
    if (left <= 0) break;
    const text = truncate(seg.text, left);
    out.push({ ...seg, text });
    left -= cellWidth(text);
  }
  if (left > 0) out.push({ text: ' '.repeat(left) });
  return out;
}

/** One source's state line: name, state, where, and what is wrong or worth knowing there. */
export function sourceLineSegments(s: SourceState, nameWidth: number, now = s.since): Segment[] {
  const [word, tone] = STATUS_WORDS[s.status];
  const segs: Segment[] = [{ text: `  ${sanitize(s.name, 32).padEnd(nameWidth)}  ` }, { text: word.padEnd(11), color: TONE_COLOR[tone] }, { text: sanitize(s.url, 80), color: TONE_COLOR.muted }];
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
    room -= cellWidth(text);
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

export function Header({
  snap,
  width,
  height = 1,
  now = snap.computedAt,
  readOnly = false,
  absent,
}: {
  snap: EngineSnapshot;
  width: number;
  height?: number;
  now?: number;
  readOnly?: boolean;
  /** No registry named: the ones looked for and not found (the sources that found nothing join them). */
  absent?: readonly AbsentRegistry[] | undefined;
}) {
  const shown = shownSources(snap.sources, absent);
  const missing = notHere(snap.sources, absent);
  const count = shown.length + (missing.length > 0 ? 1 : 0);
  const lines = height > 1 && count > 1;
  const nameWidth = Math.max(...shown.map((s) => sanitize(s.name, 32).length), 4);
  return (
    <Box flexDirection="column" height={lines ? 1 + count : 1} flexShrink={0}>
      <Line segments={headerSegments(snap, !lines, now, width, readOnly, absent)} width={width} />
      {lines ? shown.map((s, i) => <Line key={i} segments={sourceLineSegments(s, nameWidth, now)} width={width} />) : null}
      {lines && missing.length > 0 ? <Line segments={[{ text: `  ${notHereText(missing)}`, color: TONE_COLOR.muted }]} width={width} /> : null}
    </Box>
  );
}

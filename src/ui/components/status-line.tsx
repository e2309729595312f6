// The line above the footer: the filter prompt, an eviction's progress, the last message (for a
// few seconds, with the connection state or the problem count after it), a registry that is not
// read, or the counts. Colours from the theme only.
import { Text } from 'ink';
import { ELLIPSIS, sanitize } from '../../core/sanitize.js';
import { STATUS_TRAITS, type SourceState } from '../../engine/index.js';
import { staleOf, type EngineSnapshot, type EvictProgress, type EvictSummary } from '../../engine/types.js';
import { keysOf } from '../keymap.js';
import { notHere, notHereText, plural, type AbsentRegistry } from './header.js';
import { cellWidth, fit, formatAge, truncate } from '../text.js';
import { ACCENT, TONE_COLOR, type Tone } from '../theme.js';
import { modeOf, type ViewState } from '../view-state.js';
import { problemsText, shownCounts } from '../counts.js';

type MessageTone = NonNullable<ViewState['message']>['tone'];
const MESSAGE_TONE: Record<MessageTone, Tone> = { error: 'problem', warn: 'warning', info: 'ok' };

export function StatusLine(props: { state: ViewState; progress: EvictProgress | undefined; rowCount: number; snap: EngineSnapshot; width: number; now: number }) {
  const { state, progress, rowCount, snap, width, now } = props;
  if (modeOf(state) === 'filter') {
    const how = `${keysOf('filter.accept', 'filter')} keeps it, ${keysOf('filter.clear', 'filter')} clears it`;
    return <Text color={ACCENT}>{fit(`/${state.filter}_   ${how}`, width)}</Text>;
  }
  // A cancel asked for: that it is coming, and how to quit at once, over the progress.
  if (progress && modeOf(state) === 'cancelling' && state.message) return <Text color={TONE_COLOR.warning}>{fit(`${state.message.text} (${progress.index}/${progress.total}: ${progress.phase})`, width)}</Text>;
  if (progress) {
    const f = progress.finding;
    return <Text color={TONE_COLOR.warning}>{fit(`evicting ${progress.index}/${progress.total}: ${f.verdict} ${sanitize(f.id, 40)}: ${progress.phase}${progress.detail ? ` (${progress.detail})` : ''}`, width)}</Text>;
  }
  const broken = brokenSource(snap);
  if (state.message) {
    // A message (it expires: MESSAGE_MS) never hides the connection state or the problem count:
    // they stay whole at the end, the message is cut first.
    const tail = essentials(snap, broken);
    const sep = '  |  ';
    const room = Math.max(0, width - cellWidth(tail.text) - sep.length);
    const text = truncate(state.message.text, room);
    return (
      <Text>
        <Text color={TONE_COLOR[MESSAGE_TONE[state.message.tone]]}>{text}</Text>
        <Text color={TONE_COLOR[tail.tone]}>{fit(`${sep}${tail.text}`, Math.max(0, width - cellWidth(text)))}</Text>
      </Text>
    );
  }
  if (broken) {
    // What is shown of it is the last known: say how many rows, and that they wait for the registry.
    const stale = snap.findings.filter((f) => staleOf(f)?.source === broken.name);
    const kept = stale.length > 0 ? `; its ${stale.length} row${stale.length === 1 ? ' is' : 's are'} the last known (~, ${formatAge(now - staleOf(stale[0]!)!.since)} old), not evictable until it reconnects` : '';
    return <Text color={TONE_COLOR.problem}>{fit(`${sanitize(broken.name, 20)} not connected: ${broken.lastError ?? broken.cause}${kept}`, width)}</Text>;
  }
  const shown = shownCounts(snap);
  const bits = [plural(rowCount, state.tab === 'sessions' ? 'session' : 'claim'), problemsText(shown) ?? nothingRead(snap)];
  if (state.marks.size) bits.push(`${state.marks.size} marked`);
  if (state.filter) bits.push(`filter "${state.filter}"`);
  if (state.problemsOnly) bits.push('problems only');
  if (state.sortColumn || state.sortReverse) bits.push(`sorted by ${state.sortColumn ?? 'verdict'}${state.sortReverse ? ' (reversed)' : ''}`);
  if (snap.os.processTable === 'unavailable' && snap.os.processTableError) bits.push(snap.os.processTableError);
  if (snap.os.notices?.length) bits.push(snap.os.notices[0]!);
  // With several sources their warnings are on their state lines; with one, here.
  const warned = snap.sources.length === 1 ? snap.sources[0]!.warnings : undefined;
  if (warned?.length) bits.push(`${sanitize(snap.sources[0]!.name, 20)} warning: ${warned[0]}${warned.length > 1 ? ` (+${warned.length - 1} more)` : ''}`);
  return <Text color={TONE_COLOR.muted}>{fit(bits.join('  |  '), width)}</Text>;
}

/** How long a message stays on the status line. */
export const MESSAGE_MS = 5_000;

/** With no registry read, in place of a count: still connecting, or nothing there to read. */
function nothingRead(snap: EngineSnapshot): string {
  return snap.sources.some((s) => s.status === 'connecting') ? `connecting${ELLIPSIS}` : 'no registry read';
}

/** The first source that is not read and says why (a first connection still under way says nothing yet). */
function brokenSource(snap: EngineSnapshot): SourceState | undefined {
  return snap.sources.find((s) => STATUS_TRAITS[s.status].error && (s.lastError || s.cause));
}

/** What a message must never hide, short: a source not connected, else the problem count (or that it is not known yet). */
function essentials(snap: EngineSnapshot, broken: SourceState | undefined): { text: string; tone: Tone } {
  if (broken) return { text: `${sanitize(broken.name, 20)} not connected`, tone: 'problem' };
  const shown = shownCounts(snap);
  const text = problemsText(shown);
  return { text: text ?? nothingRead(snap), tone: shown.problems > 0 ? 'problem' : 'muted' };
}

/**
 * The table's text when it has no row: why (waiting, filtered out, not connected, none). `absent`:
 * no registry named, the ones looked for and not found: when nothing at all is here, it says so.
 */
export function emptyText(snap: EngineSnapshot, s: ViewState, absent?: readonly AbsentRegistry[]): string {
  if (!snap.settled) return 'waiting for the registry and the first probe...';
  if (s.filter) return `nothing matches "${s.filter}" (Esc clears the filter)`;
  if (absent && snap.sources.every((x) => x.status === 'absent')) return `no registry on this host yet (watching for them); ${notHereText(notHere(snap.sources, absent))}`;
  // A registry that is not read has nothing to say about its sessions: never "no sessions".
  const down = snap.sources.filter((x) => STATUS_TRAITS[x.status].error);
  const why = down.map((x) => `${sanitize(x.name, 20)}: ${x.cause ?? x.lastError ?? STATUS_WORDS_SHORT[x.status] ?? x.status}`).join('; ');
  if (down.length > 0 && down.length === snap.sources.length) return `not connected (${why})`;
  const none = s.problemsOnly ? 'no problems (p shows every row)' : s.tab === 'claims' ? 'no claims' : 'no sessions';
  return down.length > 0 ? `${none} in what was read; not connected: ${why}` : none;
}

const STATUS_WORDS_SHORT: Partial<Record<string, string>> = { connecting: 'still connecting', stopped: 'stopped' };

/** One line on how an eviction went, and its tone. */
export function summaryText(s: EvictSummary): { text: string; tone: MessageTone } {
  const c = s.counts;
  const parts = [evictedText(s)];
  if (c['already-gone']) parts.push(`${c['already-gone']} already gone`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  if (c.refused) parts.push(`${c.refused} refused`);
  if (c.failed) parts.push(`${c.failed} failed`);
  const also = s.alsoRemoved?.filter((a) => !a.selected) ?? [];
  if (also.length) parts.push(`also removed ${also.length} not selected (${also.slice(0, 2).map((a) => sanitize(a.id, 24)).join(', ')}${also.length > 2 ? ', …' : ''})`);
  const notSent = s.notSent?.length ?? 0;
  if (notSent) parts.unshift(`cancelled: ${notSent} not sent`);
  const firstProblem = s.results.find((r) => r.outcome === 'skipped' || r.outcome === 'refused' || r.outcome === 'failed');
  const why = firstProblem ? ` (${sanitize(firstProblem.finding.id, 24)}: ${firstProblem.detail ?? firstProblem.outcome})` : '';
  const tone = c.failed || c.refused ? 'error' : c.skipped || notSent ? 'warn' : 'info';
  return { text: parts.join(', ') + why, tone };
}

/** "evicted ghost c0ffee00-ghost" for one, "evicted 3: ghost c0ffee00-ghost and 2 more" for several: what went, not only how many. */
function evictedText(s: EvictSummary): string {
  const n = s.counts.evicted;
  const first = s.results.find((r) => r.outcome === 'evicted')?.finding;
  if (n === 0 || first === undefined) return `evicted ${n}`;
  const named = `${first.verdict} ${sanitize(first.id, 40)}`;
  return n === 1 ? `evicted ${named}` : `evicted ${n}: ${named} and ${n - 1} more`;
}

// The confirm dialog: exactly what will be evicted (count, ids, verdicts, pids, cwds) and why.
// No is the default; entries that need force are named and asked about separately. The list
// scrolls (j k, PgUp PgDn) when it is longer than the pane; the question stays on top.
import { Text } from 'ink';
import { sanitize } from '../../core/sanitize.js';
import type { Finding } from '../../core/types.js';
import type { SourceState } from '../../engine/index.js';
import { evictionNoteLines, evictionNotes, liveEvictionLines } from '../../engine/eviction-notes.js';
import { keysOf } from '../keymap.js';
import { fit, shortenPath, wrapText } from '../text.js';
import { TONE_COLOR, VERDICT_TONE, type Tone } from '../theme.js';
import { staleRefusal, type ConfirmState } from '../confirm-state.js';

/** Verdicts under which the process may be alive: evicting such a session hides a running agent. */
const MAYBE_ALIVE: ReadonlySet<Finding['verdict']> = new Set(['live', 'remote', 'unverified']);

/** Said before `f` when a forced eviction would remove a session that may be a running agent, unless its registry says it in its own words (two lines: a narrow pane keeps both). */
export const LIVE_AGENT_NOTE = [
  'Evicting a live agent hides it from the registry until it re-registers:',
  'pi-socket re-registers only when its connection drops and comes back.',
] as const;

/** One entry of the list: what it is, its pid, where it ran (cwd), and why it is up for eviction. */
function itemLine(f: Finding, force: boolean, home: string | undefined): string {
  const pid = f.entry.pid === undefined ? '' : ` pid ${sanitize(f.entry.pid, 12)}`;
  const what = f.kind === 'claim' ? 'claim' : 'session';
  const cwd = f.kind === 'session' && f.entry.cwd !== undefined ? ` in ${shortenPath(sanitize(f.entry.cwd, 512), home, 48)}` : '';
  return `  ${force ? 'needs force ' : ''}${f.verdict} ${what} ${sanitize(f.id, 60)}${pid}${cwd}: ${f.reason}`;
}

export interface ConfirmLine {
  readonly text: string;
  readonly tone?: Tone | undefined;
  readonly bold?: boolean;
}

/** The dialog's question and notes (always shown), and its list of entries (scrolled when it does not fit). */
export function confirmLines(c: ConfirmState, force: boolean, sources: readonly SourceState[] = [], home?: string): { head: ConfirmLine[]; list: ConfirmLine[] } {
  const n = c.selection.length;
  const head: ConfirmLine[] = [];
  if (!force) {
    head.push({ text: `Evict ${n} ${n === 1 ? 'entry' : 'entries'} from the registry?`, bold: true });
    if (c.scope) head.push({ text: `The problems the table shows: ${sanitize(c.scope, 200)}.`, bold: true });
    head.push({ text: 'Each is re-checked right before it is sent and written to the audit log first. Processes are never signalled.' });
    for (const note of evictionNoteLines(evictionNotes(c.selection, sources))) head.push({ text: `Note: ${note}.`, bold: true });
  } else {
    const kinds = [...new Set(c.needsForce.map((f) => f.verdict))].join(', ');
    const k = c.needsForce.length;
    const others = c.evictable.length;
    head.push({ text: `${k} of these ${k === 1 ? 'needs' : 'need'} force: ${k === 1 ? 'it is' : 'they are'} ${kinds}, not known to be dead.`, bold: true });
    const maybeRunning = c.needsForce.filter((f) => f.kind === 'session' && MAYBE_ALIVE.has(f.verdict));
    for (const text of liveEvictionLines(maybeRunning, sources, LIVE_AGENT_NOTE)) head.push({ text, bold: true });
    if (others > 0) head.push({ text: `f: evict ${k === 1 ? 'it' : 'them'} too.  y: evict only the ${others === 1 ? 'other one' : `${others} others`}.  n: cancel.` });
    else if (c.yesSentNothing) head.push({ text: `y sends nothing here: ${k === 1 ? 'it needs' : `all ${k} need`} force.  f: evict anyway.  n: cancel.`, tone: 'warning', bold: true });
    else head.push({ text: 'f: evict anyway.  n: cancel.' });
  }
  if (c.stale?.length) head.push({ text: `Left out: ${staleRefusal(c.stale)}`, bold: true });
  const needs = new Set(c.needsForce);
  // An entry that needs force is never drawn in a reassuring colour: a live agent is not green here.
  const list = c.selection.map((f): ConfirmLine => ({ text: itemLine(f, needs.has(f), home), tone: needs.has(f) ? 'warning' : VERDICT_TONE[f.verdict] }));
  return { head, list };
}

/** The dialog's lines as drawn in `width` cells: a long line wraps onto the lines under it, never cut (the last screen before harm keeps every word). */
export function wrapConfirm(all: { head: ConfirmLine[]; list: ConfirmLine[] }, width: number): { head: ConfirmLine[]; list: ConfirmLine[] } {
  const wrap = (lines: ConfirmLine[], indent: string): ConfirmLine[] => lines.flatMap((l) => wrapText(l.text, width, indent).map((text) => ({ ...l, text })));
  return { head: wrap(all.head, '  '), list: wrap(all.list, '    ') };
}

/** The lines drawn in `height` rows, the list scrolled by `scroll`, and how many list lines fit (for the scroll keys). */
export function confirmView(all: { head: ConfirmLine[]; list: ConfirmLine[] }, height: number, scroll: number): { lines: ConfirmLine[]; listRoom: number } {
  const room = Math.max(1, height);
  const head = all.head.slice(0, Math.max(0, room - 2));
  const left = room - head.length;
  if (all.list.length <= left) return { lines: [...head, ...all.list], listRoom: left };
  // One line says where in the list the window is; the rest of the room shows the list.
  const listRoom = Math.max(1, left - 1);
  const top = Math.min(Math.max(0, scroll), all.list.length - listRoom);
  const end = top + listRoom;
  const where = `  entries ${top + 1}-${end} of ${all.list.length}; ${keysOf('nav.down', 'confirm')} ${keysOf('nav.up', 'confirm')} scroll`;
  return { lines: [...head, ...all.list.slice(top, end), { text: where, tone: 'muted' }], listRoom };
}

/** The dialog: `all` as confirmLines gives it, wrapped to `width` (wrapConfirm). */
export function Confirm(props: { all: { head: ConfirmLine[]; list: ConfirmLine[] }; height: number; width: number; scroll: number }) {
  const { all, height, width, scroll } = props;
  const { lines } = confirmView(all, height, scroll);
  return (
    <>
      {lines.map((l, i) => (
        <Text key={i} bold={l.bold} color={l.tone ? TONE_COLOR[l.tone] : undefined}>
          {fit(l.text, width)}
        </Text>
      ))}
    </>
  );
}

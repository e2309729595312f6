// The confirm dialog: exactly what will be evicted (count, ids, verdicts, pids) and why.
// No is the default; entries that need force are named and asked about separately.
import { Text } from 'ink';
import { sanitize } from '../../core/sanitize.js';
import type { Finding } from '../../core/types.js';
import type { SourceState } from '../../engine/index.js';
import { evictionNoteLines, evictionNotes } from '../../engine/eviction-notes.js';
import { fit } from '../text.js';
import { TONE_COLOR, VERDICT_TONE } from '../theme.js';
import { staleRefusal, type ConfirmState } from '../confirm-state.js';

/** Verdicts under which the process may be alive: evicting such a session hides a running agent. */
const MAYBE_ALIVE: ReadonlySet<Finding['verdict']> = new Set(['live', 'remote', 'unverified']);

/** Said before `f` when a forced eviction would remove a session that may be a running agent (two lines: a narrow pane keeps both). */
export const LIVE_AGENT_NOTE = [
  'Evicting a live agent hides it from the registry until it re-registers:',
  'pi-socket re-registers only when its connection drops and comes back.',
] as const;

function itemLine(f: Finding, force: boolean): string {
  const pid = f.entry.pid === undefined ? '' : ` pid ${sanitize(f.entry.pid, 12)}`;
  const what = f.kind === 'claim' ? 'claim' : 'session';
  return `  ${force ? 'needs force ' : ''}${f.verdict} ${what} ${sanitize(f.id, 60)}${pid}: ${f.reason}`;
}

export function confirmLines(c: ConfirmState, force: boolean, sources: readonly SourceState[] = []): { text: string; verdict?: Finding['verdict']; bold?: boolean }[] {
  const n = c.selection.length;
  const lines: { text: string; verdict?: Finding['verdict']; bold?: boolean }[] = [];
  if (!force) {
    lines.push({ text: `Evict ${n} ${n === 1 ? 'entry' : 'entries'} from the registry?`, bold: true });
    lines.push({ text: 'Each is re-checked right before it is sent and written to the audit log first. Processes are never signalled.' });
    for (const note of evictionNoteLines(evictionNotes(c.selection, sources))) lines.push({ text: `Note: ${note}.`, bold: true });
  } else {
    const kinds = [...new Set(c.needsForce.map((f) => f.verdict))].join(', ');
    const k = c.needsForce.length;
    const others = c.evictable.length;
    lines.push({ text: `${k} of these ${k === 1 ? 'needs' : 'need'} force: ${k === 1 ? 'it is' : 'they are'} ${kinds}, not known to be dead.`, bold: true });
    if (c.needsForce.some((f) => f.kind === 'session' && MAYBE_ALIVE.has(f.verdict))) for (const text of LIVE_AGENT_NOTE) lines.push({ text, bold: true });
    lines.push({
      text: others > 0 ? `f: evict ${k === 1 ? 'it' : 'them'} too.  y: evict only the ${others === 1 ? 'other one' : `${others} others`}.  n: cancel.` : 'f: evict anyway.  n: cancel.',
    });
  }
  if (c.stale?.length) lines.push({ text: `Left out: ${staleRefusal(c.stale)}`, bold: true });
  const needs = new Set(c.needsForce);
  for (const f of c.selection) lines.push({ text: itemLine(f, needs.has(f)), verdict: f.verdict });
  return lines;
}

export function Confirm(props: { confirm: ConfirmState; force: boolean; height: number; width: number; sources: readonly SourceState[] }) {
  const { confirm, force, height, width, sources } = props;
  const all = confirmLines(confirm, force, sources);
  const room = Math.max(1, height);
  const shown = all.length <= room ? all : [...all.slice(0, room - 1), { text: `  ... and ${all.length - room + 1} more` }];
  return (
    <>
      {shown.map((l, i) => (
        <Text key={i} bold={l.bold} color={l.verdict ? TONE_COLOR[VERDICT_TONE[l.verdict]] : undefined}>
          {fit(l.text, width)}
        </Text>
      ))}
    </>
  );
}

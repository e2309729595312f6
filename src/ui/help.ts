// The help overlay's text, as lines: the keymap's bindings grouped by the view they work in
// (keymap.ts helpGroups), then what the markers and verdicts mean. Pure, like the detail view's.
import { MARKER_MEANINGS, VERDICT_TRAITS, VERDICTS_WORST_FIRST, verdictsMarked, type VerdictMarker } from '../core/verdicts.js';
import type { DetailLine } from './detail.js';
import { bindingKeys, helpGroups, keysOf, type KeyPlace } from './keymap.js';

/** The help overlay: every binding of the keymap under its view, nothing else; inside tmux, the keys that reach us. */
export function helpLines(place: KeyPlace = {}): DetailLine[] {
  return [
    ...helpGroups().flatMap((g) => [{ label: `keys: ${g.title}`, value: '', heading: true }, ...g.bindings.map((b) => ({ label: bindingKeys(b, place), value: b.description }))]),
    { label: 'markers', value: '', heading: true },
    // The verdicts' markers and meanings, from core's VERDICT_TRAITS.
    ...Object.entries(MARKER_MEANINGS).map(([marker, m]) => ({
      label: marker,
      value: m.named ? `${m.meaning} (${verdictsMarked(marker as VerdictMarker).join(', ')})` : m.meaning,
    })),
    { label: '~', value: 'stale: its registry is not connected; the last known row, not evictable until it reconnects' },
    { label: '>  *', value: 'the cursor; a marked row' },
    { label: 'checking', value: 'in place of a verdict: its process has not had its first probe yet' },
    { label: 'AGE', value: 'of a problem whose process is gone: how long it has been gone; else how long the registry has had it (whole units, never rounded up)' },
    { label: '≥', value: 'before an AGE: its process was already gone when ghostwatch first looked; at least this long (from the registry\'s offline_since when earlier)' },
    { label: 'LEFT', value: `processes a dead agent started that still run, and the first port one listens on ("2 :3000"); ${keysOf('leftovers.end', 'table')} ends them` },
    { label: 'verdicts', value: '', heading: true },
    ...VERDICTS_WORST_FIRST.map((v) => ({ label: `${VERDICT_TRAITS[v].marker}${v}`, value: VERDICT_TRAITS[v].meaning })),
  ];
}

// What evicting a selection means in each registry it touches, for the confirm dialog and
// `reap`: a registry that does more than remove the one entry (agentctl prunes every dead record)
// says so, and one that cannot evict right now says why.
import { sanitize } from '../core/sanitize.js';
import type { Finding } from '../core/types.js';
import type { SourceState } from '../sources/types.js';

export interface EvictionNotes {
  /** One sentence per registry whose eviction does more than the plain removal. */
  readonly notes: readonly string[];
  /** Registries that cannot evict now, by name, with why. */
  readonly unavailable: ReadonlyMap<string, string>;
}

export function evictionNotes(selection: readonly Finding[], sources: readonly SourceState[]): EvictionNotes {
  const names = new Set(selection.map((f) => f.source));
  const notes: string[] = [];
  const unavailable = new Map<string, string>();
  for (const s of sources) {
    if (!names.has(s.name) || !s.eviction) continue;
    if (!s.eviction.available) unavailable.set(s.name, s.eviction.why ?? 'unavailable');
    else if (s.eviction.note) notes.push(s.eviction.note);
  }
  return { notes, unavailable };
}

/** The notes as lines: the unavailable registries first (they change what happens most). */
export function evictionNoteLines(n: EvictionNotes): string[] {
  return [...[...n.unavailable].map(([name, why]) => `${sanitize(name, 20)} cannot evict now: ${why}`), ...n.notes];
}

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

/**
 * What forcing out sessions that may be running does, for the force dialog: each registry that
 * says it in its own words (Claude Code never writes a moved file again) says it once; the rest
 * share `fallback` once.
 */
export function liveEvictionLines(sessions: readonly Finding[], sources: readonly SourceState[], fallback: readonly string[]): string[] {
  const names = new Set(sessions.map((f) => f.source));
  const lines: string[] = [];
  let others = false;
  for (const name of names) {
    const own = sources.find((s) => s.name === name)?.eviction?.liveNote;
    if (own && own.length > 0) lines.push(...own);
    else others = true;
  }
  return others ? [...fallback, ...lines] : lines;
}

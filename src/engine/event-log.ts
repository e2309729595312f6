// The events pane's ring: what changed between published snapshots (changeEvents, on the rows the
// recompute found changed), from the first settled one on, and the rows our own evictions
// removed, told once as 'evicted' and not again as leaving.
import { changeEvents, keepLast, type EventSource, type WatchEvent } from '../core/events.js';
import { findingKey } from '../core/evict-plan.js';
import { identityKey } from '../core/leftovers.js';
import { sanitize } from '../core/sanitize.js';
import type { Finding } from '../core/types.js';
import type { SourceState } from '../sources/types.js';
import type { RowChanges } from './row-changes.js';
import { eventSources } from './snapshot.js';
import { EVENTS_KEPT, leftoversOf, type EvictProgress } from './types.js';

export class EventLog {
  private ring: readonly WatchEvent[] = [];
  /** The registries the next step starts from (none before the first settled snapshot). */
  private base: readonly EventSource[] | undefined;
  /** Rows our evictions removed, told as 'evicted' when sent: their leaving is not told again. */
  private readonly evictedKeys = new Set<string>();
  /** The leftovers already told (identity keys), while they are shown. */
  private toldLeftovers = new Set<string>();

  get events(): readonly WatchEvent[] {
    return this.ring;
  }

  /** An eviction's progress. True when it removed its entry: an 'evicted' event was added. */
  progress(p: EvictProgress, now: number): boolean {
    // From the send on, the row may leave before the reply comes: that leaving is the eviction's.
    if (p.phase === 'sending') this.evictedKeys.add(findingKey(p.finding));
    else if (p.phase === 'evicted') {
      const f = p.finding;
      this.ring = keepLast(this.ring, [{ at: now, kind: 'evicted', source: f.source, rowKind: f.kind, id: f.id, verdict: f.verdict, detail: p.detail }], EVENTS_KEPT);
      return true;
    } else if (p.phase !== 'checking') this.evictedKeys.delete(findingKey(p.finding));
    return false;
  }

  /**
   * The events up to this snapshot: `rows` are its rows against the last snapshot published. The
   * first settled one is the base: its registries only (each one's rows are told as one count).
   * Leftovers are told the first time they are shown: `withLeftovers` are the rows that show some
   * (a registry's rows and departed agents' rows).
   */
  next(rows: RowChanges, sources: readonly SourceState[], now: number, settled: boolean, withLeftovers: readonly Finding[] = []): readonly WatchEvent[] {
    if (!settled) return this.ring;
    const after = eventSources(sources);
    const first = this.base === undefined;
    const rowsOf = (source: string): number => rows.findings.filter((f) => f.source === source).length;
    const added = changeEvents(
      { sourcesBefore: this.base ?? [], sourcesAfter: after, changed: first ? [] : rows.changed, left: first ? [] : rows.left, rowsOf },
      now,
      { evicted: this.evictedKeys, limit: EVENTS_KEPT },
    );
    added.push(...this.newLeftovers(withLeftovers, now));
    this.base = after;
    if (this.evictedKeys.size > 0) {
      const present = new Set(rows.findings.map(findingKey));
      for (const k of this.evictedKeys) if (!present.has(k)) this.evictedKeys.delete(k);
    }
    this.ring = keepLast(this.ring, added, EVENTS_KEPT);
    return this.ring;
  }

  /** One event per row whose dead agent's leftovers are shown for the first time, naming the new ones. */
  private newLeftovers(rows: readonly Finding[], now: number): WatchEvent[] {
    const events: WatchEvent[] = [];
    const shown = new Set<string>();
    for (const f of rows) {
      const list = leftoversOf(f);
      if (!list || list.length === 0) continue;
      const fresh = list.filter((l) => !this.toldLeftovers.has(identityKey(l)));
      for (const l of list) shown.add(identityKey(l));
      if (fresh.length === 0) continue;
      const which = fresh
        .slice(0, 4)
        .map((l) => `pid ${l.pid} ${sanitize(l.name, 16)}${l.ports && l.ports.length > 0 ? ` :${l.ports.join(',:')}` : ''}`)
        .join(', ');
      events.push({ at: now, kind: 'leftovers', source: f.source, rowKind: f.kind, id: f.id, verdict: f.verdict, rows: fresh.length, detail: fresh.length > 4 ? `${which}, ...` : which });
    }
    this.toldLeftovers = shown;
    return events;
  }
}

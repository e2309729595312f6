// What ghostwatch believes the hypivisor registry holds: its nodes and claims, kept current by
// the event stream, replaced whole by a connection's init, repaired by re-syncs. It says when
// an event makes it doubt itself; asking the registry again is the client's business.

import type { EvictionAction } from '../../core/evict-plan.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import { FirstSeen } from '../first-seen.js';
import type { EntryLists } from '../snapshot-holder.js';
import type { InputCounters } from '../types.js';
import { ClockOffset } from './clock-offset.js';
import { nodeKey, sameIdentity, sameNodeAs, toClaimEntry, toSessionEntry, type Frame } from './wire.js';

export type RegistryEvent = Extract<Frame, { kind: 'node_joined' | 'node_offline' | 'node_removed' | 'claim_acquired' | 'claim_released' }>;

/**
 * What an event did: `changed` the view, nothing (`same`), or made it `doubt` itself (an event
 * about a node it never saw: the view has drifted), `bad` when the event was also unusable.
 */
export type EventEffect = 'changed' | 'same' | 'doubt' | 'bad';

export class RegistryView {
  private nodes = new Map<string, SessionEntry>();
  private claims = new Map<string, ClaimEntry>();
  /** When each (id, pid) was first seen: survives re-syncs and reconnects, for the reuse verdict. */
  private readonly observed = new FirstSeen();
  private joinSeq = 0;
  readonly clock = new ClockOffset();

  constructor(
    private readonly source: string,
    private readonly now: () => number,
    private readonly counters: InputCounters,
  ) {}

  lists(): EntryLists {
    return { sessions: [...this.nodes.values()], claims: [...this.claims.values()] };
  }

  /** A new connection's snapshot replaces the old view whole: nothing from before a restart survives. */
  replace(nodes: readonly unknown[], claims: readonly unknown[] | undefined): void {
    this.nodes = this.readNodes(nodes, new Map());
    this.claims = claims ? this.readClaims(claims) : new Map();
  }

  apply(frame: RegistryEvent): EventEffect {
    switch (frame.kind) {
      case 'node_joined': {
        const entry = this.readNode(frame.node, ++this.joinSeq);
        if (!entry) {
          this.counters.badEntries++;
          return 'bad';
        }
        if (entry.registeredAt !== undefined) this.clock.sample(entry.registeredAt - this.now());
        this.nodes.set(entry.id, entry);
        return 'changed';
      }
      case 'node_offline': {
        const entry = this.nodes.get(frame.id);
        if (!entry) return 'doubt'; // offline for a node we never saw: our view has drifted
        // The event carries no time: the registry set offline_since to its own now.
        const offlineSince = Math.floor((this.now() + this.clock.offsetMs()) / 1000);
        const raw = { ...entry.raw, status: 'offline', offline_since: offlineSince };
        const updated = toSessionEntry(raw, this.source, { firstObservedAt: entry.firstObservedAt, joinSeq: entry.joinSeq }, this.now());
        if (updated) this.nodes.set(frame.id, updated);
        return 'changed';
      }
      case 'node_removed':
        if (!this.nodes.delete(frame.id)) return 'same';
        this.observed.forget(frame.id);
        return 'changed';
      case 'claim_acquired': {
        const claim = toClaimEntry(frame.claim, this.source, this.now());
        if (!claim) {
          this.counters.badEntries++;
          return 'bad';
        }
        this.claims.set(claim.resource, claim);
        return 'changed';
      }
      case 'claim_released':
        return this.claims.delete(frame.resource) ? 'changed' : 'same';
    }
  }

  /**
   * A list_nodes answer: the nodes it names replace the view's. `repaired`: how many were added,
   * removed or changed identity (drift the events missed); `refreshed`: how many only had other
   * fields move (a heartbeat's last_seen), which the detail view shows too.
   */
  repairNodes(nodes: readonly unknown[]): { repaired: number; refreshed: number } {
    if (this.listsTheView(nodes)) return { repaired: 0, refreshed: 0 };
    const next = this.readNodes(nodes, this.nodes, true);
    const moved = countChanges(this.nodes, next);
    if (moved.repaired + moved.refreshed > 0) this.nodes = next;
    return moved;
  }

  /**
   * The common re-sync: the registry lists exactly the view's entries, unchanged (every field) and in the
   * view's order (its order since the last init, while nothing joined). Seen in one pass that
   * makes nothing: a 10,000-node answer every 10 s would otherwise build a map of 10,000 and
   * leave it as garbage the collector promotes. Any other answer takes the full repair.
   */
  private listsTheView(nodes: readonly unknown[]): boolean {
    if (nodes.length !== this.nodes.size) return false;
    let i = 0;
    // Ids are the map's keys, so matching each node to the entry in its place matches one to one.
    for (const entry of this.nodes.values()) if (!sameNodeAs(entry, nodes[i++])) return false;
    return true;
  }

  /** A list_claims answer, likewise; 0 leaves the claims as they were. */
  repairClaims(claims: readonly unknown[]): number {
    const next = this.readClaims(claims);
    let moved = 0;
    for (const [k, c] of next) if (!this.claims.has(k) || this.claims.get(k)?.holder !== c.holder) moved++;
    for (const k of this.claims.keys()) if (!next.has(k)) moved++;
    if (moved > 0) this.claims = next;
    return moved;
  }

  /** The registry removed what an eviction named: drop it here too; false when it was not held. */
  remove(action: EvictionAction): boolean {
    return action.type === 'deregister' ? this.nodes.delete(action.id) : this.claims.delete(action.resource);
  }

  /** A node as an entry, stamped with when (id, pid) was first seen: a new pid under an old id starts a new clock. */
  private readNode(node: unknown, joinSeq: number | undefined, now = this.now()): SessionEntry | undefined {
    const key = nodeKey(node);
    if (!key) return undefined;
    return toSessionEntry(node, this.source, { firstObservedAt: this.observed.at(key.id, key.pid, now), joinSeq }, now);
  }

  /**
   * The nodes as entries. `keep`: a node that says what its previous entry says (sameNodeAs)
   * keeps that entry, read off the raw node without making a new one.
   */
  private readNodes(nodes: readonly unknown[], previous: ReadonlyMap<string, SessionEntry>, keep = false): Map<string, SessionEntry> {
    const map = new Map<string, SessionEntry>();
    const now = this.now();
    for (const node of nodes) {
      const kept = keep ? this.unchanged(node, previous) : undefined;
      if (kept) {
        this.observed.at(kept.id, kept.pid, now);
        map.set(kept.id, kept);
        continue;
      }
      // Entries of one snapshot joined "at once" (seq 0) unless we saw them join before.
      const id = nodeKey(node)?.id;
      const parsed = this.readNode(node, id === undefined ? undefined : (previous.get(id)?.joinSeq ?? 0), now);
      if (parsed) map.set(parsed.id, parsed);
      else this.counters.badEntries++;
    }
    this.observed.keepOnly(map);
    return map;
  }

  private unchanged(node: unknown, previous: ReadonlyMap<string, SessionEntry>): SessionEntry | undefined {
    const id = (node as { id?: unknown } | null)?.id;
    const old = typeof id === 'string' ? previous.get(id) : undefined;
    return old !== undefined && sameNodeAs(old, node) ? old : undefined;
  }

  private readClaims(claims: readonly unknown[]): Map<string, ClaimEntry> {
    const map = new Map<string, ClaimEntry>();
    const now = this.now();
    for (const c of claims) {
      const claim = toClaimEntry(c, this.source, now);
      if (claim) map.set(claim.resource, claim);
      else this.counters.badEntries++;
    }
    return map;
  }
}

/**
 * What a re-sync changed: entries added, removed or of another identity (`repaired`), and entries
 * of the same identity whose other fields moved (`refreshed`). An entry nothing changed in is
 * its old object already (readNodes kept it).
 */
function countChanges(before: ReadonlyMap<string, SessionEntry>, after: ReadonlyMap<string, SessionEntry>): { repaired: number; refreshed: number } {
  let repaired = 0;
  let refreshed = 0;
  for (const [id, entry] of after) {
    const old = before.get(id);
    if (old === entry) continue;
    if (old && sameIdentity(old, entry)) refreshed++;
    else repaired++;
  }
  for (const id of before.keys()) if (!after.has(id)) repaired++;
  return { repaired, refreshed };
}

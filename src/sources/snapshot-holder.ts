// The one snapshot holder every source keeps its view in: the entries and the state line it
// hands the engine, rebuilt only after something changed, listeners told only when something
// anyone sees changed. Each source still owns its transport, its wire format and its rules
// for when it is down; it reports them here.

import { sanitize } from '../core/sanitize.js';
import type { ClaimEntry, SessionEntry } from '../core/types.js';
import {
  emptyCounters,
  STATUS_TRAITS,
  type ConnectionStatus,
  type EvictionSupport,
  type InputCounters,
  type SourceSnapshot,
  type SourceState,
} from './types.js';

/** Most warnings kept per source: the state line shows the first, `check --json` all of these. */
const MAX_WARNINGS = 50;

export interface EntryLists {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

/** An outage as the source words it: why, since when, until when its entries were current, the next try. */
export interface Outage {
  readonly cause?: string | undefined;
  readonly downSince?: number | undefined;
  readonly confirmedAt?: number | undefined;
  readonly retryAt?: number | undefined;
}

const EMPTY: EntryLists = { sessions: [], claims: [] };

export abstract class SnapshotHolder {
  readonly name: string;
  protected readonly now: () => number;
  protected readonly counters: InputCounters = emptyCounters();
  protected resyncs = 0;
  protected reconnects = 0;
  /** Drift repaired by re-syncs (entries the events had missed). */
  protected repaired = 0;
  /** Whether the registry offers claims; undefined until known. */
  protected claimsSupported: boolean | undefined;
  private url: string;
  private entryLists: EntryLists = EMPTY;
  private listsStale = false;
  private status: ConnectionStatus = 'stopped';
  private since: number;
  private lastError: string | undefined;
  /**
   * `auto`: an outage begins when the source goes from reading to not reading, its cause is the
   * last error. `own`: the source words its outages itself, through setOutage.
   */
  private readonly outageRule: 'auto' | 'own';
  private outage: Outage = {};
  private lastSyncAt: number | undefined;
  private warnings: readonly string[] = [];
  private eviction: EvictionSupport | undefined;
  private readonly listeners = new Set<() => void>();
  private cached: SourceSnapshot | undefined;

  protected constructor(name: string, url: string, now: () => number, outageRule: 'auto' | 'own' = 'auto') {
    this.name = name;
    this.url = url;
    this.now = now;
    this.since = now();
    this.outageRule = outageRule;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): SourceSnapshot {
    if (this.listsStale) {
      this.entryLists = this.buildLists();
      this.listsStale = false;
    }
    this.cached ??= { sessions: this.entryLists.sessions, claims: this.entryLists.claims, state: this.state() };
    return this.cached;
  }

  private state(): SourceState {
    const o = this.outage;
    return {
      name: this.name,
      url: this.url,
      status: this.status,
      since: this.since,
      lastError: this.lastError,
      cause: this.outageRule === 'own' ? o.cause : o.downSince !== undefined ? this.lastError : undefined,
      downSince: o.downSince,
      retryAt: o.retryAt,
      confirmedAt: o.confirmedAt,
      lastSyncAt: this.lastSyncAt,
      repaired: this.repaired,
      resyncs: this.resyncs,
      reconnects: this.reconnects,
      counters: { ...this.counters },
      claims: this.claimsSupported,
      clockOffsetMs: this.clockOffsetMs(),
      warnings: this.warnings.length > 0 ? this.warnings : undefined,
      eviction: this.eviction,
    };
  }

  /** Registry clock minus local clock; a source that estimates it overrides this. */
  protected clockOffsetMs(): number {
    return 0;
  }

  /** The entry lists of a source that keeps them in maps: called once after each entriesChanged(). */
  protected buildLists(): EntryLists {
    return this.entryLists;
  }

  /**
   * New entry lists (or, without lists, rebuilt by buildLists() when next asked); tells the
   * listeners unless `quiet` (a status change about to follow tells them once for both).
   */
  protected entriesChanged(lists?: EntryLists, quiet = false): void {
    if (lists) this.entryLists = lists;
    else this.listsStale = true;
    if (quiet) this.touched();
    else this.changed();
  }

  /** Something anyone sees changed: a new snapshot, and the listeners told. */
  protected changed(): void {
    this.cached = undefined;
    for (const listener of [...this.listeners]) listener();
  }

  /** Only a counter or a time moved: the next snapshot shows it, nobody needs waking for it. */
  protected touched(): void {
    this.cached = undefined;
  }

  /** A full read of the registry landed (a re-sync when `resync`, else a first snapshot). */
  protected synced(resync: boolean): void {
    if (resync) this.resyncs++;
    this.lastSyncAt = this.now();
    this.touched();
  }

  /** A full read landed: new lists (only if they differ), the time, and the warnings of this read. */
  protected applyRead(read: { sessions?: readonly SessionEntry[]; claims?: readonly ClaimEntry[]; warnings: readonly string[] }): void {
    this.synced(true);
    let changed = false;
    const lists = { sessions: read.sessions ?? this.entryLists.sessions, claims: read.claims ?? this.entryLists.claims };
    if (lists.sessions !== this.entryLists.sessions || lists.claims !== this.entryLists.claims) {
      this.entryLists = lists;
      changed = true;
    }
    const warnings = read.warnings.slice(0, MAX_WARNINGS).map((w) => sanitize(w, 300));
    if (warnings.join('\n') !== this.warnings.join('\n')) {
      this.warnings = warnings;
      changed = true;
    }
    if (changed) this.changed();
  }

  /**
   * error: undefined keeps the last one, an empty string clears it. Listeners are told only of a
   * change; returns whether there was one.
   */
  protected setStatus(status: ConnectionStatus, error?: string, url?: string): boolean {
    const lastError = error === undefined ? this.lastError : error === '' ? undefined : sanitize(error, 200);
    if (status === this.status && lastError === this.lastError && (url === undefined || url === this.url)) return false;
    if (status !== this.status) {
      this.since = this.now();
      // Reading -> not reading: what it holds is from now on the last known; back to reading clears it.
      if (this.outageRule === 'auto') {
        if (!STATUS_TRAITS[status].reading) {
          if (STATUS_TRAITS[this.status].reading) this.outage = { downSince: this.since, confirmedAt: this.since };
        } else this.outage = {};
      }
    }
    this.status = status;
    this.lastError = lastError;
    if (url !== undefined) this.url = url;
    this.changed();
    return true;
  }

  /** The last error, one line (sanitized here), without a change of status: shown with the next snapshot. */
  protected setError(error: string | undefined): void {
    this.lastError = error === undefined ? undefined : sanitize(error, 200);
    this.touched();
  }

  protected currentError(): string | undefined {
    return this.lastError;
  }

  /**
   * For a source with its own outage rule: the outage as it words it (fields left out are cleared).
   * An `auto` source may begin one the rule cannot see (it never read): its cause is then its last error.
   */
  protected setOutage(outage: Outage): void {
    this.outage = outage;
    this.touched();
  }

  protected currentOutage(): Outage {
    return this.outage;
  }

  protected setEviction(eviction: EvictionSupport | undefined): void {
    const a = this.eviction;
    if (a?.available === eviction?.available && a?.note === eviction?.note && a?.why === eviction?.why) return;
    this.eviction = eviction;
    this.changed();
  }

  protected currentStatus(): ConnectionStatus {
    return this.status;
  }
}

// What the polled and file-backed adapters share: the snapshot they hand the engine, rebuilt
// only when something changed, listeners told only then, and the state line's bookkeeping.
// Each adapter still owns its transport and its wire format.

import { sanitize } from '../core/sanitize.js';
import type { ClaimEntry, SessionEntry } from '../core/types.js';
import {
  emptyCounters,
  STATUS_TRAITS,
  type ConnectionStatus,
  type EvictionSupport,
  type InputCounters,
  type SourceSnapshot,
} from './types.js';

/** Most warnings kept per source: the state line shows the first, `check --json` all of these. */
const MAX_WARNINGS = 50;

export abstract class SnapshotHolder {
  readonly name: string;
  protected readonly now: () => number;
  protected readonly counters: InputCounters = emptyCounters();
  protected resyncs = 0;
  protected reconnects = 0;
  private url: string;
  private sessions: readonly SessionEntry[] = [];
  private claims: readonly ClaimEntry[] = [];
  private status: ConnectionStatus = 'stopped';
  private since: number;
  private lastError: string | undefined;
  /** While not reading after having read: since when, and until when its entries were current. */
  private downSince: number | undefined;
  private lastSyncAt: number | undefined;
  private warnings: readonly string[] = [];
  private eviction: EvictionSupport | undefined;
  private readonly listeners = new Set<() => void>();
  private cached: SourceSnapshot | undefined;

  protected constructor(name: string, url: string, now: () => number) {
    this.name = name;
    this.url = url;
    this.now = now;
    this.since = now();
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): SourceSnapshot {
    this.cached ??= {
      sessions: this.sessions,
      claims: this.claims,
      state: {
        name: this.name,
        url: this.url,
        status: this.status,
        since: this.since,
        lastError: this.lastError,
        ...(this.downSince !== undefined ? { cause: this.lastError, downSince: this.downSince, confirmedAt: this.downSince } : {}),
        lastSyncAt: this.lastSyncAt,
        repaired: 0,
        resyncs: this.resyncs,
        reconnects: this.reconnects,
        counters: { ...this.counters },
        claims: undefined,
        clockOffsetMs: 0,
        warnings: this.warnings.length > 0 ? this.warnings : undefined,
        eviction: this.eviction,
      },
    };
    return this.cached;
  }

  /** A full read landed: new lists (only if they differ), the time, and the warnings of this read. */
  protected applyRead(read: { sessions?: readonly SessionEntry[]; claims?: readonly ClaimEntry[]; warnings: readonly string[] }): void {
    this.resyncs++;
    this.lastSyncAt = this.now();
    let changed = false;
    if (read.sessions && read.sessions !== this.sessions) {
      this.sessions = read.sessions;
      changed = true;
    }
    if (read.claims && read.claims !== this.claims) {
      this.claims = read.claims;
      changed = true;
    }
    const warnings = read.warnings.slice(0, MAX_WARNINGS).map((w) => sanitize(w, 300));
    if (warnings.join('\n') !== this.warnings.join('\n')) {
      this.warnings = warnings;
      changed = true;
    }
    this.cached = undefined;
    if (changed) this.notify();
  }

  /** error: undefined keeps the last one, an empty string clears it. */
  protected setStatus(status: ConnectionStatus, error?: string, url?: string): void {
    const lastError = error === undefined ? this.lastError : error === '' ? undefined : sanitize(error, 200);
    if (status === this.status && lastError === this.lastError && (url === undefined || url === this.url)) return;
    if (status !== this.status) {
      this.since = this.now();
      // Reading -> not reading: what it holds is from now on the last known; back to reading clears it.
      if (!STATUS_TRAITS[status].reading) {
        if (STATUS_TRAITS[this.status].reading) this.downSince = this.since;
      } else this.downSince = undefined;
    }
    this.status = status;
    this.lastError = lastError;
    if (url !== undefined) this.url = url;
    this.cached = undefined;
    this.notify();
  }

  protected setEviction(eviction: EvictionSupport | undefined): void {
    const a = this.eviction;
    if (a?.available === eviction?.available && a?.note === eviction?.note && a?.why === eviction?.why) return;
    this.eviction = eviction;
    this.cached = undefined;
    this.notify();
  }

  protected currentStatus(): ConnectionStatus {
    return this.status;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * When ghostwatch first saw each (id, pid): the reuse reference when a registry gives no
 * registration time, and it survives re-reads. A new pid under an old id starts a new clock.
 */
export class FirstSeen {
  private readonly seen = new Map<string, { pid: unknown; at: number }>();

  at(id: string, pid: unknown, now: number): number {
    const s = this.seen.get(id);
    if (s && s.pid === pid) return s.at;
    this.seen.set(id, { pid, at: now });
    return now;
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  /** Forget every id not in this read. */
  keepOnly(ids: { has(id: string): boolean }): void {
    for (const id of this.seen.keys()) if (!ids.has(id)) this.seen.delete(id);
  }
}

// What every registry adapter offers the engine. An adapter is the only place that knows its
// registry's wire format; the engine sees entries, claims, a state line and an evict call.

import type { ClaimEntry, SessionEntry } from '../core/types.js';
import type { EvictionAction } from '../core/evict-plan.js';

export type ConnectionStatus = 'connecting' | 'connected' | 'auth-refused' | 'unreachable' | 'stopped';

/** Counts of what a registry sent that could not be used: each is summarized, none throws. */
export interface InputCounters {
  frames: number;
  invalidJson: number;
  /** Valid JSON of the wrong shape: not an object, a response to no request, an event missing fields. */
  badFrames: number;
  unknownEvents: number;
  /** Nodes or claims dropped because a required field was missing or of the wrong type. */
  badEntries: number;
  /** Frames larger than the max payload (the connection is closed by the WebSocket layer). */
  oversize: number;
  requestTimeouts: number;
}

export interface SourceState {
  readonly name: string;
  /** Where it connects, with any token removed. */
  readonly url: string;
  readonly status: ConnectionStatus;
  /** Local clock: since when the status holds. */
  readonly since: number;
  /** The last error, one line, sanitized. */
  readonly lastError?: string | undefined;
  readonly lastSyncAt?: number | undefined;
  /** Drift repaired by re-syncs: entries added, removed or changed that the events had missed. */
  readonly repaired: number;
  readonly resyncs: number;
  readonly reconnects: number;
  readonly counters: Readonly<InputCounters>;
  /** Whether the registry offers claims (the §2 extension); undefined until known. */
  readonly claims?: boolean | undefined;
  /** Registry clock minus local clock, estimated from fresh registrations (0 until known). */
  readonly clockOffsetMs: number;
}

export interface SourceSnapshot {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
  readonly state: SourceState;
}

export type EvictOutcome =
  | { readonly outcome: 'evicted' }
  | { readonly outcome: 'already-gone' }
  /** The registry said no: its error text, sanitized, shown as it is. */
  | { readonly outcome: 'refused'; readonly error: string }
  /** It could not be asked: not connected, timed out. */
  | { readonly outcome: 'failed'; readonly error: string };

export interface Source {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
  snapshot(): SourceSnapshot;
  /** Called after every change of snapshot(); returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  evict(action: EvictionAction): Promise<EvictOutcome>;
  /** Re-read the whole registry now. */
  resync(): Promise<void>;
}

export function emptyCounters(): InputCounters {
  return { frames: 0, invalidJson: 0, badFrames: 0, unknownEvents: 0, badEntries: 0, oversize: 0, requestTimeouts: 0 };
}

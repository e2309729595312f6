// What every registry adapter offers the engine. An adapter is the only place that knows its
// registry's wire format; the engine sees entries, claims, a state line and an evict call.

import type { ClaimEntry, SessionEntry } from '../core/types.js';
import type { EvictionAction } from '../core/evict-plan.js';

export type ConnectionStatus =
  | 'connecting'
  /** A daemon or WebSocket registry answers. */
  | 'connected'
  /** A file source: its files are read and watched. */
  | 'watching'
  /** The daemon is down: its files were read instead, read-only. */
  | 'files-only'
  /** Nothing there (no such directory or file): not an error, watched for. */
  | 'absent'
  | 'auth-refused'
  | 'unreachable'
  | 'stopped';

/** Per status: does it count as a first snapshot (or a failure) for `settled`, and is it an error for `check`. */
export const STATUS_TRAITS: Readonly<Record<ConnectionStatus, { readonly settled: boolean; readonly error: boolean; readonly reading: boolean }>> = {
  connecting: { settled: false, error: true, reading: false },
  connected: { settled: true, error: false, reading: true },
  watching: { settled: true, error: false, reading: true },
  'files-only': { settled: true, error: false, reading: true },
  absent: { settled: true, error: false, reading: false },
  'auth-refused': { settled: true, error: true, reading: false },
  unreachable: { settled: true, error: true, reading: false },
  stopped: { settled: false, error: true, reading: false },
};

/** What eviction means in a registry, and whether it can be done right now. */
export interface EvictionSupport {
  readonly available: boolean;
  /** What an eviction there does beyond removing the one entry, in one sentence for the confirm dialog. */
  readonly note?: string | undefined;
  /** Why eviction is unavailable now, one line. */
  readonly why?: string | undefined;
  /** What evicting a session here that may be running does, for the force dialog (a line each). */
  readonly liveNote?: readonly string[] | undefined;
}

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
  /**
   * While not reading: why, in a few words ("token refused (401)", "connection refused", "DNS
   * lookup failed (host)", "TLS error: …", "connection dropped"), kept through reconnect attempts.
   */
  readonly cause?: string | undefined;
  /** Local clock: when this outage began (undefined while reading). */
  readonly downSince?: number | undefined;
  /** Local clock: the next reconnect attempt, while one is scheduled. */
  readonly retryAt?: number | undefined;
  /**
   * Local clock: while not reading, until when the entries it still holds were known current.
   * Those entries are the last known: shown stale, never evicted, replaced by the next read.
   */
  readonly confirmedAt?: number | undefined;
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
  /** Things read but not usable (a malformed file, a daemon warning), one line each, sanitized. */
  readonly warnings?: readonly string[] | undefined;
  /** Undefined: eviction is the plain removal of the one entry, available while connected. */
  readonly eviction?: EvictionSupport | undefined;
}

export interface SourceSnapshot {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
  readonly state: SourceState;
}

/** What a registry answered to an eviction: done, already gone, refused (in its words), or not asked at all. */
export type RegistryAnswer =
  /** `detail`: where it went (a trash file); `alsoRemoved`: other records the registry removed in the same request. */
  | { readonly outcome: 'evicted'; readonly detail?: string | undefined; readonly alsoRemoved?: readonly AlsoRemoved[] | undefined }
  /** `detail`: how it was found gone, when the source can say more than "no longer there" (another process took it meanwhile). */
  | { readonly outcome: 'already-gone'; readonly detail?: string | undefined }
  /**
   * The registry said no: its error text, sanitized, shown as it is. `alsoRemoved`: what the same
   * request removed anyway (agentctl's prune acts on every dead record, whatever it did to this one).
   */
  | { readonly outcome: 'refused'; readonly error: string; readonly alsoRemoved?: readonly AlsoRemoved[] | undefined }
  /** It could not be asked, or got no answer in time (not connected, timed out): what changed anyway is in `alsoRemoved`. */
  | { readonly outcome: 'failed'; readonly error: string; readonly alsoRemoved?: readonly AlsoRemoved[] | undefined };

/** A record a registry removed on its own as part of an eviction (agentctl's prune removes every dead one). */
export interface AlsoRemoved {
  readonly kind: 'session' | 'claim';
  /** The session's id, or the claim's resource. */
  readonly id: string;
  /** A claim's key, when its source tells several claims on one resource apart. */
  readonly key?: string | undefined;
  /** What happened to it, in a few words ("removed", "marked stopped"). */
  readonly change: string;
  /** The entry as the registry sent it before the request. */
  readonly raw: unknown;
  /** The entry as the registry sends it now, when it is still listed (marked rather than removed). */
  readonly after?: unknown;
}

export interface Source {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
  snapshot(): SourceSnapshot;
  /** Called after every change of snapshot(); returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
  evict(action: EvictionAction): Promise<RegistryAnswer>;
  /** Re-read the whole registry now. */
  resync(): Promise<void>;
  /**
   * The engine says whether a problem of this source is shown now (told on every change). A
   * source that polls reads faster while one is (agentctl: a read costs its daemon real work).
   */
  showProblems?(shown: boolean): void;
}

export function emptyCounters(): InputCounters {
  return { frames: 0, invalidJson: 0, badFrames: 0, unknownEvents: 0, badEntries: 0, oversize: 0, requestTimeouts: 0 };
}

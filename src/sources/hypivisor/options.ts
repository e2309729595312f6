// What a hypivisor client can be told, and what it does when told nothing (as the CLI builds it).

import { DEFAULT_BACKOFF_INITIAL_MS, DEFAULT_BACKOFF_MAX_MS } from '../../plumbing/backoff.js';

export interface HypivisorOptions {
  readonly name?: string;
  /** ws:// or wss:// URL of the registry, without the token. */
  readonly url: string;
  /** Sent only as ?token=, never logged. */
  readonly token?: string | undefined;
  /** PEM CA bundle for wss:// with a private CA. */
  readonly ca?: string | Buffer | undefined;
  readonly requestTimeoutMs?: number;
  readonly resyncIntervalMs?: number;
  readonly maxPayload?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** After HTTP 401, wait this long before trying again: no retry storm against a wrong token. */
  readonly authRetryMs?: number;
  readonly now?: () => number;
  readonly random?: () => number;
}

export const DEFAULT_MAX_PAYLOAD = 16 * 1024 * 1024;

/** What a client built with no timing options (as the CLI builds it) uses. */
export const HYPIVISOR_DEFAULTS = {
  requestTimeoutMs: 5_000,
  resyncIntervalMs: 10_000,
  authRetryMs: 30_000,
  backoffInitialMs: DEFAULT_BACKOFF_INITIAL_MS,
  backoffMaxMs: DEFAULT_BACKOFF_MAX_MS,
} as const;

/** After a doubt (garbage, an event about a node never seen), the re-sync comes this soon; at most one per this. */
export const DOUBT_RESYNC_MS = 1_000;

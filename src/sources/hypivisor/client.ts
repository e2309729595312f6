// The hypivisor registry client: one WebSocket, a snapshot kept current by events, repaired by
// periodic list_nodes re-syncs (the registry's event forwarder can silently fall behind), and
// evictions through deregister / release_claim. It never sends `register`: a connection that
// registered may only deregister itself.

import { createRequire } from 'node:module';
import type WebSocketType from 'ws';

// ws is CommonJS: through require it skips the ESM loader's export scan of its sources, and it is
// required on the first connect, not at import: ~25 ms that neither `ghostwatch status` nor the
// monitor's first frame should wait for.
let wsClass: typeof WebSocketType | undefined;
const WebSocketClass = (): typeof WebSocketType => (wsClass ??= createRequire(import.meta.url)('ws') as typeof WebSocketType);
type WebSocket = WebSocketType;
// readyState values (the WebSocket standard's): comparing with them needs no loaded module.
const OPEN = 1;
const CLOSED = 3;
import { redactUrl, sanitize } from '../../core/sanitize.js';
import type { EvictionAction } from '../../core/evict-plan.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import {
  emptyCounters,
  type ConnectionStatus,
  type EvictOutcome,
  type InputCounters,
  type Source,
  type SourceSnapshot,
  type SourceState,
} from '../types.js';
import { FirstSeen } from '../base.js';
import { ClockOffset } from './clock-offset.js';
import { nodeKey, parseFrame, sameIdentity, toClaimEntry, toSessionEntry, urlWithToken, type Frame } from './wire.js';

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

interface PendingRequest {
  resolve: (frame: Extract<Frame, { kind: 'response' }>) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

class RequestTimeout extends Error {
  override readonly name = 'RequestTimeout';
}

export class HypivisorSource implements Source {
  readonly name: string;
  private readonly opts: Required<Omit<HypivisorOptions, 'token' | 'ca' | 'name'>> & Pick<HypivisorOptions, 'token' | 'ca'>;
  private ws: WebSocket | undefined;
  private nodes = new Map<string, SessionEntry>();
  private claims = new Map<string, ClaimEntry>();
  /** When each (id, pid) was first seen: survives re-syncs and reconnects, for the reuse verdict. */
  private readonly observed = new FirstSeen();
  private joinSeq = 0;
  private requestSeq = 0;
  private readonly pending = new Map<string, PendingRequest>();
  private readonly listeners = new Set<() => void>();
  private cached: SourceSnapshot | undefined;
  /** Entry arrays are rebuilt only after the entries changed, not after a counter moved. */
  private arrays: { sessions: readonly SessionEntry[]; claims: readonly ClaimEntry[] } | undefined;
  private readonly clock = new ClockOffset();
  private status: ConnectionStatus = 'stopped';
  private since: number;
  private lastError: string | undefined;
  /** Why it is not connected, in a few words; kept through the reconnect attempts. */
  private cause: string | undefined;
  /** When this outage began (the first failure since the last init). */
  private downSince: number | undefined;
  /** When the entries were last known current: the moment a connection that had them closed. */
  private confirmedAt: number | undefined;
  private retryAt: number | undefined;
  private lastSyncAt: number | undefined;
  private claimsSupported: boolean | undefined;
  private readonly counters: InputCounters = emptyCounters();
  private repaired = 0;
  private resyncs = 0;
  private reconnects = 0;
  private attempt = 0;
  private stopped = true;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private doubtTimer: NodeJS.Timeout | undefined;
  private resyncing: Promise<void> | undefined;

  constructor(options: HypivisorOptions) {
    this.name = options.name ?? 'hypivisor';
    this.opts = {
      url: options.url,
      token: options.token,
      ca: options.ca,
      requestTimeoutMs: options.requestTimeoutMs ?? 5_000,
      resyncIntervalMs: options.resyncIntervalMs ?? 10_000,
      maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
      backoffInitialMs: options.backoffInitialMs ?? 250,
      backoffMaxMs: options.backoffMaxMs ?? 5_000,
      authRetryMs: options.authRetryMs ?? 30_000,
      now: options.now ?? Date.now,
      random: options.random ?? Math.random,
    };
    this.since = this.opts.now();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [this.reconnectTimer, this.resyncTimer, this.doubtTimer]) if (t) clearTimeout(t);
    this.failPending('stopped');
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.terminate();
      });
    }
    this.setStatus('stopped');
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): SourceSnapshot {
    this.arrays ??= { sessions: [...this.nodes.values()], claims: [...this.claims.values()] };
    this.cached ??= { ...this.arrays, state: this.state() };
    return this.cached;
  }

  private state(): SourceState {
    return {
      name: this.name,
      url: redactUrl(this.opts.url),
      status: this.status,
      since: this.since,
      lastError: this.lastError,
      cause: this.cause,
      downSince: this.downSince,
      retryAt: this.retryAt,
      confirmedAt: this.confirmedAt,
      lastSyncAt: this.lastSyncAt,
      repaired: this.repaired,
      resyncs: this.resyncs,
      reconnects: this.reconnects,
      counters: { ...this.counters },
      claims: this.claimsSupported,
      clockOffsetMs: this.clock.offsetMs(),
    };
  }

  /** The entries changed: rebuild and tell the listeners. */
  private changed(): void {
    this.arrays = undefined;
    this.stateChanged();
  }

  /** Only the state line changed (status, error): tell the listeners, keep the entry arrays. */
  private stateChanged(): void {
    this.cached = undefined;
    for (const listener of this.listeners) listener();
  }

  /** Only a counter moved: the next snapshot shows it, nobody needs waking for it. */
  private touched(): void {
    this.cached = undefined;
  }

  private setStatus(status: ConnectionStatus, error?: string): void {
    if (error !== undefined) this.lastError = sanitize(error, 200);
    if (status !== this.status) {
      this.status = status;
      this.since = this.opts.now();
    }
    this.stateChanged();
  }

  // ------------------------------------------------------------ connection

  private connect(): void {
    this.retryAt = undefined;
    this.setStatus('connecting');
    const url = urlWithToken(this.opts.url, this.opts.token);
    const ws = new (WebSocketClass())(url, {
      maxPayload: this.opts.maxPayload,
      handshakeTimeout: this.opts.requestTimeoutMs,
      ...(this.opts.ca !== undefined ? { ca: this.opts.ca } : {}),
    });
    this.ws = ws;
    let refused = false;
    // The first thing that went wrong on this connection, in a few words (the close comes after it).
    let cause: string | undefined;
    ws.on('unexpected-response', (req, res) => {
      refused = res.statusCode === 401;
      const why = refused
        ? 'the registry refused the token (HTTP 401); check HYPI_TOKEN or --token-file'
        : `the registry answered HTTP ${res.statusCode} instead of a WebSocket`;
      this.lastError = why;
      cause = refused ? 'token refused (401)' : `HTTP ${res.statusCode} instead of a WebSocket`;
      // With this listener ws leaves the handshake to us and never emits 'close': end it here.
      req.destroy();
      res.destroy();
      this.onClose(ws, 1006, refused, cause);
    });
    ws.on('error', (err) => {
      if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.counters.oversize++;
      this.lastError = sanitize(describeError(err, this.opts.maxPayload), 200);
      cause ??= failureCause(err, this.opts.url);
    });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.once('close', (code) => this.onClose(ws, code, refused, cause ?? (this.status === 'connected' ? 'connection dropped' : `closed before the registry's first snapshot (code ${code})`)));
  }

  private onClose(ws: WebSocket, code: number, authRefused: boolean, cause: string): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    this.failPending('the connection closed');
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    if (this.stopped) return;
    const now = this.opts.now();
    // The entries were current up to this moment (events kept them so); from now on they are the last known.
    if (this.status === 'connected') this.confirmedAt = now;
    this.downSince ??= now;
    this.cause = sanitize(cause, 160);
    if (authRefused) {
      this.retryAt = now + this.opts.authRetryMs;
      this.setStatus('auth-refused', this.lastError);
      this.reconnectTimer = setTimeout(() => this.reconnect(), this.opts.authRetryMs);
      return;
    }
    const base = Math.min(this.opts.backoffMaxMs, this.opts.backoffInitialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    const delay = base / 2 + (base / 2) * this.opts.random(); // jitter: many monitors must not reconnect in step
    this.retryAt = now + delay;
    this.setStatus('unreachable', this.lastError ?? `closed (code ${code})`);
    this.reconnectTimer = setTimeout(() => this.reconnect(), delay);
  }

  private reconnect(): void {
    if (this.stopped) return;
    this.reconnects++;
    this.connect();
  }

  private failPending(why: string): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
      this.pending.delete(id);
    }
  }

  // ------------------------------------------------------------ frames

  private onMessage(data: WebSocketType.RawData, isBinary: boolean): void {
    this.counters.frames++;
    const text = isBinary ? undefined : rawToString(data);
    const frame: Frame = text === undefined ? { kind: 'bad', why: 'a binary frame' } : parseFrame(text);
    switch (frame.kind) {
      case 'invalid-json':
        this.counters.invalidJson++;
        this.doubt();
        this.touched();
        break;
      case 'bad':
        this.counters.badFrames++;
        this.doubt();
        this.touched();
        break;
      case 'unknown-event':
        this.counters.unknownEvents++;
        this.touched();
        break;
      case 'response': {
        const p = this.pending.get(frame.id);
        if (!p) {
          this.counters.badFrames++;
          this.touched();
          break;
        }
        this.pending.delete(frame.id);
        clearTimeout(p.timer);
        p.resolve(frame);
        break;
      }
      case 'init':
        this.onInit(frame.nodes, frame.claims);
        break;
      default:
        this.onEvent(frame);
    }
  }

  private onInit(nodes: readonly unknown[], claims: readonly unknown[] | undefined): void {
    // A new connection's snapshot replaces the old view whole: nothing from before a restart survives.
    this.nodes = this.readNodes(nodes, new Map());
    if (claims) {
      this.claimsSupported = true;
      this.claims = this.readClaims(claims);
    } else {
      this.claims = new Map();
    }
    this.attempt = 0;
    this.lastSyncAt = this.opts.now();
    this.lastError = undefined;
    this.cause = this.downSince = this.confirmedAt = this.retryAt = undefined;
    this.arrays = undefined; // new entries, and (below) a new status: one notification for both
    this.setStatus('connected');
    this.scheduleResync();
    if (!claims) void this.resyncClaims().then((moved) => (moved > 0 ? this.changed() : this.touched()), () => undefined);
  }

  private onEvent(frame: Exclude<Frame, { kind: 'init' | 'response' | 'invalid-json' | 'bad' | 'unknown-event' }>): void {
    switch (frame.kind) {
      case 'node_joined': {
        const entry = this.readNode(frame.node, ++this.joinSeq);
        if (!entry) {
          this.counters.badEntries++;
          this.doubt();
          this.touched();
          return;
        }
        if (entry.registeredAt !== undefined) this.clock.sample(entry.registeredAt - this.opts.now());
        this.nodes.set(entry.id, entry);
        break;
      }
      case 'node_offline': {
        const entry = this.nodes.get(frame.id);
        if (!entry) {
          this.doubt(); // offline for a node we never saw: our view has drifted
          return;
        }
        // The event carries no time: the registry set offline_since to its own now.
        const offlineSince = Math.floor((this.opts.now() + this.clock.offsetMs()) / 1000);
        const raw = { ...entry.raw, status: 'offline', offline_since: offlineSince };
        const updated = toSessionEntry(raw, this.name, { firstObservedAt: entry.firstObservedAt, joinSeq: entry.joinSeq });
        if (updated) this.nodes.set(frame.id, updated);
        break;
      }
      case 'node_removed':
        if (!this.nodes.delete(frame.id)) return;
        this.observed.forget(frame.id);
        break;
      case 'claim_acquired': {
        const claim = toClaimEntry(frame.claim, this.name);
        if (!claim) {
          this.counters.badEntries++;
          this.doubt();
          this.touched();
          return;
        }
        this.claimsSupported = true;
        this.claims.set(claim.resource, claim);
        break;
      }
      case 'claim_released':
        if (!this.claims.delete(frame.resource)) return;
        break;
    }
    this.changed();
  }

  /** A node as an entry, stamped with when (id, pid) was first seen: a new pid under an old id starts a new clock. */
  private readNode(node: unknown, joinSeq: number | undefined, now = this.opts.now()): SessionEntry | undefined {
    const key = nodeKey(node);
    if (!key) return undefined;
    return toSessionEntry(node, this.name, { firstObservedAt: this.observed.at(key.id, key.pid, now), joinSeq });
  }

  private readNodes(nodes: readonly unknown[], previous: ReadonlyMap<string, SessionEntry>): Map<string, SessionEntry> {
    const map = new Map<string, SessionEntry>();
    const now = this.opts.now();
    for (const node of nodes) {
      // Entries of one snapshot joined "at once" (seq 0) unless we saw them join before.
      const id = nodeKey(node)?.id;
      const parsed = this.readNode(node, id === undefined ? undefined : (previous.get(id)?.joinSeq ?? 0), now);
      if (parsed) map.set(parsed.id, parsed);
      else this.counters.badEntries++;
    }
    this.observed.keepOnly(map);
    return map;
  }

  private readClaims(claims: readonly unknown[]): Map<string, ClaimEntry> {
    const map = new Map<string, ClaimEntry>();
    for (const c of claims) {
      const claim = toClaimEntry(c, this.name);
      if (claim) map.set(claim.resource, claim);
      else this.counters.badEntries++;
    }
    return map;
  }

  // ------------------------------------------------------------ requests and re-sync

  private request(method: string, params?: Record<string, unknown>): Promise<Extract<Frame, { kind: 'response' }>> {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return Promise.reject(new Error('not connected to the registry'));
    // The id must be a JSON string: hypivisor silently drops requests with a numeric id.
    const id = `gw-${++this.requestSeq}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.counters.requestTimeouts++;
        this.touched();
        reject(new RequestTimeout(`no answer to ${method} within ${this.opts.requestTimeoutMs} ms`));
      }, this.opts.requestTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      ws.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
    });
  }

  /** Something looked wrong: re-sync soon, at most once per second. */
  private doubt(): void {
    if (this.doubtTimer || this.status !== 'connected') return;
    this.doubtTimer = setTimeout(() => {
      this.doubtTimer = undefined;
      void this.resync();
    }, 1_000);
  }

  private scheduleResync(): void {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      void this.resync().finally(() => {
        if (!this.stopped && this.status === 'connected') this.scheduleResync();
      });
    }, this.opts.resyncIntervalMs);
  }

  resync(): Promise<void> {
    this.resyncing ??= this.doResync().finally(() => (this.resyncing = undefined));
    return this.resyncing;
  }

  private async doResync(): Promise<void> {
    if (this.status !== 'connected') return;
    try {
      const nodes = await this.request('list_nodes');
      if (!Array.isArray(nodes.result)) {
        this.counters.badFrames++;
        return;
      }
      const next = this.readNodes(nodes.result, this.nodes);
      const moved = keepUnchanged(this.nodes, next);
      this.repaired += moved;
      if (moved > 0) this.nodes = next;
      const claimsMoved = this.claimsSupported !== false ? await this.resyncClaims() : 0;
      this.resyncs++;
      this.lastSyncAt = this.opts.now();
      // A re-sync that found the view right changes nothing anyone sees: no wake-up for it.
      if (moved > 0 || claimsMoved > 0) this.changed();
      else this.touched();
    } catch (error) {
      this.lastError = sanitize((error as Error).message, 200);
      this.touched();
    }
  }

  /** Re-read the claims; returns how many changed (0 leaves the map as it was). */
  private async resyncClaims(): Promise<number> {
    const res = await this.request('list_claims');
    if (res.error !== undefined) {
      // A stock hypivisor has no claims: "Method not found" means "no claims", not a failure.
      if (res.error.startsWith('Method not found')) this.claimsSupported = false;
      return 0;
    }
    if (!Array.isArray(res.result)) {
      this.counters.badFrames++;
      return 0;
    }
    this.claimsSupported = true;
    const next = this.readClaims(res.result);
    let moved = 0;
    for (const [k, c] of next) if (!this.claims.has(k) || this.claims.get(k)?.holder !== c.holder) moved++;
    for (const k of this.claims.keys()) if (!next.has(k)) moved++;
    this.repaired += moved;
    if (moved > 0) this.claims = next;
    return moved;
  }

  // ------------------------------------------------------------ eviction

  async evict(action: EvictionAction): Promise<EvictOutcome> {
    const [method, params, done, gone] =
      action.type === 'deregister'
        ? (['deregister', { id: action.id }, 'deregistered', 'not_found'] as const)
        : (['release_claim', { resource: action.resource }, 'released', 'not_found'] as const);
    let res: Extract<Frame, { kind: 'response' }>;
    try {
      res = await this.request(method, params);
    } catch (error) {
      return { outcome: 'failed', error: sanitize((error as Error).message, 200) };
    }
    if (res.error !== undefined) return { outcome: 'refused', error: sanitize(res.error, 200) };
    const status = (res.result as { status?: unknown } | undefined)?.status;
    const removed = action.type === 'deregister' ? this.nodes.delete(action.id) : this.claims.delete(action.resource);
    if (removed) this.changed();
    if (status === done) return { outcome: 'evicted' };
    if (status === gone) return { outcome: 'already-gone' };
    return { outcome: 'refused', error: `unexpected answer: ${sanitize(res.result, 120)}` };
  }
}

/**
 * How many entries a re-sync added, removed or changed. Entries whose identity did not change
 * keep their old object in `after`, so whoever compares objects sees no change there.
 */
function keepUnchanged(before: ReadonlyMap<string, SessionEntry>, after: Map<string, SessionEntry>): number {
  let n = 0;
  for (const [id, entry] of after) {
    const old = before.get(id);
    if (old && sameIdentity(old, entry)) after.set(id, old);
    else n++;
  }
  for (const id of before.keys()) if (!after.has(id)) n++;
  return n;
}

function rawToString(data: WebSocketType.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const DROP_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Why a connection failed, in the few words the header and `check` show. */
export function failureCause(err: Error, url: string): string {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (DNS_CODES.has(code)) {
    const host = (err as { hostname?: string }).hostname ?? hostOf(url);
    return `DNS lookup failed (${host})`;
  }
  if (code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'EPROTO' || /\b(SSL|TLS)\b|certificate/i.test(err.message)) {
    // OpenSSL's text ("write EPROTO 80…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/…"): its reason.
    const openssl = /error:[0-9A-F]+:SSL routines:[^:]*:([^:]+)/i.exec(err.message);
    return `TLS error: ${openssl ? openssl[1] : err.message.split('\n')[0]}`;
  }
  if (DROP_CODES.has(code) || err.message === 'socket hang up') return 'connection dropped';
  if (code === 'ETIMEDOUT' || /handshake has timed out/i.test(err.message)) return 'no answer (timed out)';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return 'a frame over the max payload';
  return err.message;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function describeError(err: Error, maxPayload: number): string {
  const code = (err as { code?: string }).code;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return `a frame was larger than the max payload (${maxPayload} bytes); raise --max-payload`;
  }
  if (code === 'ECONNREFUSED') return `nothing listens at the registry address (${err.message})`;
  return err.message;
}

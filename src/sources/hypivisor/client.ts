// The hypivisor registry client: one WebSocket, a view kept current by events (registry-view),
// repaired by periodic list_nodes re-syncs and by one soon after any doubt (the registry's
// event forwarder can silently fall behind), and evictions through deregister / release_claim.
// It never sends `register`: a connection that registered may only deregister itself.

import { createRequire } from 'node:module';
import type WebSocketType from 'ws';

// ws is CommonJS, required on the first connect, not at import: ~25 ms that neither `ghostwatch
// status` nor the monitor's first frame should wait for. In the built CLI esbuild inlines ws for
// this require (evaluated on that first call); unbundled (the tests), it is Node's require.
let wsClass: typeof WebSocketType | undefined;
const WebSocketClass = (): typeof WebSocketType =>
  (wsClass ??= (typeof require === 'function' ? require('ws') : createRequire(import.meta.url)('ws')) as typeof WebSocketType);
type WebSocket = WebSocketType;
// readyState values (the WebSocket standard's): comparing with them needs no loaded module.
const OPEN = 1;
const CLOSED = 3;
import { redactUrl, sanitize } from '../../core/sanitize.js';
import type { EvictionAction } from '../../core/evict-plan.js';
import { Backoff } from '../../plumbing/backoff.js';
import { PacedQueue } from '../../plumbing/paced-queue.js';
import { SLICE_MS } from '../../plumbing/steps.js';
import { RpcTable } from '../../plumbing/rpc.js';
import { SnapshotHolder, type EntryLists } from '../snapshot-holder.js';
import type { EvictionSupport, RegistryAnswer, Source } from '../types.js';
import { describeError, failureCause, refusalText } from './failure.js';
import { DEFAULT_MAX_PAYLOAD, DOUBT_RESYNC_MS, HYPIVISOR_DEFAULTS, type HypivisorOptions } from './options.js';
import { RegistryView } from './registry-view.js';
import { parseFrame, rawToString, urlWithToken, type Frame } from './wire.js';

export { failureCause } from './failure.js';
export { DEFAULT_MAX_PAYLOAD, DOUBT_RESYNC_MS, HYPIVISOR_DEFAULTS, type HypivisorOptions } from './options.js';

type Response = Extract<Frame, { kind: 'response' }>;

/** Eviction is the registry's own `deregister` / `release_claim`: possible while connected. */
const CONNECTED: EvictionSupport = { available: true };
const NOT_CONNECTED: EvictionSupport = { available: false, why: 'not connected to the registry (eviction is its deregister)' };

/** Frames waiting to be applied past which the socket stops reading, and below which it reads again. */
const INBOX_HIGH = 1_024;
const INBOX_LOW = 256;

export class HypivisorSource extends SnapshotHolder implements Source {
  private readonly opts: Required<Omit<HypivisorOptions, 'token' | 'ca' | 'name' | 'random' | 'backoffInitialMs' | 'backoffMaxMs'>> & Pick<HypivisorOptions, 'token' | 'ca'>;
  private ws: WebSocket | undefined;
  private readonly view: RegistryView;
  private readonly rpc: RpcTable<Response>;
  private readonly backoff: Backoff;
  private stopped = true;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private doubtTimer: NodeJS.Timeout | undefined;
  private resyncing: Promise<void> | undefined;

  constructor(options: HypivisorOptions) {
    const now = options.now ?? Date.now;
    super(options.name ?? 'hypivisor', redactUrl(options.url), now, 'own');
    this.opts = {
      url: options.url,
      token: options.token,
      ca: options.ca,
      requestTimeoutMs: options.requestTimeoutMs ?? HYPIVISOR_DEFAULTS.requestTimeoutMs,
      resyncIntervalMs: options.resyncIntervalMs ?? HYPIVISOR_DEFAULTS.resyncIntervalMs,
      maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
      authRetryMs: options.authRetryMs ?? HYPIVISOR_DEFAULTS.authRetryMs,
      now,
    };
    this.backoff = new Backoff({ initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs, random: options.random });
    this.view = new RegistryView(this.name, now, this.counters);
    this.rpc = new RpcTable<Response>({
      timeoutMs: this.opts.requestTimeoutMs,
      timeoutMessage: (method, ms) => `no answer to ${method} within ${ms} ms`,
      onTimeout: () => {
        this.counters.requestTimeouts++;
        this.touched();
      },
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [this.reconnectTimer, this.resyncTimer, this.doubtTimer]) if (t) clearTimeout(t);
    this.rpc.failAll('stopped');
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

  protected override buildLists(): EntryLists {
    return this.view.lists();
  }

  protected override clockOffsetMs(): number {
    return this.view.clock.offsetMs();
  }

  // ------------------------------------------------------------ connection

  private connect(): void {
    this.setOutage({ ...this.currentOutage(), retryAt: undefined });
    this.setEviction(NOT_CONNECTED);
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
      const text = refusalText(res.statusCode);
      this.setError(text.error);
      cause = text.cause;
      // With this listener ws leaves the handshake to us and never emits 'close': end it here.
      req.destroy();
      res.destroy();
      this.onClose(ws, 1006, refused, cause);
    });
    ws.on('error', (err) => {
      if ((err as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.counters.oversize++;
      this.setError(describeError(err, this.opts.maxPayload));
      cause ??= failureCause(err, this.opts.url);
    });
    // Frames are applied in order as they come, a few ms of them at a time: one read of 8,000
    // queued events never holds a key. Too many waiting: the socket stops reading for a while.
    const inbox = new PacedQueue<{ readonly data: WebSocketType.RawData; readonly isBinary: boolean }>({
      apply: (frame) => {
        if (this.ws === ws) this.onMessage(frame.data, frame.isBinary);
      },
      sliceMs: SLICE_MS,
      high: INBOX_HIGH,
      low: INBOX_LOW,
      pause: () => ws.pause(),
      resume: () => ws.resume(),
    });
    ws.on('message', (data, isBinary) => inbox.push({ data, isBinary }));
    ws.once('close', (code) => {
      // What came before the close is applied first, as it would have been had it come sooner.
      inbox.flush();
      this.onClose(ws, code, refused, cause ?? (this.currentStatus() === 'connected' ? 'connection dropped' : `closed before the registry's first snapshot (code ${code})`));
    });
  }

  private onClose(ws: WebSocket, code: number, authRefused: boolean, cause: string): void {
    if (this.ws !== ws) return;
    this.ws = undefined;
    this.rpc.failAll('the connection closed');
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    if (this.stopped) return;
    const now = this.opts.now();
    const was = this.currentOutage();
    // The entries were current up to this moment (events kept them so); from now on they are the last known.
    const confirmedAt = this.currentStatus() === 'connected' ? now : was.confirmedAt;
    // A 401 waits the long fixed time (no retry storm against a wrong token); anything else backs off.
    const delay = authRefused ? this.opts.authRetryMs : this.backoff.next();
    this.setOutage({ cause: sanitize(cause, 160), downSince: was.downSince ?? now, confirmedAt, retryAt: now + delay });
    this.setEviction(NOT_CONNECTED);
    if (authRefused) this.setStatus('auth-refused', this.currentError());
    else this.setStatus('unreachable', this.currentError() ?? `closed (code ${code})`);
    this.reconnectTimer = setTimeout(() => this.reconnect(), delay);
  }

  private reconnect(): void {
    if (this.stopped) return;
    this.reconnects++;
    this.connect();
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
      case 'response':
        if (!this.rpc.answer(frame.id, { answer: frame })) {
          this.counters.badFrames++;
          this.touched();
        }
        break;
      case 'init':
        this.onInit(frame.nodes, frame.claims);
        break;
      default: {
        const effect = this.view.apply(frame);
        if (effect === 'changed') {
          if (frame.kind === 'claim_acquired') this.claimsSupported = true;
          this.entriesChanged();
        } else if (effect === 'doubt' || effect === 'bad') {
          this.doubt();
          if (effect === 'bad') this.touched();
        }
      }
    }
  }

  private onInit(nodes: readonly unknown[], claims: readonly unknown[] | undefined): void {
    this.view.replace(nodes, claims);
    if (claims) this.claimsSupported = true;
    this.backoff.reset();
    this.synced(false);
    this.setError(undefined);
    this.setOutage({});
    this.setEviction(CONNECTED);
    this.entriesChanged(undefined, true); // new entries and a new status: one notification for both
    if (!this.setStatus('connected')) this.changed();
    this.scheduleResync();
    if (!claims) void this.resyncClaims().then((moved) => (moved > 0 ? this.entriesChanged() : this.touched()), () => undefined);
  }

  // ------------------------------------------------------------ requests and re-sync

  private request(method: string, params?: Record<string, unknown>): Promise<Response>;
  private request<R>(method: string, params: Record<string, unknown> | undefined, read: (answer: Response) => R): Promise<R>;
  private request(method: string, params?: Record<string, unknown>, read?: (answer: Response) => unknown): Promise<unknown> {
    const ws = this.ws;
    if (!ws || ws.readyState !== OPEN) return Promise.reject(new Error('not connected to the registry'));
    const send = (id: string): void => ws.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
    return read ? this.rpc.call(method, send, read) : this.rpc.call(method, send);
  }

  /** Something looked wrong: re-sync soon, at most once per DOUBT_RESYNC_MS. */
  private doubt(): void {
    if (this.doubtTimer || this.currentStatus() !== 'connected') return;
    this.doubtTimer = setTimeout(() => {
      this.doubtTimer = undefined;
      void this.resync();
    }, DOUBT_RESYNC_MS);
  }

  private scheduleResync(): void {
    if (this.resyncTimer) clearTimeout(this.resyncTimer);
    this.resyncTimer = setTimeout(() => {
      void this.resync().finally(() => {
        if (!this.stopped && this.currentStatus() === 'connected') this.scheduleResync();
      });
    }, this.opts.resyncIntervalMs);
  }

  resync(): Promise<void> {
    this.resyncing ??= this.doResync().finally(() => (this.resyncing = undefined));
    return this.resyncing;
  }

  private async doResync(): Promise<void> {
    if (this.currentStatus() !== 'connected') return;
    try {
      // Repaired as the answer is read: events read after it in the same chunk are newer than it.
      const moved = await this.request('list_nodes', undefined, (nodes) => {
        if (Array.isArray(nodes.result)) return this.view.repairNodes(nodes.result);
        this.counters.badFrames++;
        return undefined;
      });
      if (moved === undefined) return;
      this.repaired += moved.repaired;
      const claimsMoved = this.claimsSupported !== false ? await this.resyncClaims() : 0;
      this.synced(true);
      // A re-sync that found the view right changes nothing anyone sees: no wake-up for it. A
      // heartbeat's last_seen is seen (the detail view shows it): a wake-up, though not drift.
      if (moved.repaired + moved.refreshed > 0 || claimsMoved > 0) this.entriesChanged();
    } catch (error) {
      this.setError((error as Error).message);
    }
  }

  /** Re-read the claims; returns how many changed (0 leaves them as they were). */
  private async resyncClaims(): Promise<number> {
    const moved = await this.request('list_claims', undefined, (res) => {
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
      // As the nodes: repaired as the answer is read.
      return this.view.repairClaims(res.result);
    });
    this.repaired += moved;
    return moved;
  }

  // ------------------------------------------------------------ eviction

  async evict(action: EvictionAction): Promise<RegistryAnswer> {
    const [method, params, done, gone] =
      action.type === 'deregister'
        ? (['deregister', { id: action.id }, 'deregistered', 'not_found'] as const)
        : (['release_claim', { resource: action.resource }, 'released', 'not_found'] as const);
    let res: Response;
    try {
      res = await this.request(method, params);
    } catch (error) {
      return { outcome: 'failed', error: sanitize((error as Error).message, 200) };
    }
    if (res.error !== undefined) return { outcome: 'refused', error: sanitize(res.error, 200) };
    const status = (res.result as { status?: unknown } | undefined)?.status;
    if (this.view.remove(action)) this.entriesChanged();
    if (status === done) return { outcome: 'evicted' };
    if (status === gone) return { outcome: 'already-gone' };
    return { outcome: 'refused', error: `unexpected answer: ${sanitize(res.result, 120)}` };
  }
}

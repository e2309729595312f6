// A connection serve holds open: a registry client on `/ws` (RegistryPeer) or a relayed agent
// connection on `/ws/agent/<id>` (ProxyPeer). Both are pinged on one interval and terminated when
// they stop answering, or stop reading for a whole interval; both close with one grace at shutdown.
import type { Duplex } from 'node:stream';
import { WebSocket, type RawData } from 'ws';
import { sanitize } from '../core/sanitize.js';
import type { AgentProxy, ProxyStats } from './agent-proxy.js';
import { WRITE_OVERHEAD, type BudgetHolder, type BufferBudget } from './buffer-budget.js';
import { listDirectories, spawnAgent, type HostMethodOptions } from './host-methods.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from './limits.js';
import { parseRequest, type RpcResponse } from './protocol.js';
import type { ConnectionContext, Registry } from './registry.js';

/** Unsent bytes after which a peer counts as not reading at all: terminated (events and replies). */
export const SLOW_PEER_BYTES = 64 * 1024 * 1024;

export interface PeerStats {
  readonly serial: number;
  /** Bytes serve has not yet written to this client's socket. */
  readonly buffered: number;
  /** Not read because it does not read: `queued` requests wait. */
  readonly held: boolean;
  readonly queued: number;
}

/** Connections opened so far, of both kinds. */
let openedSoFar = 0;

export abstract class Peer {
  /** Its place in the order connections opened in. */
  readonly opened = ++openedSoFar;
  /** A pong (or, for a registry client, a read; for Pi-DE, anything it sent) came since the last ping. */
  protected answeredPing = true;
  /** Pinger ticks spent not reading. */
  protected stalledTicks = 0;

  constructor(protected readonly log: (line: string) => void) {}

  abstract readonly closed: Promise<void>;
  /** Not read now (back-pressure): it cannot answer pings. */
  protected abstract notReading(): boolean;
  /** Whether a tick not reading counts towards terminating it. */
  protected abstract stallCounts(): boolean;
  protected abstract stalled(intervalMs: number): string;
  protected abstract silent(): string;
  /** Sends a ping; false when none could be sent now. */
  protected abstract sendPing(): boolean;
  abstract terminate(): void;
  protected abstract closeGently(code: number, reason: string): void;

  /** One tick of the pinger: ping it, or terminate it when it did not answer the last ping or did not read for a whole interval. */
  tick(intervalMs: number): void {
    if (this.notReading()) {
      // One whole interval is its grace.
      if (this.stallCounts() && ++this.stalledTicks >= 2) {
        this.log(this.stalled(intervalMs));
        this.terminate();
      }
      return;
    }
    this.stalledTicks = 0;
    if (!this.answeredPing) {
      this.log(this.silent());
      this.terminate();
      return;
    }
    // A ping that cannot go now (Pi-DE in the middle of a frame it is reading) asks nothing this tick.
    this.answeredPing = !this.sendPing();
  }

  /** Close it, terminated if it has not closed within `graceMs`. */
  async shutdown(graceMs: number): Promise<void> {
    const force = setTimeout(() => this.terminate(), graceMs);
    this.closeGently(1001, 'server shutting down');
    await this.closed;
    clearTimeout(force);
  }
}

export interface RegistryPeerContext {
  readonly registry: Registry;
  readonly log: (line: string) => void;
  readonly budget: BufferBudget;
  /** Unsent bytes above which its requests are not read until it reads. */
  readonly readPauseBytes: number;
  /** list_directories and spawn_agent's options (known once serve listens). */
  readonly hostMethods: () => HostMethodOptions;
  /** Sends the events still waiting for the next flush now: a spawn_agent reply follows the agent's node_joined. */
  readonly flushEvents: () => void;
  /** It pinged us: its node's last_seen changed. */
  readonly onPing: () => void;
  readonly onClose: (peer: RegistryPeer) => void;
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** A registry client on `/ws`: its registry connection, and its back-pressure (not read while it does not read). */
export class RegistryPeer extends Peer implements BudgetHolder {
  readonly conn: ConnectionContext;
  readonly closed: Promise<void>;
  /** Bytes given to its socket and not yet written out, in how many writes, and how many of the bytes are its own (replies). */
  private pendingBytes = 0;
  private pendingWrites = 0;
  private pendingOwn = 0;
  /** Not read: until its init is sent, then while too much is unsent to it. */
  private held = true;
  /** The over-deep message refusal is logged once per connection. */
  private toldDepth = false;
  /** Requests received while held (the rest of one read), handled in order once released. */
  private readonly queue: string[] = [];

  constructor(
    private readonly ws: WebSocket,
    /** The socket under `ws`: a flush's events are written on it as they are framed (sendEvents). */
    private readonly socket: Duplex,
    private readonly ctx: RegistryPeerContext,
  ) {
    super(ctx.log);
    ws.pause();
    ws.on('pong', () => (this.answeredPing = true));
    this.conn = ctx.registry.openConnection();
    this.closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    ws.on('message', (data, isBinary) => {
      if (isBinary || ws.readyState !== WebSocket.OPEN) return; // the stock server ignores binary frames
      // Not read while held: the rest of the chunk already received waits here, in order.
      if (this.held || this.queue.length > 0) this.queue.push(textOf(data));
      else this.handle(textOf(data));
    });
    ws.on('ping', () => {
      ctx.registry.heartbeat(this.conn);
      ctx.onPing();
    });
    ws.on('error', (err) => ctx.log(`serve: connection ${this.conn.serial}: ${sanitize(err.message)}`));
    ws.on('close', () => {
      ctx.onClose(this);
      ctx.registry.connectionClosed(this.conn);
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  label(): string {
    return `connection ${this.conn.serial}${this.conn.registeredId === undefined ? '' : ` (node ${sanitize(this.conn.registeredId)})`}`;
  }

  unsent(): number {
    return this.pendingBytes + this.pendingWrites * WRITE_OVERHEAD;
  }

  freeable(): number {
    return this.pendingOwn + this.pendingWrites * WRITE_OVERHEAD;
  }

  /**
   * One flush's events, framed (one buffer shared by every peer), in one write to its socket,
   * unless it fell too far behind. Written beside ws's own frames: no extension is negotiated
   * (wss has none) and ws writes each of its frames whole and at once, so a whole frame of ours
   * between two of its frames keeps the stream valid; ws's bufferedAmount counts it.
   */
  sendEvents(wire: Buffer): void {
    if (!this.open || this.dropIfBehind()) return;
    const budget = this.ctx.budget;
    this.pendingBytes += wire.length;
    this.pendingWrites++;
    budget.holdShared(wire);
    budget.hold(WRITE_OVERHEAD);
    this.socket.write(wire, () => {
      this.pendingBytes -= wire.length;
      this.pendingWrites--;
      budget.releaseShared(wire);
      budget.release(WRITE_OVERHEAD);
      this.release();
    });
  }

  /** Its init (shared): it is read from now on, or once enough of a large one has gone out. */
  sendInit(init: Buffer): void {
    if (!this.open) return;
    this.out(init, true);
    this.release();
  }

  /** Hands a frame to ws, counted in the budget until it is written out (or the socket is gone). */
  private out(frame: Buffer, shared: boolean): void {
    const budget = this.ctx.budget;
    const own = shared ? 0 : frame.length;
    this.pendingBytes += frame.length;
    this.pendingWrites++;
    this.pendingOwn += own;
    if (shared) budget.holdShared(frame);
    budget.hold(own + WRITE_OVERHEAD);
    this.ws.send(frame, { binary: false }, () => {
      this.pendingBytes -= frame.length;
      this.pendingWrites--;
      this.pendingOwn -= own;
      if (shared) budget.releaseShared(frame);
      budget.release(own + WRITE_OVERHEAD);
      this.release();
    });
  }

  stats(): PeerStats {
    return { serial: this.conn.serial, buffered: this.ws.bufferedAmount, held: this.held, queued: this.queue.length };
  }

  terminate(): void {
    this.ws.terminate();
  }

  protected sendPing(): boolean {
    this.ws.ping();
    return true;
  }

  protected closeGently(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  protected notReading(): boolean {
    return this.held;
  }

  protected stallCounts(): boolean {
    return true;
  }

  protected stalled(intervalMs: number): string {
    return `serve: connection ${this.conn.serial} stopped reading (${this.ws.bufferedAmount} bytes unsent for over ${intervalMs} ms): terminated`;
  }

  protected silent(): string {
    return `serve: ${this.label()} did not answer a ping: terminated`;
  }

  private dropIfBehind(): boolean {
    if (this.ws.bufferedAmount <= SLOW_PEER_BYTES) return false;
    this.log(`serve: connection ${this.conn.serial} fell ${this.ws.bufferedAmount} bytes behind: terminated`);
    this.ws.terminate();
    return true;
  }

  /** Stops reading it while too much is unsent, until it has read. */
  private hold(): void {
    if (this.held || this.ws.bufferedAmount <= this.ctx.readPauseBytes || !this.open) return;
    this.held = true;
    this.stalledTicks = 0;
    this.ws.pause();
  }

  /** A write went out: read it again once what is unsent is below the bound. */
  private release(): void {
    if (!this.held || this.ws.bufferedAmount > this.ctx.readPauseBytes || !this.open) return;
    this.held = false;
    this.answeredPing = true; // pings sent while it was not read count from now
    while (this.queue.length > 0 && !this.held && this.open) this.handle(this.queue.shift()!);
    if (!this.held) this.ws.resume();
  }

  private reply(response: RpcResponse): void {
    if (!this.open || this.dropIfBehind()) return;
    this.out(Buffer.from(JSON.stringify(response)), false);
    this.hold();
  }

  private handle(text: string): void {
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      // Not parsed at all, so there is no id to answer: dropped as invalid JSON is.
      if (!this.toldDepth) this.log(`serve: connection ${this.conn.serial}: dropped a message nested deeper than ${MAX_JSON_DEPTH} levels`);
      this.toldDepth = true;
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return; // invalid JSON: dropped without a reply, as the stock server does
    }
    const request = parseRequest(message);
    if (request?.method === 'list_directories') {
      this.reply(listDirectories(request.id, request.params, this.ctx.hostMethods()));
      return;
    }
    if (request?.method === 'spawn_agent') {
      void spawnAgent(request.id, request.params, this.ctx.hostMethods()).then((r) => {
        this.ctx.flushEvents();
        this.reply(r);
      });
      return;
    }
    const response = this.ctx.registry.handle(message, this.conn);
    if (response) this.reply(response); // its events follow in the next flush
  }
}

/** A relayed `/ws/agent/<id>` connection: Pi-DE's side is pinged; a side that stops reading stalls it. */
export class ProxyPeer extends Peer implements BudgetHolder {
  readonly closed: Promise<void>;
  private readonly proxy: AgentProxy;

  constructor(
    private readonly name: string,
    log: (line: string) => void,
    start: (onPiDe: () => void) => AgentProxy,
  ) {
    super(log);
    this.proxy = start(() => (this.answeredPing = true));
    this.closed = this.proxy.closed;
  }

  label(): string {
    return this.name;
  }

  unsent(): number {
    const s = this.proxy.stats();
    return s.clientBuffered + s.agentBuffered;
  }

  freeable(): number {
    return this.unsent();
  }

  stats(): ProxyStats {
    return this.proxy.stats();
  }

  terminate(): void {
    this.proxy.terminate();
  }

  protected sendPing(): boolean {
    return this.proxy.ping();
  }

  protected closeGently(code: number, reason: string): void {
    this.proxy.close(code, reason);
  }

  /** One side is not read because the other does not read what is sent to it. */
  protected notReading(): boolean {
    const s = this.proxy.stats();
    return s.clientPaused || s.agentPaused;
  }

  /** Only a relaying proxy counts (a connecting one is bounded by its connect timeout). */
  protected stallCounts(): boolean {
    return this.proxy.stats().state === 'relaying';
  }

  protected stalled(intervalMs: number): string {
    const side = this.proxy.stats().clientPaused ? 'the agent' : 'Pi-DE';
    return `serve: an agent proxy connection: ${side} did not read for over ${intervalMs} ms: terminated`;
  }

  protected silent(): string {
    return 'serve: an agent proxy connection did not answer a ping: terminated';
  }

  /** Ticks only while relaying: a connecting or closing proxy is neither pinged nor terminated here. */
  override tick(intervalMs: number): void {
    if (this.proxy.stats().state === 'relaying') super.tick(intervalMs);
  }
}

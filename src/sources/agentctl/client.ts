// The agentctl adapter (protocols.md §3). Connected: the daemon's socket, newline-delimited JSON,
// polled with `session.list {all: true}` and `lock.list` (the daemon pushes nothing). Polling is
// not free and not read-only: every session.list asks each agent adapter (up to 5 s each) and
// marks dead sessions stopped, so the pace is adaptive (poll-pace.ts): every 2 s while something
// changes or a problem is shown, every 10 s once steady. Down: its state.json and locks.json,
// read-only, and eviction unavailable, saying why. Eviction goes through `session.prune` (it marks
// every dead record stopped and drops every dead auto-lock at once, deleting nothing: the daemon
// offers nothing finer) and `lock.release` for manual locks (it answers `null`); never
// `session.stop`, which can kill a live process. The daemon answers errors with code "ERR", and a
// malformed line not at all. Its own liveness checks count EPERM as dead; ghostwatch does not.

import { randomUUID } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { EvictionAction } from '../../core/evict-plan.js';
import { sanitize } from '../../core/sanitize.js';
import { Backoff } from '../backoff.js';
import { FirstSeen } from '../first-seen.js';
import { RpcTable } from '../rpc.js';
import { SnapshotHolder } from '../snapshot-holder.js';
import { DEFAULT_CALM_READS, DEFAULT_FAST_POLL_MS, PollPace } from '../poll-pace.js';
import { realTimers, type RegistryAnswer, type Source, type SourceTimers } from '../types.js';
import { describe, evicted, type Lists } from './prune-outcome.js';
import { readStateFiles } from './state-files.js';
import { entriesOf, isManualLock, parseReply, sessionListOf } from './wire.js';

export interface AgentctlOptions {
  readonly name?: string;
  /** Default ~/.agentctl/agentctl.sock; state.json and locks.json are read beside it. */
  readonly socketPath: string;
  /** This host: the daemon and its agents run here. */
  readonly host: string;
  /** Between reads while something changes or a problem is shown. Default 2 s. */
  readonly pollIntervalMs?: number;
  /** Between reads once steady (DEFAULT_CALM_READS reads found nothing new). Default 5 × pollIntervalMs (10 s). */
  readonly slowPollIntervalMs?: number;
  /** The poll and reconnect timers; the process's own by default. */
  readonly timers?: SourceTimers;
  /** session.list fans out to every agent adapter (up to 5 s each in agentctl), so not too short. */
  readonly requestTimeoutMs?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** For the reconnect jitter; Math.random by default. */
  readonly random?: () => number;
  /** A reply line longer than this closes the connection (a broken or hostile daemon). */
  readonly maxLineBytes?: number;
  readonly now?: () => number;
}

/** session.prune marks records stopped (deleting nothing: state.json only grows) and drops auto-locks; "dead" by agentctl's check, which counts EPERM as dead. */
export const PRUNE_NOTE =
  "agentctl prunes every dead record at once: session.prune marks every session whose pid is dead stopped and drops every auto-lock whose pid is dead, not only these (agentctl counts another user's process as dead)";
const FILES_READ_ONLY =
  'the agentctl daemon is not running: its state.json and locks.json are read-only to ghostwatch (agentctl rewrites them when it starts)';

export class AgentctlSource extends SnapshotHolder implements Source {
  private readonly opts: Required<Omit<AgentctlOptions, 'name' | 'random' | 'backoffInitialMs' | 'backoffMaxMs' | 'slowPollIntervalMs' | 'timers'>>;
  private readonly timers: SourceTimers;
  private readonly pace: PollPace;
  /** Timers' time: when the last read ended, and when the next one is due (undefined: none armed). */
  private lastReadAt = 0;
  private pollDue: number | undefined;
  /** What the pace counts as a change: ids, statuses, pids and locks (not tokens or costs). */
  private lastShape = '';
  private readonly dir: string;
  private readonly firstSeen = new FirstSeen();
  private socket: Socket | undefined;
  private connected = false;
  private buffer = '';
  private readonly rpc: RpcTable<unknown>;
  private readonly backoff: Backoff;
  private stopped = true;
  private pollTimer: unknown;
  private reconnectTimer: unknown;
  private polling: Promise<void> | undefined;
  /** Polls asked for and not yet finished (a re-sync queues behind the one under way). */
  private inFlight = 0;
  /** The raw text of the last lists read, to tell a changed registry from an unchanged one. */
  private lastText = '';
  private lists: Lists = { sessions: [], claims: [] };
  /** state.json and locks.json as last read (mtime and size), read again only when changed. */
  private fileStamp = '';
  private fileWarnings: string[] = [];

  constructor(options: AgentctlOptions) {
    super(options.name ?? 'agentctl', options.socketPath, options.now ?? Date.now);
    this.opts = {
      socketPath: options.socketPath,
      host: options.host,
      pollIntervalMs: options.pollIntervalMs ?? DEFAULT_FAST_POLL_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? 8_000,
      maxLineBytes: options.maxLineBytes ?? 32 * 1024 * 1024,
      now: this.now,
    };
    this.timers = options.timers ?? realTimers;
    this.pace = new PollPace({
      fastMs: this.opts.pollIntervalMs,
      slowMs: options.slowPollIntervalMs ?? 5 * this.opts.pollIntervalMs,
      calmReads: DEFAULT_CALM_READS,
    });
    this.backoff = new Backoff({ initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs, random: options.random });
    this.rpc = new RpcTable<unknown>({
      timeoutMs: this.opts.requestTimeoutMs,
      timeoutMessage: (method, ms) => `agentctl did not answer ${method} within ${ms / 1000} s`,
      onTimeout: () => this.counters.requestTimeouts++,
      newId: randomUUID,
    });
    this.dir = dirname(options.socketPath);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelPoll();
    if (this.reconnectTimer !== undefined) this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    this.drop('stopped');
    await this.polling?.catch(() => undefined);
    this.setStatus('stopped');
  }

  async resync(): Promise<void> {
    if (this.connected) await this.poll();
    else await this.readFiles();
  }

  /** The outcome's error quotes the daemon (its message, code, a record's status): sanitized here. */
  async evict(action: EvictionAction): Promise<RegistryAnswer> {
    const outcome = await this.evictNow(action);
    return outcome.outcome === 'refused' || outcome.outcome === 'failed' ? { ...outcome, error: sanitize(outcome.error, 300) } : outcome;
  }

  private async evictNow(action: EvictionAction): Promise<RegistryAnswer> {
    if (!this.connected) return { outcome: 'failed', error: FILES_READ_ONLY };
    const before = this.lists;
    try {
      if (action.type === 'deregister') {
        const entry = before.sessions.find((s) => s.id === action.id);
        if (!entry) return { outcome: 'already-gone' };
        const pruned = await this.request('session.prune', {});
        await this.poll();
        if (this.lists.sessions.some((s) => s.id === action.id)) {
          return { outcome: 'refused', error: `agentctl kept it: session.prune removes only records whose pid it finds dead (${describe(entry)})` };
        }
        return evicted(before, this.lists, { kind: 'session', id: action.id }, pruned);
      }
      const lock = before.claims.find((c) => c.resource === action.resource);
      if (!lock) return { outcome: 'already-gone' };
      let answer: unknown;
      if (isManualLock(lock.raw)) answer = await this.request('lock.release', { directory: action.resource });
      else answer = await this.request('session.prune', {});
      await this.poll();
      if (this.lists.claims.some((c) => c.resource === action.resource)) {
        const why = isManualLock(lock.raw) ? 'lock.release did not remove it' : 'session.prune removes only auto-locks whose pid it finds dead';
        return { outcome: 'refused', error: `agentctl kept the lock: ${why}` };
      }
      return evicted(before, this.lists, { kind: 'claim', id: action.resource }, isManualLock(lock.raw) ? undefined : answer);
    } catch (error) {
      const message = (error as Error).message;
      return (error as { daemon?: boolean }).daemon ? { outcome: 'refused', error: message } : { outcome: 'failed', error: message };
    }
  }

  // ------------------------------------------------------------ the socket

  private connect(): void {
    if (this.stopped) return;
    if (this.currentStatus() === 'stopped') this.setStatus('connecting');
    const socket = createConnection(this.opts.socketPath);
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      if (socket !== this.socket) return;
      this.connected = true;
      this.backoff.reset();
      this.buffer = '';
      this.tick(socket);
    });
    socket.on('data', (chunk: string) => this.onData(socket, chunk));
    socket.on('error', (error) => {
      if (socket === this.socket) this.lostDaemon(error.message);
    });
    socket.on('close', () => {
      if (socket === this.socket) this.lostDaemon('the daemon closed the connection');
    });
  }

  /**
   * One read, then the next one armed at the pace's delay after it ended (one read at a time:
   * a slow daemon, whose session.list asks every agent adapter, never gets a queue of them).
   */
  private tick(socket: Socket): void {
    this.pollDue = undefined;
    const read = this.inFlight > 0 ? (this.polling ?? Promise.resolve()) : this.poll();
    read.then(
      () => {
        if (socket !== this.socket || !this.connected) return;
        this.setStatus('connected', '', this.opts.socketPath);
        this.setEviction({ available: true, note: PRUNE_NOTE });
      },
      (error: Error) => {
        // Connected but not answering sensibly: say so, keep the last lists, keep asking.
        if (socket === this.socket && this.connected) this.setStatus('unreachable', error.message, this.opts.socketPath);
        this.pace.read(true);
      },
    ).finally(() => {
      if (this.stopped || socket !== this.socket || !this.connected) return;
      this.lastReadAt = this.timers.now();
      this.armPoll(socket, this.lastReadAt + this.pace.delay());
    });
  }

  private armPoll(socket: Socket, due: number): void {
    this.cancelPoll();
    this.pollDue = due;
    this.pollTimer = this.timers.setTimeout(() => {
      this.pollTimer = undefined;
      this.tick(socket);
    }, Math.max(0, due - this.timers.now()));
  }

  private cancelPoll(): void {
    if (this.pollTimer !== undefined) this.timers.clearTimeout(this.pollTimer);
    this.pollTimer = this.pollDue = undefined;
  }

  /** A problem shown makes a slow pace fast at once: the next read moves up to the fast delay after the last. */
  showProblems(shown: boolean): void {
    if (!this.pace.showProblems(shown)) return;
    const socket = this.socket;
    if (!socket || !this.connected || this.pollDue === undefined) return;
    const due = Math.max(this.timers.now(), this.lastReadAt + this.pace.fastMs);
    if (due < this.pollDue) this.armPoll(socket, due);
  }

  /** The daemon is gone (or was never there): fall back to its files and try again later. */
  private lostDaemon(why: string): void {
    this.drop(why);
    if (this.stopped) return;
    void this.readFiles().then((found) => {
      if (this.stopped || this.connected) return;
      if (found === 'absent') this.setStatus('absent', `nothing at ${this.opts.socketPath} (${why})`);
      else if (found === 'read') this.setStatus('files-only', `daemon down (${why}): reading its files`, this.dir);
      else this.setStatus('unreachable', `${why}; ${found}`);
      this.setEviction({ available: false, why: FILES_READ_ONLY, note: PRUNE_NOTE });
    });
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.reconnectTimer = undefined;
      this.reconnects++;
      this.connect();
    }, this.backoff.next());
  }

  private drop(why: string): void {
    this.connected = false;
    this.cancelPoll();
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    this.rpc.failAll(`agentctl daemon: ${why}`);
  }

  private onData(socket: Socket, chunk: string): void {
    if (socket !== this.socket) return;
    this.buffer += chunk;
    if (this.buffer.length > this.opts.maxLineBytes) {
      this.counters.oversize++;
      this.lostDaemon(`a reply longer than ${this.opts.maxLineBytes} bytes`);
      return;
    }
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (line.trim() === '') continue;
      this.counters.frames++;
      const reply = parseReply(line);
      if (reply.kind === 'bad') {
        if (reply.why === 'not JSON') this.counters.invalidJson++;
        else this.counters.badFrames++;
        continue;
      }
      const matched =
        reply.kind === 'error'
          ? this.rpc.answer(reply.id, { error: Object.assign(new Error(`agentctl: ${reply.message} (${reply.code})`), { daemon: true }) })
          : this.rpc.answer(reply.id, { answer: reply.result });
      if (!matched) this.counters.badFrames++;
    }
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const socket = this.socket;
    if (!socket || !this.connected) return Promise.reject(new Error('the agentctl daemon is not connected'));
    return this.rpc.call(method, (id) => socket.write(`${JSON.stringify({ id, method, params })}\n`));
  }

  // ------------------------------------------------------------ reading

  /** One read of both lists; a read already under way is shared, then one more starts (a re-sync must see now). */
  private poll(): Promise<void> {
    this.inFlight++;
    const run = (this.polling ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.pollOnce())
      .finally(() => this.inFlight--);
    this.polling = run;
    return run;
  }

  /** One read of both lists; the pace counts it as a change when a record or lock came, went or changed status or pid. */
  private async pollOnce(): Promise<void> {
    if (!this.connected) throw new Error('the agentctl daemon is not connected');
    const [listed, locks] = await Promise.all([this.request('session.list', { all: true }), this.request('lock.list', {})]);
    const sessions = sessionListOf(listed);
    if (!sessions || !Array.isArray(locks)) {
      this.counters.badFrames++;
      throw new Error('agentctl answered session.list or lock.list in an unknown shape');
    }
    this.take(sessions.records, locks, sessions.warnings);
    this.pace.read(this.shapeChanged(sessions.records, locks));
  }

  /** Tokens and costs of a working agent change on every read: only ids, statuses, pids and locks count. */
  private shapeChanged(records: readonly unknown[], locks: readonly unknown[]): boolean {
    const parts: unknown[] = [locks];
    for (const r of records) {
      const o = typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : {};
      parts.push(o.id, o.status, o.pid);
    }
    const shape = JSON.stringify(parts);
    if (shape === this.lastShape) return false;
    this.lastShape = shape;
    return true;
  }

  /** Turn records into entries, unless the registry says exactly what it said last time. */
  private take(records: readonly unknown[], locks: readonly unknown[], warnings: readonly string[]): void {
    const textNow = JSON.stringify([records, locks]);
    if (textNow === this.lastText) {
      this.applyRead({ warnings });
      return;
    }
    this.lastText = textNow;
    const now = this.now();
    const { sessions, claims, seen } = entriesOf(records, locks, this.name, this.opts.host, (id, pid) => this.firstSeen.at(id, pid, now));
    this.counters.badEntries += records.length + locks.length - sessions.length - claims.length;
    this.firstSeen.keepOnly(seen);
    this.lists = { sessions, claims };
    const dropped = records.length + locks.length - sessions.length - claims.length;
    this.applyRead({ sessions, claims, warnings: dropped > 0 ? [...warnings, `${dropped} record${dropped === 1 ? '' : 's'} without a usable id or directory (or repeated) skipped`] : warnings });
  }

  /** state.json and locks.json, when the daemon is down (read only when they changed). */
  private async readFiles(): Promise<'read' | 'absent' | string> {
    const read = await readStateFiles(this.dir, this.fileStamp);
    if (read.kind === 'absent') return 'absent';
    if (read.kind === 'missing') return read.why;
    if (read.kind === 'same') {
      this.applyRead({ warnings: this.fileWarnings });
      return 'read';
    }
    if (this.connected) return 'read'; // the daemon came back meanwhile: its answer wins
    this.fileStamp = read.stamp;
    this.fileWarnings = read.warnings;
    this.lastText = '';
    this.take(read.records, read.locks, read.warnings);
    return 'read';
  }
}

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
// A daemon whose process is stopped (SIGSTOP) is named in the status and asked nothing more until
// it runs again (daemon-process.ts). The connection (framing, ids, closing without crashing the
// daemon) is daemon-connection.ts; the manual locks' setters lock-holders.ts; the pace, the
// outcome and the wire have files of their own.

import { dirname } from 'node:path';
import type { EvictionAction } from '../../core/evict-plan.js';
import { sanitize } from '../../core/sanitize.js';
import { Backoff } from '../../plumbing/backoff.js';
import { FirstSeen } from '../first-seen.js';
import { realClock, type Timers } from '../../plumbing/clock.js';
import { SnapshotHolder } from '../snapshot-holder.js';
import { DEFAULT_CALM_READS, DEFAULT_FAST_POLL_MS, PollPace } from '../poll-pace.js';
import type { RegistryAnswer, Source } from '../types.js';
import { describe, prunedCount, prunedText, sideEffects, targetRemoved, type Lists, type Target } from './prune-outcome.js';
import { DaemonConnection } from './daemon-connection.js';
import { DAEMON_STOPPED, DaemonProcess } from './daemon-process.js';
import { LockHolders } from './lock-holders.js';
import { readStateFiles } from './state-files.js';
import { claimKeyOf, entriesOf, isManualLock, sessionListOf } from './wire.js';

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
  readonly timers?: Timers;
  /** session.list fans out to every agent adapter (up to 5 s each in agentctl), so not too short. */
  readonly requestTimeoutMs?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** For the reconnect jitter; Math.random by default. */
  readonly random?: () => number;
  /** A reply line longer than this closes the connection (a broken or hostile daemon). */
  readonly maxLineBytes?: number;
  /** stop() waits this long for the replies still due (default 1 s); the socket waits up to `lingerMs`. */
  readonly closeWaitMs?: number;
  /**
   * The longest a stopped connection stays open for replies still due before it is ended anyway,
   * while the daemon runs (default 15 s); while its process is stopped (SIGSTOP) it stays open.
   */
  readonly lingerMs?: number;
  /** How long a session.status answer for a manual lock's setter is kept before it is asked again. */
  readonly holderLookupMs?: number;
  readonly now?: () => number;
}

/** session.prune marks records stopped (deleting nothing: state.json only grows) and drops auto-locks; "dead" by agentctl's check, which counts EPERM as dead. */
export const PRUNE_NOTE =
  "agentctl prunes every dead record at once: session.prune marks every session whose pid is dead stopped and drops every auto-lock whose pid is dead, not only these (agentctl counts another user's process as dead)";
/** Before the daemon's first answer: nothing to prune through yet (check --json says so, as for every source). */
const NOT_READ_YET = "no answer from agentctl's daemon yet (eviction is its session.prune)";
const FILES_READ_ONLY =
  'the agentctl daemon is not running: its state.json and locks.json are read-only to ghostwatch (agentctl rewrites them when it starts)';

export class AgentctlSource extends SnapshotHolder implements Source {
  private readonly opts: Required<Omit<AgentctlOptions, 'name' | 'random' | 'backoffInitialMs' | 'backoffMaxMs' | 'slowPollIntervalMs' | 'timers'>>;
  private readonly timers: Timers;
  private readonly pace: PollPace;
  /** Timers' time: when the last read ended, and when the next one is due (undefined: none armed). */
  private lastReadAt = 0;
  private pollDue: number | undefined;
  /** What the pace counts as a change: ids, statuses, pids and locks (not tokens or costs). */
  private lastShape = '';
  private readonly dir: string;
  private readonly firstSeen = new FirstSeen();
  private conn: DaemonConnection | undefined;
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
  private readonly holders: LockHolders;
  /** The daemon's process, asked about when it leaves requests unanswered. */
  private readonly daemon: DaemonProcess;

  constructor(options: AgentctlOptions) {
    super(options.name ?? 'agentctl', options.socketPath, options.now ?? Date.now);
    this.opts = {
      socketPath: options.socketPath,
      host: options.host,
      pollIntervalMs: options.pollIntervalMs ?? DEFAULT_FAST_POLL_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? 8_000,
      maxLineBytes: options.maxLineBytes ?? 32 * 1024 * 1024,
      holderLookupMs: options.holderLookupMs ?? 30_000,
      closeWaitMs: options.closeWaitMs ?? 1_000,
      lingerMs: options.lingerMs ?? 15_000,
      now: this.now,
    };
    this.timers = options.timers ?? realClock;
    this.pace = new PollPace({
      fastMs: this.opts.pollIntervalMs,
      slowMs: options.slowPollIntervalMs ?? 5 * this.opts.pollIntervalMs,
      calmReads: DEFAULT_CALM_READS,
    });
    this.backoff = new Backoff({ initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs, random: options.random });
    this.dir = dirname(options.socketPath);
    this.holders = new LockHolders(this.opts.holderLookupMs);
    this.daemon = new DaemonProcess(options.socketPath);
    this.setEviction({ available: false, why: NOT_READ_YET, note: PRUNE_NOTE });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  /**
   * Stops asking. The connection is ended only once every request on it is answered (bounded):
   * agentctl has no 'error' handler on its client sockets, so closing while a reply is in flight
   * crashes the daemon (protocols.md §3). Resolves after the replies or `closeWaitMs`; the socket
   * itself may linger (keeping the process alive) up to `lingerMs`, then it is ended gently.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelPoll();
    if (this.reconnectTimer !== undefined) this.timers.clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const closed = this.drop('stopped', 'gently');
    await this.polling?.catch(() => undefined);
    let waited: NodeJS.Timeout | undefined;
    await Promise.race([closed, new Promise<void>((resolve) => (waited = setTimeout(resolve, this.opts.closeWaitMs)))]);
    clearTimeout(waited);
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
    if (action.type === 'deregister') {
      const entry = before.sessions.find((s) => s.id === action.id);
      if (!entry) return { outcome: 'already-gone' };
      return this.send('session.prune', {}, before, { kind: 'session', id: action.id }, {
        kept: `agentctl kept it: session.prune removes only records whose pid it finds dead (${describe(entry)})`,
        sideEffects: true,
      });
    }
    // Several locks may share the directory: the action names which (its key), else the first there.
    const lock = before.claims.find((c) => (action.claim === undefined ? c.resource === action.resource : claimKeyOf(c) === action.claim));
    if (!lock) return { outcome: 'already-gone' };
    const target = { kind: 'claim', key: claimKeyOf(lock) } as const;
    if (isManualLock(lock.raw)) {
      return this.send('lock.release', { directory: lock.resource }, before, target, { kept: 'agentctl kept the lock: lock.release did not remove it', sideEffects: false });
    }
    return this.send('session.prune', {}, before, target, {
      kept: 'agentctl kept the lock: session.prune removes only auto-locks whose pid it finds dead',
      sideEffects: true,
    });
  }

  /**
   * One eviction request, then a fresh read whatever it answered: the outcome comes from the
   * lists before and after. For a prune, everything else it changed (it acts on every dead
   * record and lock at once, even when it keeps the one asked for or its answer never came) is
   * returned in `alsoRemoved`, to be audited and reported.
   */
  private async send(method: string, params: Record<string, unknown>, before: Lists, target: Target, opts: { kept: string; sideEffects: boolean }): Promise<RegistryAnswer> {
    let answer: unknown;
    let failure: { message: string; daemon: boolean } | undefined;
    try {
      answer = await this.request(method, params);
    } catch (error) {
      failure = { message: (error as Error).message, daemon: (error as { daemon?: boolean }).daemon === true };
    }
    let after: Lists | undefined;
    let unread: string | undefined;
    try {
      await this.poll();
      after = this.lists;
    } catch (error) {
      unread = (error as Error).message;
    }
    if (after && targetRemoved(before, after, target) && (failure?.daemon === true || prunedCount(answer) === 0)) {
      // Gone, but not by this request: the daemon refused it or pruned nothing. Another ghostwatch
      // (or agentctl's own sweep) took it between our read and the request; nothing is ours to claim.
      const said = failure ? sanitize(failure.message, 200) : 'agentctl pruned 0 records';
      return { outcome: 'already-gone', detail: `${said}: it was gone before this request (another ghostwatch or agentctl itself removed it)` };
    }
    const also = after && opts.sideEffects ? sideEffects(before, after, target) : [];
    if (after && targetRemoved(before, after, target)) {
      const late = failure ? `${method} failed (${failure.message}), yet the daemon's lists show it done` : undefined;
      const detail = [late, method === 'session.prune' ? prunedText(answer) : undefined].filter(Boolean).join('; ');
      return { outcome: 'evicted', detail: detail || undefined, alsoRemoved: also };
    }
    if (failure) return { outcome: failure.daemon ? 'refused' : 'failed', error: failure.message, alsoRemoved: also };
    if (!after) return { outcome: 'failed', error: `${method} was sent, but the lists could not be read after it: ${unread ?? 'unknown'}`, alsoRemoved: also };
    return { outcome: 'refused', error: opts.kept, alsoRemoved: also };
  }

  // ------------------------------------------------------------ the socket

  private connect(): void {
    if (this.stopped) return;
    if (this.currentStatus() === 'stopped') this.setStatus('connecting');
    const conn: DaemonConnection = new DaemonConnection({
      socketPath: this.opts.socketPath,
      requestTimeoutMs: this.opts.requestTimeoutMs,
      maxLineBytes: this.opts.maxLineBytes,
      lingerMs: this.opts.lingerMs,
      daemonStopped: () => this.daemon.stopped(),
      onKeptForStoppedDaemon: () => {
        if (this.stopped) this.setStatus('stopped', `${DAEMON_STOPPED}: its socket stays open until it is continued`);
      },
      counters: this.counters,
      onConnect: () => {
        if (conn !== this.conn) return;
        this.backoff.reset();
        void this.tick(conn);
      },
      onLost: (why, close) => {
        if (conn === this.conn) this.lostDaemon(why, close);
      },
    });
    this.conn = conn;
  }

  private get connected(): boolean {
    return this.conn?.connected === true;
  }

  /**
   * One read, then the next one armed at the pace's delay after it ended (one read at a time:
   * a slow daemon, whose session.list asks every agent adapter, never gets a queue of them).
   * While requests are unanswered and the daemon's process is stopped, none is added: it says so.
   */
  private async tick(conn: DaemonConnection): Promise<void> {
    this.pollDue = undefined;
    let failed: string | undefined;
    try {
      if (this.inFlight > 0) await this.polling;
      else if (conn.unanswered > 0 && (await this.daemon.stopped())) failed = DAEMON_STOPPED;
      else await this.poll();
    } catch (error) {
      failed = conn.unanswered > 0 && (await this.daemon.stopped()) ? DAEMON_STOPPED : (error as Error).message;
    }
    const current = conn === this.conn && this.connected;
    if (failed === undefined && current) {
      this.setStatus('connected', '', this.opts.socketPath);
      this.setEviction({ available: true, note: PRUNE_NOTE });
    } else if (failed !== undefined) {
      // Connected but not answering sensibly: say so, keep the last lists, keep asking.
      if (current) this.notAnswering(failed);
      this.pace.read(true);
    }
    if (this.stopped || !current) return;
    this.lastReadAt = this.timers.now();
    this.armPoll(conn, this.lastReadAt + this.pace.delay());
  }

  /**
   * Connected, and the daemon does not answer: `why` is the status's text. A stopped daemon begins
   * an outage even before a first read (the header shows an outage's cause, since when).
   */
  private notAnswering(why: string): void {
    this.setStatus('unreachable', why, this.opts.socketPath);
    if (why === DAEMON_STOPPED && this.currentOutage().downSince === undefined) {
      this.setOutage({ downSince: this.now() });
      this.changed();
    }
  }

  private armPoll(conn: DaemonConnection, due: number): void {
    this.cancelPoll();
    this.pollDue = due;
    this.pollTimer = this.timers.setTimeout(() => {
      this.pollTimer = undefined;
      void this.tick(conn);
    }, Math.max(0, due - this.timers.now()));
  }

  private cancelPoll(): void {
    if (this.pollTimer !== undefined) this.timers.clearTimeout(this.pollTimer);
    this.pollTimer = this.pollDue = undefined;
  }

  /** A problem shown makes a slow pace fast at once: the next read moves up to the fast delay after the last. */
  showProblems(shown: boolean): void {
    if (!this.pace.showProblems(shown)) return;
    const conn = this.conn;
    if (!conn || !this.connected || this.pollDue === undefined) return;
    const due = Math.max(this.timers.now(), this.lastReadAt + this.pace.fastMs);
    if (due < this.pollDue) this.armPoll(conn, due);
  }

  /** The daemon is gone (or was never there, or is not to be read any more): fall back to its files and try again later. */
  private lostDaemon(why: string, close: 'gently' | 'now' = 'now'): void {
    void this.drop(why, close);
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

  /** Stop using the connection; 'gently' ends it only once the replies still due came (daemon-connection.ts). */
  private drop(why: string, close: 'gently' | 'now'): Promise<void> {
    this.cancelPoll();
    const conn = this.conn;
    this.conn = undefined;
    return conn ? conn.drop(why, close) : Promise.resolve();
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.conn) return Promise.reject(new Error('the agentctl daemon is not connected'));
    return this.conn.request(method, params);
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
    const holders = await this.holders.lookUp(sessions.records, locks, this.now(), (method, params) => this.request(method, params));
    this.take([...sessions.records, ...holders], locks, sessions.warnings);
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
    const { sessions, claims, seen } = entriesOf(records, locks, this.name, this.opts.host, (id, pid) => this.firstSeen.at(id, pid, now), now);
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

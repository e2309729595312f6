// The agentctl adapter (protocols.md §3). Connected: the daemon's socket, newline-delimited JSON,
// polled with `session.list {all: true}` and `lock.list` (the daemon pushes nothing). Down: its
// state.json and locks.json, read-only, and eviction unavailable, saying why. Eviction goes
// through `session.prune` (every dead record at once: the daemon offers nothing finer) and
// `lock.release` for manual locks; never `session.stop`, which can kill a live process.

import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { createConnection, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fsErrorText, readBoundedSync } from '../../os/safe-file.js';
import type { EvictionAction } from '../../core/evict-plan.js';
import { sanitize } from '../../core/sanitize.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import { FirstSeen, SnapshotHolder } from '../base.js';
import type { AlsoRemoved, EvictOutcome, Source } from '../types.js';
import { isManualLock, parseReply, sessionListOf, stateFileRecords, toClaimEntry, toSessionEntry } from './wire.js';

export interface AgentctlOptions {
  readonly name?: string;
  /** Default ~/.agentctl/agentctl.sock; state.json and locks.json are read beside it. */
  readonly socketPath: string;
  /** This host: the daemon and its agents run here. */
  readonly host: string;
  readonly pollIntervalMs?: number;
  /** session.list fans out to every agent adapter (up to 5 s each in agentctl), so not too short. */
  readonly requestTimeoutMs?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** A reply line longer than this closes the connection (a broken or hostile daemon). */
  readonly maxLineBytes?: number;
  readonly now?: () => number;
}

export const PRUNE_NOTE = 'agentctl prunes every dead record at once: session.prune removes all sessions and auto-locks whose pid is dead, not only these';
const FILES_READ_ONLY =
  'the agentctl daemon is not running: its state.json and locks.json are read-only to ghostwatch (agentctl rewrites them when it starts)';

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface Lists {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

export class AgentctlSource extends SnapshotHolder implements Source {
  private readonly opts: Required<Omit<AgentctlOptions, 'name'>>;
  private readonly dir: string;
  private readonly firstSeen = new FirstSeen();
  private socket: Socket | undefined;
  private connected = false;
  private buffer = '';
  private readonly pending = new Map<string, Pending>();
  private stopped = true;
  private attempt = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
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
      pollIntervalMs: options.pollIntervalMs ?? 2_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 8_000,
      backoffInitialMs: options.backoffInitialMs ?? 250,
      backoffMaxMs: options.backoffMaxMs ?? 5_000,
      maxLineBytes: options.maxLineBytes ?? 32 * 1024 * 1024,
      now: this.now,
    };
    this.dir = dirname(options.socketPath);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.pollTimer = this.reconnectTimer = undefined;
    this.drop('stopped');
    await this.polling?.catch(() => undefined);
    this.setStatus('stopped');
  }

  async resync(): Promise<void> {
    if (this.connected) await this.poll();
    else await this.readFiles();
  }

  /** The outcome's error quotes the daemon (its message, code, a record's status): sanitized here. */
  async evict(action: EvictionAction): Promise<EvictOutcome> {
    const outcome = await this.evictNow(action);
    return outcome.outcome === 'refused' || outcome.outcome === 'failed' ? { ...outcome, error: sanitize(outcome.error, 300) } : outcome;
  }

  private async evictNow(action: EvictionAction): Promise<EvictOutcome> {
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
      this.attempt = 0;
      this.buffer = '';
      const tick = (): void => {
        // A slow daemon (session.list asks every agent adapter) must not pile up polls.
        if (this.inFlight > 0) return;
        this.poll().then(
          () => {
            if (socket !== this.socket || !this.connected) return;
            this.setStatus('connected', '', this.opts.socketPath);
            this.setEviction({ available: true, note: PRUNE_NOTE });
          },
          (error: Error) => {
            // Connected but not answering sensibly: say so, keep the last lists, keep asking.
            if (socket === this.socket && this.connected) this.setStatus('unreachable', error.message, this.opts.socketPath);
          },
        );
      };
      tick();
      this.pollTimer = setInterval(tick, this.opts.pollIntervalMs);
    });
    socket.on('data', (chunk: string) => this.onData(socket, chunk));
    socket.on('error', (error) => {
      if (socket === this.socket) this.lostDaemon(error.message);
    });
    socket.on('close', () => {
      if (socket === this.socket) this.lostDaemon('the daemon closed the connection');
    });
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
    const base = Math.min(this.opts.backoffMaxMs, this.opts.backoffInitialMs * 2 ** this.attempt);
    this.attempt++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.reconnects++;
      this.connect();
    }, base);
  }

  private drop(why: string): void {
    this.connected = false;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(`agentctl daemon: ${why}`));
    }
    this.pending.clear();
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
      const p = this.pending.get(reply.id);
      if (!p) {
        this.counters.badFrames++;
        continue;
      }
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      if (reply.kind === 'error') p.reject(Object.assign(new Error(`agentctl: ${reply.message} (${reply.code})`), { daemon: true }));
      else p.resolve(reply.result);
    }
  }

  private request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const socket = this.socket;
    if (!socket || !this.connected) return Promise.reject(new Error('the agentctl daemon is not connected'));
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.counters.requestTimeouts++;
        reject(new Error(`agentctl did not answer ${method} within ${this.opts.requestTimeoutMs / 1000} s`));
      }, this.opts.requestTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.write(`${JSON.stringify({ id, method, params })}\n`);
    });
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

  private async pollOnce(): Promise<void> {
    if (!this.connected) throw new Error('the agentctl daemon is not connected');
    const [listed, locks] = await Promise.all([this.request('session.list', { all: true }), this.request('lock.list', {})]);
    const sessions = sessionListOf(listed);
    if (!sessions || !Array.isArray(locks)) {
      this.counters.badFrames++;
      throw new Error('agentctl answered session.list or lock.list in an unknown shape');
    }
    this.take(sessions.records, locks, sessions.warnings);
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
    const sessions: SessionEntry[] = [];
    const seen = new Set<string>();
    for (const r of records) {
      const entry = toSessionEntry(r, this.name, this.opts.host, (id, pid) => this.firstSeen.at(id, pid, now));
      if (!entry || seen.has(entry.id)) {
        this.counters.badEntries++;
        continue;
      }
      seen.add(entry.id);
      sessions.push(entry);
    }
    this.firstSeen.keepOnly(seen);
    const claims: ClaimEntry[] = [];
    const dirs = new Set<string>();
    for (const l of locks) {
      const claim = toClaimEntry(l, this.name, this.opts.host, seen);
      if (!claim || dirs.has(claim.resource)) {
        this.counters.badEntries++;
        continue;
      }
      dirs.add(claim.resource);
      claims.push(claim);
    }
    this.lists = { sessions, claims };
    const dropped = records.length + locks.length - sessions.length - claims.length;
    this.applyRead({ sessions, claims, warnings: dropped > 0 ? [...warnings, `${dropped} record${dropped === 1 ? '' : 's'} without a usable id or directory (or repeated) skipped`] : warnings });
  }

  /**
   * state.json and locks.json, when the daemon is down. Read-only: agentctl writes them
   * atomically (tmp + rename), so a read sees a whole file or none.
   */
  private async readFiles(): Promise<'read' | 'absent' | string> {
    const statePath = join(this.dir, 'state.json');
    const locksPath = join(this.dir, 'locks.json');
    const [stateStat, locksStat] = await Promise.all([stat(statePath).catch(() => undefined), stat(locksPath).catch(() => undefined)]);
    if (!stateStat && !locksStat) {
      const dirThere = await stat(this.dir).then(() => true, () => false);
      return dirThere ? `no state.json or locks.json in ${this.dir}` : 'absent';
    }
    const stamp = `${stateStat?.mtimeMs}:${stateStat?.size}:${locksStat?.mtimeMs}:${locksStat?.size}`;
    if (stamp === this.fileStamp) {
      this.applyRead({ warnings: this.fileWarnings });
      return 'read';
    }
    const warnings: string[] = [];
    const state = await readJson(statePath, warnings);
    const locks = await readJson(locksPath, warnings);
    const records = state === undefined ? [] : stateFileRecords(state);
    if (state !== undefined && !records) warnings.push(`${statePath}: no "sessions" object`);
    if (locks !== undefined && !Array.isArray(locks)) warnings.push(`${locksPath}: not a list of locks`);
    if (this.connected) return 'read'; // the daemon came back meanwhile: its answer wins
    this.fileStamp = stamp;
    this.fileWarnings = warnings;
    this.lastText = '';
    this.take(records ?? [], Array.isArray(locks) ? locks : [], warnings);
    return 'read';
  }
}

/** state.json only grows (agentctl deletes nothing), but not past this. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

async function readJson(path: string, warnings: string[]): Promise<unknown> {
  let text: string;
  try {
    // Bounded, never through a symlink or into a FIFO: agentctl writes these by tmp + rename.
    text = readBoundedSync(path, MAX_FILE_BYTES, { noFollow: true }).toString('utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT') warnings.push(sanitize(`${path}: cannot read it (${fsErrorText(error)})`, 300));
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    warnings.push(`${path}: not valid JSON (${(error as Error).message})`);
    return undefined;
  }
}

function describe(entry: SessionEntry): string {
  return `status ${entry.status ?? 'unknown'}, pid ${entry.pid === undefined ? 'none' : String(entry.pid)}`;
}

/** The outcome of a prune or release: what it was asked to remove, and everything else that went with it. */
function evicted(before: Lists, after: Lists, target: { kind: 'session' | 'claim'; id: string }, pruneAnswer: unknown): EvictOutcome {
  const sessionsAfter = new Set(after.sessions.map((s) => s.id));
  const claimsAfter = new Set(after.claims.map((c) => c.resource));
  const also: AlsoRemoved[] = [];
  for (const s of before.sessions) {
    if (!sessionsAfter.has(s.id) && !(target.kind === 'session' && s.id === target.id)) also.push({ kind: 'session', id: s.id, raw: s.raw ?? s });
  }
  for (const c of before.claims) {
    if (!claimsAfter.has(c.resource) && !(target.kind === 'claim' && c.resource === target.id)) also.push({ kind: 'claim', id: c.resource, raw: c.raw ?? c });
  }
  const pruned = typeof pruneAnswer === 'object' && pruneAnswer !== null ? (pruneAnswer as { pruned?: unknown }).pruned : undefined;
  return {
    outcome: 'evicted',
    detail: typeof pruned === 'number' ? `agentctl pruned ${pruned} record${pruned === 1 ? '' : 's'}` : undefined,
    alsoRemoved: also,
  };
}

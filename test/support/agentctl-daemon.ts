// A test daemon speaking agentctl's socket protocol as protocols.md §3 documents it (the real
// v1.9.1 daemon's behaviour): one unix socket, newline-delimited JSON requests {id, method,
// params}, replies {id, result} or {id, error: {code: "ERR", message}}; a malformed line gets no
// reply. `session.list` answers a bare array; with `all: true` it lists every record an adapter
// reports (a claude transcript: `meta.projectDir`) whatever its status, and never a record
// agentctl itself marked stopped or error; `session.status {id}` still returns those;
// `session.prune` marks dead running/idle records of its own stopped (it deletes nothing, and
// leaves adapter-reported records alone) and drops auto-locks whose pid is dead; `lock.release`
// answers null and removes manual locks only. It keeps sessions and locks in memory and mirrors
// them to state.json / locks.json (tmp + rename, as agentctl does), so the file fallback reads
// what the daemon last had (adapter-reported records included, which the real state.json holds
// only for sessions agentctl launched or tracked). Knobs for the failure modes: delays, garbage lines, unanswered requests.
import { renameSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

export interface SessionRecord {
  id: string;
  adapter: string;
  status: string;
  startedAt: string;
  stoppedAt?: string;
  cwd?: string;
  pid?: number;
  meta: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Lock {
  directory: string;
  type: 'auto' | 'manual';
  pid?: number;
  sessionId?: string;
  lockedBy?: string;
  reason?: string;
  lockedAt: string;
}

export interface TestDaemonOptions {
  /** ~/.agentctl equivalent: the socket and the files live here. */
  readonly dir: string;
  /** Answer session.list with `{sessions, warnings}` (a shape ghostwatch also reads) instead of v1.9.1's bare array. */
  readonly wrappedList?: boolean;
}

/** agentctl's liveness check: every process.kill(pid, 0) of its source sits in a catch-all, so EPERM (another user's live process) counts as dead. */
function alive(pid: number | undefined): boolean {
  if (pid === undefined || !Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A record an agent adapter reports (a claude transcript) rather than one of state.json: it has `meta.projectDir`. */
function isDiscovered(s: SessionRecord): boolean {
  return typeof s.meta?.projectDir === 'string';
}

/** Statuses agentctl's session.list never lists again once it gave them to a record of state.json. */
const MARKED_OVER: ReadonlySet<string> = new Set(['stopped', 'error']);

export class TestAgentctlDaemon {
  readonly socketPath: string;
  sessions = new Map<string, SessionRecord>();
  locks: Lock[] = [];
  warnings: string[] = [];
  /** Every method called, in order. */
  readonly calls: string[] = [];
  /** Methods that get no answer at all (a hung daemon). */
  readonly unanswered = new Set<string>();
  /** Milliseconds before each reply (a daemon whose adapters are slow). */
  delayMs = 0;
  /** Milliseconds before the reply to these methods only; the request is handled when its reply goes. */
  readonly slow = new Map<string, number>();
  /** A line written before each reply. */
  garbage: string | undefined;
  private server: Server | undefined;
  private readonly conns = new Set<Socket>();

  constructor(private readonly opts: TestDaemonOptions) {
    this.socketPath = join(opts.dir, 'agentctl.sock');
  }

  async start(): Promise<void> {
    this.persist();
    const server = createServer((conn) => this.onConnection(conn));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.socketPath, () => resolve());
    });
  }

  /** Stop listening and cut every connection (the daemon dies); the files stay. */
  async stop(): Promise<void> {
    for (const c of this.conns) c.destroy();
    this.conns.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  addSession(record: Partial<SessionRecord> & { id: string }): void {
    this.sessions.set(record.id, { adapter: 'claude-code', status: 'running', startedAt: new Date().toISOString(), meta: {}, ...record });
    this.persist();
  }

  addLock(lock: Partial<Lock> & { directory: string }): void {
    this.locks.push({ type: 'auto', lockedAt: new Date().toISOString(), ...lock });
    this.persist();
  }

  /** state.json and locks.json, written atomically like agentctl's StateManager. */
  persist(): void {
    const state = { sessions: Object.fromEntries(this.sessions), version: 1 };
    writeFileSync(join(this.opts.dir, 'state.json.tmp'), JSON.stringify(state));
    renameSync(join(this.opts.dir, 'state.json.tmp'), join(this.opts.dir, 'state.json'));
    writeFileSync(join(this.opts.dir, 'locks.json.tmp'), JSON.stringify(this.locks));
    renameSync(join(this.opts.dir, 'locks.json.tmp'), join(this.opts.dir, 'locks.json'));
  }

  private onConnection(conn: Socket): void {
    this.conns.add(conn);
    conn.on('close', () => this.conns.delete(conn));
    conn.on('error', () => undefined);
    let buffer = '';
    conn.setEncoding('utf8');
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        let req: { id: string; method: string; params?: Record<string, unknown> };
        try {
          req = JSON.parse(line) as typeof req;
        } catch {
          continue;
        }
        this.calls.push(req.method);
        if (this.unanswered.has(req.method)) continue;
        const reply = (): void => {
          if (conn.destroyed) return;
          if (this.garbage !== undefined) conn.write(`${this.garbage}\n`);
          try {
            conn.write(`${JSON.stringify({ id: req.id, result: this.handle(req.method, req.params ?? {}) })}\n`);
          } catch (error) {
            conn.write(`${JSON.stringify({ id: req.id, error: { code: 'ERR', message: (error as Error).message } })}\n`);
          }
        };
        const delay = this.slow.get(req.method) ?? this.delayMs;
        if (delay > 0) setTimeout(reply, delay);
        else reply();
      }
    });
  }

  private handle(method: string, params: Record<string, unknown>): unknown {
    switch (method) {
      case 'session.list': {
        // Pinned from agentctl 5923ee3 (v1.9.1), src/daemon/server.ts `session.list` and
        // src/daemon/session-tracker.ts `reconcileAndEnrich`: the list is (1) every session each
        // adapter's discover() returns, with the adapter's own status — the claude adapter reports a
        // finished transcript `stopped` (stoppedAt = its last write, no pid) with
        // nativeMetadata {projectDir}, which becomes `meta` — plus (2) the records of state.json
        // (the ones agentctl launched or tracked) that are still running or idle; a record of
        // state.json it marked stopped or error is never listed again, even with all: true (the
        // adapter's report wins when both have an id). Without all: true, running and idle only.
        // Here a record with `meta.projectDir` stands for (1), any other for (2).
        const listed = [...this.sessions.values()].filter((s) =>
          params.all === true ? isDiscovered(s) || !MARKED_OVER.has(s.status) : s.status === 'running' || s.status === 'idle',
        );
        return this.opts.wrappedList ? { sessions: listed, warnings: this.warnings } : listed;
      }
      case 'session.status': {
        // Exact id, else a unique prefix (agentctl's getSession); stopped records included.
        const id = String(params.id);
        const exact = this.sessions.get(id);
        if (exact) return exact;
        const byPrefix = [...this.sessions.values()].filter((s) => s.id.startsWith(id));
        if (byPrefix.length === 1) return byPrefix[0];
        throw new Error(`Session not found: ${id}`);
      }
      case 'lock.list':
        return this.locks;
      case 'session.prune': {
        // Marks, deletes nothing: state.json only grows. Records without a pid are left alone, and
        // so are the ones an adapter reports (agentctl's cleanupDeadLaunches walks state.json only).
        let pruned = 0;
        for (const [id, s] of this.sessions) {
          if ((s.status === 'running' || s.status === 'idle') && !isDiscovered(s) && s.pid && !alive(s.pid)) {
            this.sessions.set(id, { ...s, status: 'stopped', stoppedAt: new Date().toISOString() });
            pruned++;
          }
        }
        // N counts the dead pids of the auto-locks dropped, not the locks (agentctl's cleanupDeadLocks).
        const deadPids = new Set(this.locks.filter((l) => l.type === 'auto' && l.pid !== undefined && !alive(l.pid)).map((l) => l.pid));
        this.locks = this.locks.filter((l) => !(l.type === 'auto' && deadPids.has(l.pid)));
        pruned += deadPids.size;
        this.persist();
        return { pruned };
      }
      case 'lock.release': {
        const directory = String(params.directory);
        if (!this.locks.some((l) => l.directory === directory && l.type === 'manual')) throw new Error(`No manual lock on ${directory}`);
        this.locks = this.locks.filter((l) => !(l.directory === directory && l.type === 'manual'));
        this.persist();
        return null;
      }
      case 'session.stop':
        throw new Error('session.stop must never be called by ghostwatch');
      default:
        throw new Error(`Unknown method: ${method}`);
    }
  }
}

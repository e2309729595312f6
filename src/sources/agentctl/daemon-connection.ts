// One connection to the agentctl daemon's socket: newline-delimited JSON requests with uuid ids,
// their replies matched by id, and the rule that keeps the daemon alive: the socket is ended only
// once every request written on it is answered (bounded by a grace while the daemon runs, and for
// as long as its process is stopped), never while a reply is in flight (protocols.md §3). What
// the requests mean stays with the source (client.ts).
import { randomUUID } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { LineSplitter } from '../../plumbing/line-channel.js';
import { RpcTable } from '../../plumbing/rpc.js';
import type { InputCounters } from '../types.js';
import { parseReply } from './wire.js';

export interface DaemonConnectionOptions {
  readonly socketPath: string;
  readonly requestTimeoutMs: number;
  /** A reply line longer than this closes the connection (a broken or hostile daemon). */
  readonly maxLineBytes: number;
  /** The longest a dropped connection stays open for replies still due before it is ended anyway, while the daemon runs. */
  readonly lingerMs: number;
  /**
   * Is the daemon's process stopped (SIGSTOP)? Asked when the grace is over: a stopped daemon
   * answers once continued, so its socket stays open while it is stopped, however long.
   */
  readonly daemonStopped: () => Promise<boolean>;
  /** The grace ended with replies still due and the daemon stopped: the socket stays open. */
  readonly onKeptForStoppedDaemon?: () => void;
  /** The source's counters: frames read, malformed ones, timeouts. */
  readonly counters: InputCounters;
  /** The socket is open. */
  readonly onConnect: () => void;
  /** The connection is lost (an error, the daemon closed it, a line too long): how to close it. */
  readonly onLost: (why: string, close: 'gently' | 'now') => void;
}

/** How often a stopped daemon's state is read again while its socket is kept open. */
const STOPPED_RECHECK_MS = 1_000;

export class DaemonConnection {
  private readonly socket: Socket;
  /** Ids of the requests written and not answered yet, timed out or not. */
  private readonly outstanding = new Set<string>();
  private readonly lines: LineSplitter;
  private readonly rpc: RpcTable<unknown>;
  private open = false;
  private dropped = false;

  constructor(private readonly opts: DaemonConnectionOptions) {
    this.lines = new LineSplitter(opts.maxLineBytes);
    this.rpc = new RpcTable<unknown>({
      timeoutMs: opts.requestTimeoutMs,
      timeoutMessage: (method, ms) => `agentctl did not answer ${method} within ${ms / 1000} s`,
      onTimeout: () => opts.counters.requestTimeouts++,
      newId: randomUUID,
    });
    const socket = (this.socket = createConnection(opts.socketPath));
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      if (this.dropped) return;
      this.open = true;
      opts.onConnect();
    });
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (error) => {
      if (!this.dropped) opts.onLost(error.message, 'now');
    });
    socket.on('close', () => {
      if (!this.dropped) opts.onLost('the daemon closed the connection', 'now');
    });
  }

  /** Open, and not dropped: requests may be sent. */
  get connected(): boolean {
    return this.open && !this.dropped;
  }

  /** Requests written and not answered yet (timed out or not). */
  get unanswered(): number {
    return this.outstanding.size;
  }

  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.connected) return Promise.reject(new Error('the agentctl daemon is not connected'));
    return this.rpc.call(method, (id) => {
      // Answered or not in time, it stays outstanding until its reply: the socket is ended only after.
      this.outstanding.add(id);
      this.socket.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  /**
   * Stop using the connection: every open request fails with `why`. 'now': it is already dead (an
   * error, the daemon closed it). 'gently': it is open, and requests on it may still be answered:
   * it is ended only after (see endWhenAnswered).
   */
  drop(why: string, close: 'gently' | 'now'): Promise<void> {
    this.dropped = true;
    this.rpc.failAll(`agentctl daemon: ${why}`);
    if (close === 'now') {
      this.socket.destroy();
      return Promise.resolve();
    }
    return this.endWhenAnswered();
  }

  private onData(chunk: string): void {
    if (this.dropped) return;
    const fits = this.lines.push(chunk, (line) => {
      if (line.trim() === '') return;
      const counters = this.opts.counters;
      counters.frames++;
      const reply = parseReply(line);
      if (reply.kind === 'bad') {
        if (reply.why === 'not JSON') counters.invalidJson++;
        else counters.badFrames++;
        return;
      }
      this.outstanding.delete(reply.id);
      const matched =
        reply.kind === 'error'
          ? this.rpc.answer(reply.id, { error: Object.assign(new Error(`agentctl: ${reply.message} (${reply.code})`), { daemon: true }) })
          : this.rpc.answer(reply.id, { answer: reply.result });
      if (!matched) counters.badFrames++;
    });
    if (!fits) {
      this.opts.counters.oversize++;
      this.lines.clear();
      this.opts.onLost(`a reply longer than ${this.opts.maxLineBytes} bytes`, 'gently');
    }
  }

  /**
   * End the socket once every request written on it is answered, or after `lingerMs` while the
   * daemon runs. Until then it stays fully open, not even half-closed: agentctl's server ends its
   * side when it reads our FIN, and a reply it writes in that moment, like one written to a closed
   * socket (EPIPE), is an unhandled 'error' that kills it. A daemon whose process is stopped cannot
   * answer yet and will once continued: its socket stays open while it is stopped (its state
   * bounds the wait, not a timer), and it gets a new grace once it runs again. The open socket and
   * the timer keep the process alive.
   */
  private endWhenAnswered(): Promise<void> {
    const socket = this.socket;
    const outstanding = this.outstanding;
    const opts = this.opts;
    return new Promise<void>((resolve) => {
      const lines = new LineSplitter(opts.maxLineBytes);
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      let wasStopped = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        socket.removeListener('data', onData);
        if (!socket.destroyed) socket.end();
        // A daemon that never answers our FIN must not hold the process forever.
        setTimeout(() => socket.destroy(), 2_000).unref();
        resolve();
      };
      const graceOver = (): void => {
        timer = undefined;
        opts.daemonStopped().then(
          (stopped) => {
            if (done) return;
            if (stopped) {
              if (!wasStopped) opts.onKeptForStoppedDaemon?.();
              wasStopped = true;
              timer = setTimeout(graceOver, STOPPED_RECHECK_MS);
            } else if (wasStopped) {
              // Continued: its replies are on their way; if they do not come, the grace ends it.
              wasStopped = false;
              timer = setTimeout(graceOver, opts.lingerMs);
            } else finish();
          },
          () => finish(),
        );
      };
      const onData = (chunk: string): void => {
        const fits = lines.push(chunk, (line) => {
          const reply = parseReply(line);
          if (reply.kind !== 'bad') outstanding.delete(reply.id);
        });
        // A reply too long to read is not parsed: its request waits for the bound.
        if (!fits) lines.clear();
        if (outstanding.size === 0) finish();
      };
      if (outstanding.size === 0 || socket.destroyed) {
        finish();
        return;
      }
      socket.on('data', onData);
      socket.once('close', finish);
      timer = setTimeout(graceOver, opts.lingerMs);
    });
  }
}

// Requests to a registry and the answers that match them: ids, timeouts, matching. The wire
// (a WebSocket frame, a line on a socket) and what an answer means stay with each client.

export interface RpcOptions {
  readonly timeoutMs: number;
  /** Why a request got no answer in time, one line. */
  readonly timeoutMessage: (method: string, timeoutMs: number) => string;
  /** Called once per request that timed out (the clients count them). */
  readonly onTimeout?: (() => void) | undefined;
  /** Ids of another form (agentctl's are uuids); default `gw-1`, `gw-2`, … */
  readonly newId?: (() => string) | undefined;
}

interface Pending<A> {
  readonly resolve: (answer: A) => void;
  /** Runs as the answer is read, before anything read after it (see call). */
  readonly read: ((answer: A) => unknown) | undefined;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** A request that got no answer within the timeout. */
export class RequestTimeout extends Error {
  override readonly name = 'RequestTimeout';
}

export class RpcTable<A> {
  private readonly opts: RpcOptions;
  private readonly pending = new Map<string, Pending<A>>();
  private seq = 0;

  constructor(options: RpcOptions) {
    this.opts = options;
  }

  /**
   * A new request: `send` writes it with its id. The id is a string (hypivisor silently drops
   * a request with a numeric id), unique for the life of this table. `read`, when given, takes
   * the answer at the moment it is read, before any frame that came after it (the promise's own
   * continuation runs only after every frame of the same read): a snapshot answer must be
   * applied before the events that follow it. The promise then resolves with what `read` returned.
   */
  call(method: string, send: (id: string) => void): Promise<A>;
  call<R>(method: string, send: (id: string) => void, read: (answer: A) => R): Promise<R>;
  call(method: string, send: (id: string) => void, read?: (answer: A) => unknown): Promise<unknown> {
    const id = this.opts.newId?.() ?? `gw-${++this.seq}`;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.opts.onTimeout?.();
        reject(new RequestTimeout(this.opts.timeoutMessage(method, this.opts.timeoutMs)));
      }, this.opts.timeoutMs);
      this.pending.set(id, { resolve, read, reject, timer });
      send(id);
    });
  }

  /** An answer arrived: settle its request. False when it answers no request of ours (late, or never asked). */
  answer(id: string, outcome: { readonly answer: A } | { readonly error: Error }): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if ('error' in outcome) p.reject(outcome.error);
    else if (!p.read) p.resolve(outcome.answer);
    else {
      try {
        p.resolve(p.read(outcome.answer) as A);
      } catch (error) {
        p.reject(error as Error);
      }
    }
    return true;
  }

  /** The connection is gone: every open request fails with this reason. */
  failAll(why: string): void {
    const open = [...this.pending.values()];
    this.pending.clear();
    for (const p of open) {
      clearTimeout(p.timer);
      p.reject(new Error(why));
    }
  }

  get open(): number {
    return this.pending.size;
  }
}

// Port checks of remote entries (--probe-remote-ports): one TCP connect from this host to an
// entry's own `machine:port`, the connection hypivisor's proxy makes, closed at once (no byte is
// sent). Bounded: at most `concurrency` connects at once and `ratePerSecond` started per second,
// each with a short timeout; a result is reused for `cacheMs`, so many entries of one
// machine:port and a probe round of 10,000 entries do not become as many connects. Only the
// machine the registry named is contacted (its name resolved by the system resolver, nothing
// else), and only a valid host name or address (core/remote-ports.ts). Fresh checks (the
// eviction re-check) go ahead of a round's queue and never use the cache.
import { remoteMachineProblem, remotePortKey, type RemotePortTarget } from '../core/remote-ports.js';
import { isUsablePort } from '../core/pid.js';
import type { PortResult, RemotePortFacts } from '../core/types.js';
import { abortError, throwIfAborted } from './liveness.js';
import { tryConnect } from './port-probe.js';

export type ConnectOutcome = { readonly kind: 'open' } | { readonly kind: 'timeout' } | { readonly kind: 'error'; readonly code: string };

/** One TCP connect to host:port within timeoutMs. Resolves once; rejects only on abort. */
export type ConnectFn = (host: string, port: number, timeoutMs: number, signal?: AbortSignal) => Promise<ConnectOutcome>;

/** The limiter's clock: monotonic ms and a sleep that an abort ends early. */
export interface RateClock {
  monotonic(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface RemotePortCheckOptions {
  /** Connects at once, at most. Default 8. */
  readonly concurrency?: number | undefined;
  /** Connects started per second, at most. Default 50. */
  readonly ratePerSecond?: number | undefined;
  /** Per connect. Default 1500 ms. */
  readonly timeoutMs?: number | undefined;
  /** How long a result is reused. Default 10 s. */
  readonly cacheMs?: number | undefined;
  /** The edge to the network; the real TCP connect by default. */
  readonly connect?: ConnectFn | undefined;
  readonly clock?: RateClock | undefined;
}

export interface RemoteCheckRunOptions {
  readonly signal?: AbortSignal | undefined;
  /** The wall clock `checkedAt` is read from. */
  readonly now?: (() => number) | undefined;
  /** Connect again whatever the cache holds, ahead of queued checks (the eviction re-check). */
  readonly fresh?: boolean | undefined;
  /** Reuse a cached result only when younger than this (default the checker's cacheMs). */
  readonly maxAgeMs?: number | undefined;
}

/** What the engine needs of a checker: facts for targets, by remotePortKey. */
export interface RemotePortCheck {
  check(targets: readonly RemotePortTarget[], opts?: RemoteCheckRunOptions): Promise<ReadonlyMap<string, RemotePortFacts>>;
}

export const REMOTE_PORT_DEFAULTS = { concurrency: 8, ratePerSecond: 50, timeoutMs: 1_500, cacheMs: 10_000 } as const;

const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const UNREACHABLE = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);

/** The real connect: port-probe's one attempt (net.connect, the system resolver for a name), destroyed as soon as it is answered. */
export const tcpConnect: ConnectFn = async (host, port, timeoutMs, signal) => {
  const attempt = await tryConnect(host, port, timeoutMs, signal);
  if (attempt.kind === 'aborted') throw abortError(signal);
  return attempt;
};

const realRateClock: RateClock = {
  monotonic: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

/** What a connect outcome says, as the facts of a check. */
export function remoteFacts(target: RemotePortTarget, outcome: ConnectOutcome, timeoutMs: number, checkedAt: number): RemotePortFacts {
  const facts = (result: PortResult, detail?: string): RemotePortFacts => ({ machine: target.machine, port: target.port, result, detail, checkedAt });
  if (outcome.kind === 'open') return facts('open');
  if (outcome.kind === 'timeout') return facts('timeout', `no answer within ${timeoutMs} ms`);
  const { code } = outcome;
  if (code === 'ECONNREFUSED') return facts('refused', 'ECONNREFUSED');
  if (code === 'ETIMEDOUT') return facts('timeout', 'ETIMEDOUT');
  if (UNRESOLVED.has(code)) return facts('error', `cannot resolve ${target.machine} (${code})`);
  if (UNREACHABLE.has(code)) return facts('error', `host unreachable (${code})`);
  return facts('error', code);
}

interface Waiter {
  readonly grant: () => void;
}

export class RemotePortChecker implements RemotePortCheck {
  private readonly concurrency: number;
  private readonly gapMs: number;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private readonly connect: ConnectFn;
  private readonly clock: RateClock;
  private readonly cache = new Map<string, { readonly facts: RemotePortFacts; readonly at: number }>();
  /** Checks under way, by key: a second ask for one waits for it instead of connecting again. */
  private readonly inFlight = new Map<string, Promise<RemotePortFacts>>();
  private readonly urgentQueue: Waiter[] = [];
  private readonly queue: Waiter[] = [];
  private active = 0;
  private nextStartAt = -Infinity;
  /** Counters: connects started, and the most at once. */
  readonly stats = { connects: 0, maxActive: 0 };

  constructor(opts: RemotePortCheckOptions = {}) {
    this.concurrency = Math.max(1, opts.concurrency ?? REMOTE_PORT_DEFAULTS.concurrency);
    this.gapMs = 1000 / Math.max(0.001, opts.ratePerSecond ?? REMOTE_PORT_DEFAULTS.ratePerSecond);
    this.timeoutMs = opts.timeoutMs ?? REMOTE_PORT_DEFAULTS.timeoutMs;
    this.cacheMs = opts.cacheMs ?? REMOTE_PORT_DEFAULTS.cacheMs;
    this.connect = opts.connect ?? tcpConnect;
    this.clock = opts.clock ?? realRateClock;
  }

  async check(targets: readonly RemotePortTarget[], opts: RemoteCheckRunOptions = {}): Promise<ReadonlyMap<string, RemotePortFacts>> {
    throwIfAborted(opts.signal);
    const now = opts.now ?? Date.now;
    const maxAge = opts.maxAgeMs ?? this.cacheMs;
    this.prune();
    const order: string[] = [];
    const got = new Map<string, RemotePortFacts>();
    const pending: Promise<void>[] = [];
    const pendingKeys = new Set<string>();
    for (const target of targets) {
      const key = remotePortKey(target.machine, target.port);
      if (got.has(key) || pendingKeys.has(key)) continue;
      const why = !isUsablePort(target.port) ? 'not a usable port' : remoteMachineProblem(target.machine);
      order.push(key);
      if (why !== undefined) {
        got.set(key, { machine: target.machine, port: target.port, result: 'error', detail: `not checked: ${why}`, checkedAt: now() });
        continue;
      }
      const cached = this.cache.get(key);
      if (!opts.fresh && cached && this.clock.monotonic() - cached.at < maxAge) {
        got.set(key, cached.facts);
        continue;
      }
      pendingKeys.add(key);
      pending.push(this.checkOne(key, target, opts, now).then((f) => void got.set(key, f)));
    }
    const settled = await Promise.allSettled(pending);
    throwIfAborted(opts.signal);
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // In the caller's order, whichever check finished first.
    return new Map(order.map((key) => [key, got.get(key) as RemotePortFacts]));
  }

  private checkOne(key: string, target: RemotePortTarget, opts: RemoteCheckRunOptions, now: () => number): Promise<RemotePortFacts> {
    const running = this.inFlight.get(key);
    if (running && !opts.fresh) return running;
    const run = this.run(target, opts.fresh === true, opts.signal, now).then((facts) => {
      this.cache.set(key, { facts, at: this.clock.monotonic() });
      return facts;
    });
    this.inFlight.set(key, run);
    const forget = (): void => {
      if (this.inFlight.get(key) === run) this.inFlight.delete(key);
    };
    run.then(forget, forget);
    return run;
  }

  /** One connect, inside the concurrency and rate bounds. */
  private async run(target: RemotePortTarget, urgent: boolean, signal: AbortSignal | undefined, now: () => number): Promise<RemotePortFacts> {
    await this.acquire(urgent);
    try {
      throwIfAborted(signal);
      const t = this.clock.monotonic();
      const startAt = Math.max(t, this.nextStartAt);
      this.nextStartAt = startAt + this.gapMs;
      if (startAt > t) await this.clock.sleep(startAt - t, signal);
      throwIfAborted(signal);
      this.stats.connects++;
      const outcome = await this.connect(target.machine, target.port, this.timeoutMs, signal);
      return remoteFacts(target, outcome, this.timeoutMs, now());
    } finally {
      this.release();
    }
  }

  private acquire(urgent: boolean): Promise<void> {
    if (this.active < this.concurrency) {
      this.take();
      return Promise.resolve();
    }
    return new Promise((resolve) => (urgent ? this.urgentQueue : this.queue).push({ grant: resolve }));
  }

  private take(): void {
    this.active++;
    if (this.active > this.stats.maxActive) this.stats.maxActive = this.active;
  }

  private release(): void {
    this.active--;
    const next = this.urgentQueue.shift() ?? this.queue.shift();
    if (next) {
      this.take();
      next.grant();
    }
  }

  /** Results past their age are dropped: the cache never holds more than recent checks. */
  private prune(): void {
    const t = this.clock.monotonic();
    for (const [key, c] of this.cache) if (t - c.at >= this.cacheMs) this.cache.delete(key);
  }
}

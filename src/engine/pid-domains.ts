// The pid namespaces that this host's records name (Claude Code's pidDomain), read from the
// provider at the process table's slow cadence, and at once when a new namespace is named. Idle
// (no reads, no timer) while no record names a domain. Only a read that changes what reconcile
// can see (a mapping, a namespace gone, our standing) calls `onChange`.

import type { PidNamespaceFacts } from '../core/types.js';
import type { ProbeProvider } from '../os/provider.js';
import type { Clock, TimerHandle } from '../plumbing/clock.js';

export interface PidDomainsOptions {
  readonly probes: ProbeProvider;
  readonly clock: Clock;
  /** The re-read period, ms. */
  readonly periodMs: number;
  readonly onChange: () => void;
}

export class PidDomains {
  private wanted: ReadonlySet<string> = new Set();
  private current: PidNamespaceFacts | undefined;
  /** The wanted set the current facts were read for. */
  private readFor: ReadonlySet<string> = new Set();
  private timer: TimerHandle | undefined;
  private reading = false;
  private again = false;
  private stopped = false;

  constructor(private readonly opts: PidDomainsOptions) {}

  /** The facts reconcile reads; undefined while nothing is named or before the first read. */
  get facts(): PidNamespaceFacts | undefined {
    return this.wanted.size === 0 ? undefined : this.current;
  }

  /** Every named namespace has been read at least once. */
  get settled(): boolean {
    if (this.wanted.size === 0 || !this.opts.probes.pidNamespaces) return true;
    for (const ns of this.wanted) if (!this.readFor.has(ns)) return false;
    return true;
  }

  /** The namespaces the records name now; a new one is read at once. */
  setWanted(wanted: ReadonlySet<string>): void {
    if (this.stopped) return;
    const grew = [...wanted].some((ns) => !this.wanted.has(ns));
    this.wanted = wanted;
    if (wanted.size === 0) {
      this.cancelTimer();
      return;
    }
    if (grew) void this.read();
    else if (this.timer === undefined && !this.reading) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer();
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.opts.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.cancelTimer();
    if (this.stopped || this.wanted.size === 0) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = undefined;
      void this.read();
    }, this.opts.periodMs);
  }

  private async read(): Promise<void> {
    const probe = this.opts.probes.pidNamespaces;
    if (!probe || this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    this.cancelTimer();
    try {
      const asked = this.wanted;
      const facts = await probe.call(this.opts.probes, asked);
      if (this.stopped) return;
      const changed = !sameNamespaceFacts(this.current, facts) || [...asked].some((ns) => !this.readFor.has(ns));
      this.current = facts;
      this.readFor = asked;
      if (changed) this.opts.onChange();
    } finally {
      this.reading = false;
    }
    if (this.again) {
      this.again = false;
      void this.read();
    } else {
      this.schedule();
    }
  }
}

/** Equal for reconcile: the same standing and the same mappings (times aside). */
export function sameNamespaceFacts(a: PidNamespaceFacts | undefined, b: PidNamespaceFacts): boolean {
  if (a === undefined) return false;
  if (a.machineId !== b.machineId || a.own !== b.own || a.initial !== b.initial || a.blind !== b.blind) return false;
  if (a.namespaces.size !== b.namespaces.size) return false;
  for (const [ns, pids] of b.namespaces) {
    if (!a.namespaces.has(ns)) return false;
    const before = a.namespaces.get(ns);
    if (pids === null || before === null || before === undefined) {
      if (pids !== before) return false;
      continue;
    }
    if (pids.size !== before.size) return false;
    for (const [nsPid, hostPid] of pids) if (before.get(nsPid) !== hostPid) return false;
  }
  return true;
}

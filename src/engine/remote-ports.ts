// The engine's remote port checks (--probe-remote-ports), apart from the local probes: their own
// round on their own timer, never awaited by the local ticks, so a slow or unreachable fleet never
// slows this host's table. Targets are the view's remote entries (core/remote-ports.ts), minus
// the machines verified over SSH (`sshVerified`; none by default). Facts change only when a
// result does, and only then is reconcile told.

import { chooseRemotePortTargets, remotePortTarget, type RemotePortTarget } from '../core/remote-ports.js';
import type { IsLocalMachine } from '../core/probe-targets.js';
import type { RegistryView, RemotePortFacts, SessionEntry } from '../core/types.js';
import { RemotePortChecker, type RemotePortCheck } from '../os/remote-port-check.js';
import type { Clock, TimerHandle } from '../plumbing/clock.js';

/** A round of remote port checks every this many ms (at intervalScale 1); a result lives as long. */
export const REMOTE_PORT_CADENCE_MS = 10_000;

/** Which machines are verified over SSH (never port-checked: that is stronger). Default: none. */
export type SshVerified = (machine: string) => boolean;
export const NO_SSH_VERIFIED: SshVerified = () => false;

export interface RemotePortsOptions {
  readonly isLocal: IsLocalMachine;
  readonly sshVerified?: SshVerified | undefined;
  readonly checker?: RemotePortCheck | undefined;
  readonly clock: Clock;
  readonly now: () => number;
  readonly intervalScale: number;
  readonly onChange: () => void;
}

export class RemotePortTracker {
  /** By remotePortKey; handed to reconcile as is (only replaced into). */
  readonly facts = new Map<string, RemotePortFacts>();
  private targets = new Map<string, RemotePortTarget>();
  private readonly awaiting = new Set<string>();
  private readonly checker: RemotePortCheck;
  private readonly sshVerified: SshVerified;
  private readonly cadenceMs: number;
  private timer: TimerHandle | undefined;
  private controller = new AbortController();
  private running: Promise<void> | undefined;
  private again = false;
  rounds = 0;

  constructor(private readonly opts: RemotePortsOptions) {
    this.sshVerified = opts.sshVerified ?? NO_SSH_VERIFIED;
    this.cadenceMs = Math.max(1_000, Math.round(REMOTE_PORT_CADENCE_MS * opts.intervalScale));
    this.checker = opts.checker ?? new RemotePortChecker({ cacheMs: this.cadenceMs });
  }

  /** Every target has had its first check. */
  get firstDone(): boolean {
    return this.awaiting.size === 0;
  }

  start(): void {
    if (this.timer !== undefined) return;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.timer = this.opts.clock.setInterval(() => void this.round(), this.cadenceMs);
    void this.round();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) this.opts.clock.clearInterval(this.timer);
    this.timer = undefined;
    this.controller.abort();
    await this.running;
  }

  /** The view changed: new targets are checked soon (older results stay for their age), dropped ones forgotten. */
  setView(view: RegistryView): void {
    const next = chooseRemotePortTargets(view, this.opts.isLocal, this.sshVerified);
    let added = false;
    for (const key of next.keys()) {
      if (this.targets.has(key)) continue;
      this.awaiting.add(key);
      added = true;
    }
    for (const key of this.targets.keys()) {
      if (next.has(key)) continue;
      this.facts.delete(key);
      this.awaiting.delete(key);
    }
    this.targets = next;
    if (added && this.timer !== undefined) void this.round();
  }

  /** A round now (the R key): results younger than a second are reused. */
  refresh(): Promise<void> {
    return this.round(1_000);
  }

  /** Connect again now, whatever is cached, for the entries given (the eviction re-check). */
  async recheck(entries: readonly SessionEntry[]): Promise<ReadonlyMap<string, RemotePortFacts>> {
    const targets: RemotePortTarget[] = [];
    for (const e of entries) {
      const t = remotePortTarget(e, this.opts.isLocal, this.sshVerified);
      if (t) targets.push(t);
    }
    if (targets.length === 0) return new Map();
    return this.checker.check(targets, { fresh: true, now: this.opts.now });
  }

  /** Fresh results read elsewhere (the eviction re-check) are news for the table too. */
  apply(fresh: ReadonlyMap<string, RemotePortFacts>): void {
    if (this.timer === undefined) return;
    if (this.fold(fresh)) this.opts.onChange();
  }

  /** One round over every target; a round asked for while one runs follows it (cached results make it cheap). */
  private round(maxAgeMs?: number): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const signal = this.controller.signal;
    const targets = [...this.targets.values()];
    if (targets.length === 0 || signal.aborted) return Promise.resolve();
    const run = (async () => {
      try {
        // Slightly younger than a cadence: each timed round connects again.
        const result = await this.checker.check(targets, { signal, now: this.opts.now, maxAgeMs: maxAgeMs ?? this.cadenceMs * 0.9 });
        if (signal.aborted) return;
        this.rounds++;
        const wasAwaiting = this.awaiting.size > 0;
        const changed = this.fold(result);
        if (changed || (wasAwaiting && this.firstDone)) this.opts.onChange();
      } catch {
        // Aborted by stop(); the next round retries anything else.
      }
    })().finally(() => {
      this.running = undefined;
      if (this.again && !signal.aborted && this.timer !== undefined) {
        this.again = false;
        void this.round();
      }
    });
    this.running = run;
    return run;
  }

  /** Fold results of current targets: a result that says what the last one said keeps the old object. */
  private fold(result: ReadonlyMap<string, RemotePortFacts>): boolean {
    let changed = false;
    for (const [key, next] of result) {
      if (!this.targets.has(key)) continue;
      this.awaiting.delete(key);
      const prev = this.facts.get(key);
      if (prev && prev.result === next.result && prev.detail === next.detail) continue;
      this.facts.set(key, next);
      changed = true;
    }
    return changed;
  }
}

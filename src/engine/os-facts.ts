// The OS half of the store: which pids and ports to watch, the probe cadence, and the facts as
// last probed. Probes come from an injected provider and every timer from an injected clock. A
// probe never overlaps itself (a slow run makes the next tick a no-op), and only a change
// reconcile can see calls `onChange`: a stable pid costs a kill(0) and nothing else.

import type { OsFacts, PidFacts, PortFacts, ProcessInfo } from '../core/types.js';
import type { TmuxPane } from '../core/tmux.js';
import type { ProbeProvider } from '../os/provider.js';
import type { Clock, TimerHandle } from '../plumbing/clock.js';
import { mergeFull, mergeKill, mergePort } from './fact-merge.js';
import { FactTable } from './fact-table.js';
import { PaneTracker } from './pane-tracker.js';
import { ProbeRunner } from './probe-runner.js';
import type { Targets } from './probe-targets.js';
import { ProcessRows } from './process-rows.js';
import type { ProbeProgress } from './snapshot.js';
import { UsageMeter } from './usage-meter.js';
import type { OsState } from './types.js';

export interface OsFactsOptions {
  /** Multiplies every cadence (--interval). */
  readonly intervalScale: number;
  readonly probes: ProbeProvider;
  readonly clock: Clock;
  /** The wall clock facts are stamped with (`checkedAt`). */
  readonly now: () => number;
  /** Something reconcile can see changed (or the first probes just completed). */
  readonly onChange: () => void;
  /**
   * The provider watches on its own and pushes what changes (applyFresh): no kill tick, and the
   * full and port probes only as a slow net (PUSHED_POLL_FACTOR times their cadence).
   */
  readonly pushed?: boolean | undefined;
}

/** Cadences in ms at intervalScale 1. */
export const CADENCE = { kill: 250, full: 2_000, ports: 2_000, table: 5_000 } as const;
/** How much slower the full and port probes run when the provider pushes changes itself. */
export const PUSHED_POLL_FACTOR = 15;
/** No cadence below this, whatever the scale: a tiny --interval must not become a busy loop. */
export const MIN_INTERVAL_MS = 10;
/** New pids get their table rows soon, but the table is not scanned more often than this (at intervalScale 1). */
const TABLE_SOON_MS = CADENCE.table / 5;

/** The time of facts that say the process is gone (ESRCH, or a zombie), else undefined. */
function goneSince(f: PidFacts | undefined): number | undefined {
  return f !== undefined && (f.kill === 'ESRCH' || (f.state === 'Z' && f.kill !== 'error')) ? f.checkedAt : undefined;
}

/** The period of a cadence at a scale, in whole ms. */
export function cadenceMs(kind: keyof typeof CADENCE, intervalScale: number): number {
  return Math.max(MIN_INTERVAL_MS, Math.round(CADENCE[kind] * intervalScale));
}

type Probe = 'kill' | 'full' | 'ports' | 'table' | 'panes' | 'urgentPids' | 'urgentPorts';
export type ProbeCounts = Record<'kill' | 'full' | 'ports' | 'table', number>;

export class OsFactsTracker {
  /** CPU % from two readings at least half a full cadence apart. */
  private readonly meter: UsageMeter;
  private readonly pids = new FactTable<PidFacts>((prev, next) => mergeFull(prev, next, this.meter.usage(prev, next)));
  private readonly ports = new FactTable<PortFacts>(mergePort);
  /** Handed to reconcile as is: the maps are only replaced into, never copied. */
  readonly facts: OsFacts = { pids: this.pids.facts, ports: this.ports.facts };
  private readonly runner = new ProbeRunner<Probe>();
  private readonly rows = new ProcessRows();
  private readonly paneTracker = new PaneTracker();
  private readonly probes: ProbeProvider;
  private readonly clock: Clock;
  /** What the view asks to watch; the pids that serve watched ports are watched on top of it. */
  private viewTargets: Targets = { pids: new Set(), ports: new Set() };
  private ownerPids: ReadonlySet<number> = new Set();
  private timers: TimerHandle[] = [];
  private lastTableAt = -Infinity;
  private tableSoon: TimerHandle | undefined;
  private os: OsState = { processTable: 'pending', processTableError: undefined, lastProbeAt: undefined };
  readonly counts: ProbeCounts = { kill: 0, full: 0, ports: 0, table: 0 };
  /**
   * When each sweep last completed: a kill tick checks every watched pid not known gone, a full
   * probe and a port probe every watched key. The facts keep the time they were first true (a
   * merge that changes nothing keeps the object), so "when was this checked" is the later of the two.
   */
  private sweptAt = { kill: -Infinity, full: -Infinity, ports: -Infinity };
  /**
   * Facts that say a pid is gone and were the first this monitor read of it (or followed only
   * such facts, a zombie then reaped): the process ended before its first probe, at a moment
   * not known here. Weak: facts replaced or forgotten leave with their objects.
   */
  private readonly goneFirst = new WeakSet<PidFacts>();

  constructor(private readonly opts: OsFactsOptions) {
    this.meter = new UsageMeter(cadenceMs('full', opts.intervalScale) / 2);
    this.probes = opts.probes;
    this.clock = opts.clock;
  }

  get state(): OsState {
    return this.os;
  }

  /** Every tracked pid has had a full probe and every tracked port a probe. */
  get firstProbesDone(): boolean {
    return this.pids.awaiting.size === 0 && this.ports.awaiting.size === 0;
  }

  /** The tmux pane of each tracked pid that runs in one (or, dead, last ran in one that still exists). */
  get panes(): ReadonlyMap<number, TmuxPane> {
    return this.paneTracker.panes;
  }

  /** Watched and not yet fully probed. */
  awaitingPid(pid: number): boolean {
    return this.pids.awaiting.has(pid);
  }

  awaitingPort(port: number): boolean {
    return this.ports.awaiting.has(port);
  }

  /**
   * Since when the OS has said this pid is gone (ESRCH, or a zombie): the time of the facts that
   * first said so. The merge keeps a facts object while what it says does not change, so that
   * time stays the first one for as long as the pid stays gone.
   */
  deadSince(pid: number): number | undefined {
    return goneSince(this.pids.facts.get(pid));
  }

  /**
   * The facts and the probe progress as they stand now, copied: probes replace facts in their
   * maps as they answer, and a recompute that pauses between slices judges every row on these.
   */
  frozen(): { facts: OsFacts; progress: ProbeProgress } {
    const pids = new Map(this.pids.facts);
    const ports = new Map(this.ports.facts);
    const awaitingPids = new Set(this.pids.awaiting);
    const awaitingPorts = new Set(this.ports.awaiting);
    return {
      facts: { pids, ports },
      progress: { awaitingPid: (pid) => awaitingPids.has(pid), awaitingPort: (port) => awaitingPorts.has(port), deadSince: (pid) => goneSince(pids.get(pid)), goneAtFirstProbe: (pid) => this.goneFirstFacts(pids.get(pid)) },
    };
  }

  /** The pid's first probe here already found it gone: `deadSince` is the latest it can have ended, not when. */
  goneAtFirstProbe(pid: number): boolean {
    return this.goneFirstFacts(this.pids.facts.get(pid));
  }

  private goneFirstFacts(f: PidFacts | undefined): boolean {
    return f !== undefined && this.goneFirst.has(f);
  }

  /**
   * Fold pid results (`store` sets them one by one instead, for the kill tick), keeping track of
   * the facts that were gone from the first look: the pids with no facts yet, or whose facts are
   * such, are noted before and looked at after.
   */
  private foldPids(result: ReadonlyMap<number, PidFacts>, store?: (pid: number, next: PidFacts) => boolean): boolean {
    let before: (number | PidFacts | undefined)[] | undefined;
    for (const pid of result.keys()) {
      const prev = this.pids.facts.get(pid);
      if (prev === undefined || this.goneFirst.has(prev)) (before ??= []).push(pid, prev);
    }
    let changed = false;
    if (store) for (const [pid, next] of result) changed = store(pid, next) || changed;
    else changed = this.pids.fold(result);
    for (let i = 0; before !== undefined && i < before.length; i += 2) {
      const now = this.pids.facts.get(before[i] as number);
      if (now !== undefined && now !== before[i + 1] && goneSince(now) !== undefined) this.goneFirst.add(now);
    }
    return changed;
  }

  /** When the OS was last asked about this pid: its facts' time or a later sweep that covered it. */
  pidCheckedAt(pid: number): number | undefined {
    const f = this.pids.facts.get(pid);
    if (f === undefined) return undefined;
    return Math.max(f.checkedAt, this.sweptAt.full, f.kill !== 'ESRCH' ? this.sweptAt.kill : -Infinity);
  }

  portCheckedAt(port: number): number | undefined {
    const f = this.ports.facts.get(port);
    return f === undefined ? undefined : Math.max(f.checkedAt, this.sweptAt.ports);
  }

  /** What the last process table scan knows about a pid. */
  processInfo(pid: number): ProcessInfo | undefined {
    return this.rows.get(pid) ?? this.pids.facts.get(pid)?.process;
  }

  start(): void {
    if (this.timers.length > 0) return;
    this.runner.reset();
    const pushed = this.opts.pushed === true;
    const every = (kind: keyof typeof CADENCE, fn: () => void, factor = 1): void => {
      this.timers.push(this.clock.setInterval(fn, cadenceMs(kind, this.opts.intervalScale * factor)));
    };
    if (!pushed) every('kill', () => void this.probeKill());
    every('full', () => void this.probeFull(), pushed ? PUSHED_POLL_FACTOR : 1);
    every('ports', () => void this.probePorts(), pushed ? PUSHED_POLL_FACTOR : 1);
    every('table', () => {
      void this.scanTable();
      void this.lookupPanes();
    });
    // One scan up front, so an unavailable process table is reported from the start.
    void this.scanTable(true);
    this.probeUrgent();
  }

  async stop(): Promise<void> {
    for (const t of this.timers) this.clock.clearInterval(t);
    this.timers = [];
    if (this.tableSoon !== undefined) this.clock.clearTimeout(this.tableSoon);
    this.tableSoon = undefined;
    await this.runner.stop();
  }

  /** New targets: new pids and ports are probed right away, dropped ones forgotten. */
  setTargets(view: Targets): void {
    this.viewTargets = view;
    this.watch();
  }

  /** Watch the view's targets plus the processes serving its ports (a pid-less entry is judged by them). */
  private watch(): void {
    const view = this.viewTargets;
    let pids = view.pids;
    if (this.ownerPids.size > 0) {
      const all = new Set(view.pids);
      for (const pid of this.ownerPids) all.add(pid);
      pids = all;
    }
    const addedPids = this.pids.watch(pids);
    this.meter.retain(pids);
    const addedPorts = this.ports.watch(view.ports);
    if (!(addedPids || addedPorts) || !this.live) return;
    this.probeUrgent();
    this.scanSoon();
  }

  /** After a port probe: start (or stop) watching the pids that now serve watched ports. */
  private trackOwners(): void {
    const owners = new Set<number>();
    for (const facts of this.ports.facts.values()) for (const pid of facts.owners ?? []) owners.add(pid);
    if (owners.size === this.ownerPids.size && [...owners].every((pid) => this.ownerPids.has(pid))) return;
    this.ownerPids = owners;
    this.watch();
  }

  /** "Who is this pid" for new entries soon, without scanning more than once a second (of cadence). */
  private scanSoon(): void {
    if (this.tableSoon !== undefined) return;
    const wait = this.lastTableAt + TABLE_SOON_MS * this.opts.intervalScale - this.clock.monotonic();
    this.tableSoon = this.clock.setTimeout(() => {
      this.tableSoon = undefined;
      if (!this.live) return;
      void this.scanTable();
      void this.lookupPanes();
    }, Math.max(0, Math.ceil(wait)));
  }

  /** The R key: a full probe, every port and a table scan now, each after any run in progress. */
  async probeAllNow(): Promise<void> {
    const again = async (kind: Probe, fn: () => Promise<void>): Promise<void> => {
      await this.runner.current(kind);
      await fn();
    };
    await Promise.all([
      again('full', () => this.probeFull()),
      again('ports', () => this.probePorts()),
      again('table', () => this.scanTable(true)),
      again('panes', () => this.lookupPanes(true)),
    ]);
  }

  /** Fresh facts read elsewhere (the eviction re-probe) are news for everyone. */
  applyFresh(pids: ReadonlyMap<number, PidFacts>, ports: ReadonlyMap<number, PortFacts>): void {
    if (!this.live) return;
    const portsChanged = this.ports.fold(ports);
    if (portsChanged) this.trackOwners();
    const pidsChanged = this.foldPids(pids);
    if (pidsChanged || portsChanged) this.opts.onChange();
  }

  private get live(): boolean {
    return this.timers.length > 0 && !this.runner.aborted;
  }

  /**
   * Pids the fast tick must probe: the tick exists to see deaths, so not those already known gone
   * (a gone pid can only come back as another process, a recycled pid, which the full probe finds
   * within its cadence; and a dead pid's kill(0) is the costly one: it throws). A pid known alive
   * that kill(0) still finds is settled here without a facts object or a Map entry: an idle
   * monitor re-checks hundreds of live pids four times a second and allocates nothing for them.
   * (Listing /proc instead cost more: ~0.6 ms a tick against ~0.5 ms for 600 kill(0)s, plus the
   * garbage of 700 strings.)
   */
  private killTargets(): number[] {
    const out: number[] = [];
    for (const pid of this.pids.keys) {
      const kill = this.pids.facts.get(pid)?.kill;
      if (kill === 'ESRCH') continue;
      if (kill === 'ok' && this.probes.stillRunning(pid)) continue;
      out.push(pid);
    }
    return out;
  }

  private probeKill(): Promise<void> {
    if (this.pids.keys.length === 0) return Promise.resolve();
    return this.runner.run('kill', async (signal) => {
      const pids = this.killTargets();
      const result = pids.length === 0 ? new Map<number, PidFacts>() : await this.probes.probePids(pids, { signal, now: this.opts.now });
      if (signal.aborted) return;
      this.counts.kill++;
      this.sweptAt.kill = this.opts.now();
      const changed = this.foldPids(result, (pid, next) => {
        if (!this.pids.has(pid)) return false;
        const merged = mergeKill(this.pids.facts.get(pid), next);
        if (merged.kind === 'store') {
          this.pids.facts.set(pid, merged.facts);
          return true;
        }
        if (merged.kind === 'full' && !this.pids.awaiting.has(pid)) this.pids.urgent.add(pid);
        return false;
      });
      this.os = { ...this.os, lastProbeAt: this.opts.now() };
      if (changed) this.opts.onChange();
      if (this.pids.urgent.size > 0) this.probeUrgentPids();
    });
  }

  private probeFull(): Promise<void> {
    if (this.pids.keys.length === 0) return Promise.resolve();
    return this.runner.run('full', async (signal) => {
      const result = await this.probes.probePids(this.pids.keys, { full: true, signal, now: this.opts.now });
      if (signal.aborted) return;
      this.counts.full++;
      this.sweptAt.full = this.opts.now();
      this.afterFull(result);
    });
  }

  private probeUrgent(): void {
    if (this.pids.urgent.size > 0) this.probeUrgentPids();
    if (this.ports.urgent.size > 0) this.probeUrgentPorts();
  }

  /** New pids, and pids that came back to life: probed fully at once, not at the next 2 s tick. */
  private probeUrgentPids(): void {
    const probe = (batch: number[], signal: AbortSignal) => this.probes.probePids(batch, { full: true, signal, now: this.opts.now });
    this.runner.drain('urgentPids', this.pids.urgent, probe, (result) => {
      this.counts.full++;
      this.afterFull(result);
    });
  }

  private probeUrgentPorts(): void {
    const probe = (batch: number[], signal: AbortSignal) => this.probes.probePortFacts(batch, { signal, now: this.opts.now });
    this.runner.drain('urgentPorts', this.ports.urgent, probe, (result) => {
      this.counts.ports++;
      this.afterPorts(result);
    });
  }

  private afterFull(result: ReadonlyMap<number, PidFacts>): void {
    const wasAwaiting = this.pids.awaiting.size > 0;
    const changed = this.foldPids(result);
    this.os = { ...this.os, lastProbeAt: this.opts.now() };
    if (changed || (wasAwaiting && this.firstProbesDone)) this.opts.onChange();
  }

  private probePorts(): Promise<void> {
    if (this.ports.keys.length === 0) return Promise.resolve();
    return this.runner.run('ports', async (signal) => {
      const result = await this.probes.probePortFacts(this.ports.keys, { signal, now: this.opts.now });
      if (signal.aborted) return;
      this.counts.ports++;
      this.sweptAt.ports = this.opts.now();
      this.afterPorts(result);
    });
  }

  private afterPorts(result: ReadonlyMap<number, PortFacts>): void {
    const wasAwaiting = this.ports.awaiting.size > 0;
    const changed = this.ports.fold(result);
    if (changed) this.trackOwners();
    if (changed || (wasAwaiting && this.firstProbesDone)) this.opts.onChange();
  }

  /** The slow path: attach "who is this pid" to registered pids only. Skipped while nothing is tracked. */
  private scanTable(evenIfIdle = false): Promise<void> {
    if (this.pids.keys.length === 0 && !evenIfIdle) return Promise.resolve();
    return this.runner.run('table', async (signal) => {
      this.lastTableAt = this.clock.monotonic();
      const plan = this.rows.plan(this.pids, evenIfIdle);
      const scan = await this.probes.scanProcessTable({ signal, pids: plan.pids });
      if (signal.aborted) return;
      this.counts.table++;
      const { os, changed } = this.rows.apply(scan, plan, this.pids, this.os);
      this.os = os;
      if (changed) this.opts.onChange();
    });
  }

  /** Which tmux pane each pid runs in: one list-panes a run, from a provider that can tell. Skipped while nothing is tracked. */
  private lookupPanes(everything = false): Promise<void> {
    const findPanes = this.probes.findPanes;
    if (findPanes === undefined || this.pids.keys.length === 0) return Promise.resolve();
    return this.runner.run('panes', async (signal) => {
      const walked = this.paneTracker.plan(this.pids, everything);
      const lookup = await findPanes.call(this.probes, walked, { signal });
      if (signal.aborted) return;
      if (this.paneTracker.apply(lookup, walked, this.pids)) this.opts.onChange();
    });
  }
}

// The OS half of the store: which pids and ports to watch, the probe cadence, and the facts
// as last probed. A probe never overlaps itself (a slow run makes the next tick a no-op), and
// only a change reconcile can see calls `onChange`: a stable pid costs a kill(0) and nothing else.

import type { OsFacts, PidFacts, PortFacts, ProcessInfo } from '../core/types.js';
import { createOwnerHints, probePids, probePortFacts, scanProcessTable } from '../os/index.js';
import { stillRunning } from '../os/liveness.js';
import type { OsState } from './types.js';
import { isAlive, mergeFull, mergeKill, mergePort, mergeProcess } from './fact-merge.js';
import { ProbeRunner } from './probe-runner.js';
import type { Targets } from './probe-targets.js';

export interface OsFactsOptions {
  /** Multiplies every cadence (--interval). */
  readonly intervalScale: number;
  readonly now: () => number;
  /** Something reconcile can see changed (or the first probes just completed). */
  readonly onChange: () => void;
}

/** Cadences in ms at intervalScale 1. */
export const CADENCE = { kill: 250, full: 2_000, ports: 2_000, table: 5_000 } as const;
/** No cadence below this, whatever the scale: a tiny --interval must not become a busy loop. */
const MIN_INTERVAL_MS = 10;
/** Every this many table scans (a minute at the default cadence), every live tracked pid's row is read again. */
const TABLE_REFRESH_EVERY = 12;

type Probe = 'kill' | 'full' | 'ports' | 'table' | 'urgentPids' | 'urgentPorts';
export type ProbeCounts = Record<'kill' | 'full' | 'ports' | 'table', number>;

export class OsFactsTracker {
  private readonly pids = new Map<number, PidFacts>();
  private readonly ports = new Map<number, PortFacts>();
  /** Handed to reconcile as is: the maps are only replaced into, never copied. */
  readonly facts: OsFacts = { pids: this.pids, ports: this.ports };
  private pidSet = new Set<number>();
  private pidList: number[] = [];
  private portSet = new Set<number>();
  private portList: number[] = [];
  /** Tracked but not yet fully probed (pids) or probed at all (ports): `settled` waits for these. */
  private readonly awaitingFull = new Set<number>();
  private readonly awaitingPort = new Set<number>();
  private readonly urgentPids = new Set<number>();
  private readonly urgentPorts = new Set<number>();
  private readonly runner = new ProbeRunner<Probe>();
  /** Where the last socket-owner search found each socket: the next one reads those processes first. */
  private readonly ownerHints = createOwnerHints();
  /** What the view asks to watch; the pids that serve watched ports are watched on top of it. */
  private viewTargets: Targets = { pids: new Set(), ports: new Set() };
  private ownerPids = new Set<number>();
  private timers: NodeJS.Timeout[] = [];
  private table: ReadonlyMap<number, ProcessInfo> | undefined;
  private lastTableAt = -Infinity;
  private tableScans = 0;
  private tableSoon: NodeJS.Timeout | undefined;
  private os: OsState = { processTable: 'pending', processTableError: undefined, lastProbeAt: undefined };
  readonly counts: ProbeCounts = { kill: 0, full: 0, ports: 0, table: 0 };

  constructor(private readonly opts: OsFactsOptions) {}

  get state(): OsState {
    return this.os;
  }

  /** Every tracked pid has had a full probe and every tracked port a probe. */
  get firstProbesDone(): boolean {
    return this.awaitingFull.size === 0 && this.awaitingPort.size === 0;
  }

  /** What the last process table scan knows about a pid. */
  processInfo(pid: number): ProcessInfo | undefined {
    return this.table?.get(pid) ?? this.pids.get(pid)?.process;
  }

  start(): void {
    if (this.timers.length > 0) return;
    this.runner.reset();
    const every = (ms: number, fn: () => void): void => {
      this.timers.push(setInterval(fn, Math.max(MIN_INTERVAL_MS, Math.round(ms * this.opts.intervalScale))));
    };
    every(CADENCE.kill, () => void this.probeKill());
    every(CADENCE.full, () => void this.probeFull());
    every(CADENCE.ports, () => void this.probePorts());
    every(CADENCE.table, () => void this.scanTable());
    // One scan up front, so an unavailable process table is reported from the start.
    void this.scanTable(true);
    if (this.urgentPids.size > 0) this.probeUrgentPids();
    if (this.urgentPorts.size > 0) this.probeUrgentPorts();
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    if (this.tableSoon) clearTimeout(this.tableSoon);
    this.tableSoon = undefined;
    await this.runner.stop();
  }

  /** New targets: new pids and ports are probed right away, dropped ones forgotten. */
  setTargets(view: Targets): void {
    this.viewTargets = view;
    this.applyTargets(this.withOwners(view));
  }

  /** The view's targets plus the processes serving its ports (a pid-less entry is judged by them). */
  private withOwners(view: Targets): Targets {
    if (this.ownerPids.size === 0) return view;
    const pids = new Set(view.pids);
    for (const pid of this.ownerPids) pids.add(pid);
    return { pids, ports: view.ports };
  }

  /** After a port probe: start (or stop) watching the pids that now serve watched ports. */
  private trackOwners(): void {
    const owners = new Set<number>();
    for (const facts of this.ports.values()) for (const pid of facts.owners ?? []) owners.add(pid);
    if (owners.size === this.ownerPids.size && [...owners].every((pid) => this.ownerPids.has(pid))) return;
    this.ownerPids = owners;
    this.applyTargets(this.withOwners(this.viewTargets));
  }

  private applyTargets(next: Targets): void {
    let added = false;
    for (const pid of next.pids) {
      if (this.pidSet.has(pid)) continue;
      this.awaitingFull.add(pid);
      this.urgentPids.add(pid);
      added = true;
    }
    for (const pid of this.pidSet) {
      if (next.pids.has(pid)) continue;
      this.pids.delete(pid);
      this.awaitingFull.delete(pid);
      this.urgentPids.delete(pid);
    }
    for (const port of next.ports) {
      if (this.portSet.has(port)) continue;
      this.awaitingPort.add(port);
      this.urgentPorts.add(port);
      added = true;
    }
    for (const port of this.portSet) {
      if (next.ports.has(port)) continue;
      this.ports.delete(port);
      this.awaitingPort.delete(port);
      this.urgentPorts.delete(port);
    }
    this.pidSet = next.pids;
    this.portSet = next.ports;
    this.pidList = [...next.pids];
    this.portList = [...next.ports];
    if (!added || !this.live) return;
    if (this.urgentPids.size > 0) this.probeUrgentPids();
    if (this.urgentPorts.size > 0) this.probeUrgentPorts();
    this.scanSoon();
  }

  /** "Who is this pid" for new entries soon, without scanning more than once a second (of cadence). */
  private scanSoon(): void {
    if (this.tableSoon) return;
    const wait = this.lastTableAt + (CADENCE.table / 5) * this.opts.intervalScale - performance.now();
    this.tableSoon = setTimeout(() => {
      this.tableSoon = undefined;
      if (this.live) void this.scanTable();
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
    ]);
  }

  /** Fresh facts read elsewhere (the eviction re-probe) are news for everyone. */
  applyFresh(pids: ReadonlyMap<number, PidFacts>, ports: ReadonlyMap<number, PortFacts>): void {
    if (!this.live) return;
    const portsChanged = this.foldPorts(ports);
    if (portsChanged) this.trackOwners();
    const pidsChanged = this.foldFull(pids);
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
    for (const pid of this.pidList) {
      const kill = this.pids.get(pid)?.kill;
      if (kill === 'ESRCH') continue;
      if (kill === 'ok' && stillRunning(pid)) continue;
      out.push(pid);
    }
    return out;
  }

  private probeKill(): Promise<void> {
    if (this.pidList.length === 0) return Promise.resolve();
    return this.runner.run('kill', async (signal) => {
      const pids = this.killTargets();
      const result = pids.length === 0 ? new Map<number, PidFacts>() : await probePids(pids, { signal, now: this.opts.now });
      if (signal.aborted) return;
      this.counts.kill++;
      let changed = false;
      for (const [pid, next] of result) {
        if (!this.pidSet.has(pid)) continue;
        const merged = mergeKill(this.pids.get(pid), next);
        if (merged.kind === 'store') {
          this.pids.set(pid, merged.facts);
          changed = true;
        } else if (merged.kind === 'full' && !this.awaitingFull.has(pid)) this.urgentPids.add(pid);
      }
      this.os = { ...this.os, lastProbeAt: this.opts.now() };
      if (changed) this.opts.onChange();
      if (this.urgentPids.size > 0) this.probeUrgentPids();
    });
  }

  private probeFull(): Promise<void> {
    if (this.pidList.length === 0) return Promise.resolve();
    return this.runner.run('full', async (signal) => {
      const result = await probePids(this.pidList, { full: true, signal, now: this.opts.now });
      if (signal.aborted) return;
      this.counts.full++;
      this.afterFull(result);
    });
  }

  /** New pids, and pids that came back to life: probed fully at once, not at the next 2 s tick. */
  private probeUrgentPids(): void {
    const probe = (batch: number[], signal: AbortSignal) => probePids(batch, { full: true, signal, now: this.opts.now });
    this.runner.drain('urgentPids', this.urgentPids, probe, (result) => {
      this.counts.full++;
      this.afterFull(result);
    });
  }

  private probeUrgentPorts(): void {
    const probe = (batch: number[], signal: AbortSignal) => probePortFacts(batch, { signal, now: this.opts.now, hints: this.ownerHints });
    this.runner.drain('urgentPorts', this.urgentPorts, probe, (result) => {
      this.counts.ports++;
      this.afterPorts(result);
    });
  }

  private afterFull(result: ReadonlyMap<number, PidFacts>): void {
    const wasAwaiting = this.awaitingFull.size > 0;
    const changed = this.foldFull(result);
    this.os = { ...this.os, lastProbeAt: this.opts.now() };
    if (changed || (wasAwaiting && this.firstProbesDone)) this.opts.onChange();
  }

  private foldFull(result: ReadonlyMap<number, PidFacts>): boolean {
    let changed = false;
    for (const [pid, next] of result) {
      if (!this.pidSet.has(pid)) continue;
      this.awaitingFull.delete(pid);
      const merged = mergeFull(this.pids.get(pid), next);
      if (merged) {
        this.pids.set(pid, merged);
        changed = true;
      }
    }
    return changed;
  }

  private probePorts(): Promise<void> {
    if (this.portList.length === 0) return Promise.resolve();
    return this.runner.run('ports', async (signal) => {
      const result = await probePortFacts(this.portList, { signal, now: this.opts.now, hints: this.ownerHints });
      if (signal.aborted) return;
      this.counts.ports++;
      this.afterPorts(result);
    });
  }

  private afterPorts(result: ReadonlyMap<number, PortFacts>): void {
    const wasAwaiting = this.awaitingPort.size > 0;
    const changed = this.foldPorts(result);
    if (changed) this.trackOwners();
    if (changed || (wasAwaiting && this.firstProbesDone)) this.opts.onChange();
  }

  private foldPorts(result: ReadonlyMap<number, PortFacts>): boolean {
    let changed = false;
    for (const [port, next] of result) {
      if (!this.portSet.has(port)) continue;
      this.awaitingPort.delete(port);
      const merged = mergePort(this.ports.get(port), next);
      if (merged) {
        this.ports.set(port, merged);
        changed = true;
      }
    }
    return changed;
  }

  /** The slow path: attach "who is this pid" to registered pids only. Skipped while nothing is tracked. */
  private scanTable(evenIfIdle = false): Promise<void> {
    if (this.pidList.length === 0 && !evenIfIdle) return Promise.resolve();
    return this.runner.run('table', async (signal) => {
      this.lastTableAt = performance.now();
      // Only live tracked pids: their rows are all the table is read for (processInfo, the
      // evidence of a registered pid). A process that already has its row keeps it (only an exec
      // changes name and command), so between full refreshes only new processes are read.
      const everything = evenIfIdle || this.tableScans++ % TABLE_REFRESH_EVERY === 0;
      const pids = this.pidList.filter((pid) => {
        const f = this.pids.get(pid);
        return f !== undefined && isAlive(f.kill) && (everything || f.process === undefined);
      });
      const scan = await scanProcessTable({ signal, pids });
      if (signal.aborted) return;
      this.counts.table++;
      let changed = false;
      if (!scan.ok) {
        // Reported once; liveness never depends on the table, so everything else keeps going.
        if (this.os.processTable !== 'unavailable') {
          this.os = { ...this.os, processTable: 'unavailable', processTableError: scan.error };
          changed = true;
        }
        this.table = undefined;
      } else {
        if (this.os.processTable !== 'ok') {
          this.os = { ...this.os, processTable: 'ok', processTableError: undefined };
          changed = true;
        }
        if (everything || this.table === undefined) this.table = scan.processes;
        else {
          const table = new Map(this.table);
          for (const [pid, row] of scan.processes) table.set(pid, row);
          for (const pid of this.pidList) {
            const f = this.pids.get(pid);
            if (f !== undefined && !isAlive(f.kill)) table.delete(pid);
          }
          this.table = table;
        }
        for (const pid of pids) {
          const prev = this.pids.get(pid);
          const merged = prev && mergeProcess(prev, scan.processes.get(pid));
          if (merged) {
            this.pids.set(pid, merged);
            changed = true;
          }
        }
      }
      if (changed) this.opts.onChange();
    });
  }
}

// One interface for everything the engine asks the OS: liveness (kill + state and start time),
// ports (loopback connect + socket-table owners), the process table, the tmux pane of each pid
// (and switching to it). The engine takes a provider instead of importing probes, so its loop
// runs on fakes in tests and, next, on a provider per remote host; `localProbeProvider` is this
// machine, exactly as the probes behave on their own.
import { hostname } from 'node:os';
import type { PidFacts, PidNamespaceFacts, PortFacts } from '../core/types.js';
import { readPidNamespaces } from './pid-namespaces.js';
import { probePids, stillRunning } from './liveness.js';
import { probePortFacts } from './port-facts.js';
import { createOwnerHints } from './port-owner.js';
import { scanProcessTable, type ProcessTableResult } from './process-table.js';
import { createTmux, type PaneJump, type PaneLookup, type TmuxPane } from './tmux.js';
import { ancestorsOf, checkSame, listeningPortsOf, ProcessIndex, readProcesses, signalIfSame, treeWalkAvailable, walkDescendants, type DescendantsResult, type ProcessSample, type SameCheck, type SignalResult } from './process-tree.js';

export interface PidProbeOptions {
  /** Also read state and start time, not only whether the pid exists. */
  readonly full?: boolean;
  readonly signal?: AbortSignal;
  /** The clock `checkedAt` is read from. */
  readonly now?: () => number;
}

export interface PortProbeRunOptions {
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

export interface TableScanOptions {
  readonly signal?: AbortSignal;
  /** Only the rows of these pids are wanted. */
  readonly pids?: readonly number[];
}

/**
 * What a dead agent left running: its descendants walked while it lives, the remembered ones read
 * again, their listening ports, and a signal sent only to the same process (exact start re-read
 * right before it). This host only (Linux).
 */
export interface LeftoverProbes {
  /** Each root's live descendants; a root whose exact start is no longer the one given gets none. Throws only on abort. */
  descendants(rootStarts: ReadonlyMap<number, number>, opts: { readonly signal?: AbortSignal }): Promise<DescendantsResult>;
  /** Each pid as it is now (null: gone). Throws only on abort. */
  processes(pids: readonly number[], opts: { readonly signal?: AbortSignal }): Promise<ReadonlyMap<number, ProcessSample | null>>;
  /** The TCP ports each listens on. Throws only on abort. */
  listeningPorts(pids: readonly number[], opts: { readonly signal?: AbortSignal }): Promise<ReadonlyMap<number, readonly number[]>>;
  /** The parents of a pid, nearest first. */
  ancestors(pid: number): number[];
  signal(who: { readonly pid: number; readonly startTicks?: number | undefined }, signal: 'SIGTERM' | 'SIGKILL'): SignalResult;
  /** Still the same process (exact start read now), or why not. */
  checkSame(who: { readonly pid: number; readonly startTicks?: number | undefined }): SameCheck;
}

export interface ProbeProvider {
  /** The host these probes speak for. */
  readonly host: string;
  /** Facts for every usable pid (unusable ones are left out, never signalled). Throws only on abort. */
  probePids(pids: readonly number[], opts: PidProbeOptions): Promise<ReadonlyMap<number, PidFacts>>;
  /**
   * True when the pid still exists and is ours to signal, answered at once and allocating
   * nothing: the fast tick skips such pids. A provider that cannot tell cheaply says false (the
   * pid is then probed with the others).
   */
  stillRunning(pid: number): boolean;
  /** Connect probe and socket-table owners for every port. Throws only on abort. */
  probePortFacts(ports: readonly number[], opts: PortProbeRunOptions): Promise<ReadonlyMap<number, PortFacts>>;
  /** The process table (or why it is unavailable). Throws only on abort. */
  scanProcessTable(opts: TableScanOptions): Promise<ProcessTableResult>;
  /**
   * The tmux pane each of these pids runs in, from one `tmux list-panes` (or why tmux cannot
   * tell). A provider without it has no panes. Throws only on abort.
   */
  findPanes?(pids: readonly number[], opts: { readonly signal?: AbortSignal }): Promise<PaneLookup>;
  /** Switch this process's tmux client to a pane (the `o` key); one line says what happened. */
  jumpToPane?(pane: TmuxPane): Promise<PaneJump>;
  /**
   * Our pid namespace standing and, for each wanted namespace, its pids in our table (Linux). A
   * provider without it places no record of another namespace: those stay unverified.
   */
  pidNamespaces?(wanted: ReadonlySet<string>): Promise<PidNamespaceFacts>;
  /** The processes agents started (Linux, this host). A provider without it shows no leftovers. */
  readonly leftovers?: LeftoverProbes | undefined;
}

/** This host's leftover probes, when /proc can tell; its process index is kept between walks (only new processes are read). */
export function localLeftoverProbes(): LeftoverProbes | undefined {
  if (treeWalkAvailable() !== undefined) return undefined;
  const index = new ProcessIndex();
  return {
    descendants: (roots, opts) => walkDescendants(roots, { ...opts, index }),
    processes: (pids, opts) => readProcesses(pids, opts),
    listeningPorts: (pids, opts) => listeningPortsOf(pids, opts),
    ancestors: ancestorsOf,
    signal: signalIfSame,
    checkSame,
  };
}

/**
 * This machine. Each provider keeps its own socket-owner hints: the next owner search reads
 * first the processes where the last one found the sockets.
 */
/** What a host without pid namespaces says of them: one table, every pid in it. */
const ONE_PID_TABLE: PidNamespaceFacts = { initial: true, flat: true, namespaces: new Map(), checkedAt: 0 };

export function localProbeProvider(host: string = hostname()): ProbeProvider {
  const hints = createOwnerHints();
  const tmux = createTmux();
  return {
    host,
    probePids: (pids, opts) => probePids(pids, opts),
    stillRunning,
    probePortFacts: (ports, opts) => probePortFacts(ports, { ...opts, hints }),
    scanProcessTable: (opts) => scanProcessTable(opts),
    findPanes: (pids, opts) => tmux.findPanes(pids, opts),
    jumpToPane: (pane) => tmux.jumpToPane(pane),
    pidNamespaces: (wanted: ReadonlySet<string>) => Promise.resolve(process.platform === 'linux' ? readPidNamespaces(wanted) : ONE_PID_TABLE),
    leftovers: localLeftoverProbes(),
  };
}

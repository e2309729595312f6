// The engine's contract with the UI and the one-shot commands: a subscribable snapshot of
// findings and source states, a refresh, and an eviction executor. The UI owns no data.

import type { WatchEvent } from '../core/events.js';
import type { TmuxPane } from '../core/tmux.js';
import type { Leftover } from '../core/leftovers.js';
import type { Finding, ProcessInfo, Verdict } from '../core/types.js';
import type { EndLeftoversRequest, EndLeftoversSummary } from './end-leftovers.js';
import type { SourceState } from '../sources/types.js';

export interface OsState {
  /** The process table scan: 'ok', or why it is unavailable (one line). */
  readonly processTable: 'ok' | 'pending' | 'unavailable';
  readonly processTableError?: string | undefined;
  /** Local clock: the last completed liveness probe. */
  readonly lastProbeAt?: number | undefined;
  /** Found on start, one line each, sanitized: the audit log's mode tightened, a partial line repaired. */
  readonly notices?: readonly string[] | undefined;
  /** What local agents start is looked at here (Linux /proc): a dead agent's leftovers are known. */
  readonly leftoversTracked?: boolean | undefined;
}

/**
 * A finding of a source that is not reading now (refused, unreachable, reconnecting): the row as
 * last known, kept so nothing silently disappears, and never evictable until the source reads
 * its registry again (then fresh rows replace it).
 */
export interface Staleness {
  readonly source: string;
  /** Local clock: until when the row was known current. */
  readonly since: number;
  /** Why the source is not reading, in a few words ("token refused (401)", "connection refused"). */
  readonly why: string;
}

/**
 * A published finding: core's finding, marked by the engine when its source is not reading, when
 * the evidence its verdict needs is not in yet (`checking`: its process has not had its first
 * probe, or a claim's holder or own pid has not; its `unverified`, `offline` or `held` is only
 * "not yet"), and, for a problem whose process is gone, since when the OS has said so (`deadSince`).
 */
export type EngineFinding = Finding & {
  readonly stale?: Staleness | undefined;
  readonly checking?: true | undefined;
  /** Local clock: the first probe that found the process gone (ESRCH, or a zombie). */
  readonly deadSince?: number | undefined;
  /**
   * With `deadSince`: that probe was this monitor's first look at the process, so it ended at
   * some moment before `deadSince`, not at it (the AGE is then a lower bound, shown with "≥").
   */
  readonly goneAtFirstProbe?: true | undefined;
  /** Processes this row's dead agent started that still run: its leftovers (K ends them). */
  readonly leftovers?: readonly Leftover[] | undefined;
  /** The entry is gone from its registry; the row is shown only for its leftovers (nothing to evict). */
  readonly departed?: true | undefined;
};

/** The processes this row's dead agent left running, if any. */
export function leftoversOf(f: Finding): readonly Leftover[] | undefined {
  return (f as EngineFinding).leftovers;
}

/** The row stands for an agent gone from its registry, kept for its leftovers. */
export function departedOf(f: Finding): boolean {
  return (f as EngineFinding).departed === true;
}

/** The row waits for its first probe: say "checking", not `unverified`. */
export function checkingOf(f: Finding): boolean {
  return (f as EngineFinding).checking === true;
}

/** Since when the OS has said the process of a problem row is gone, if the engine knows. */
export function deadSinceOf(f: Finding): number | undefined {
  return (f as EngineFinding).deadSince;
}

/** The process was already gone at this monitor's first probe: `deadSince` is only the latest it can have ended. */
export function goneAtFirstProbeOf(f: Finding): boolean {
  return (f as EngineFinding).goneAtFirstProbe === true;
}

/** The stale mark the engine put on a finding, if any. */
export function staleOf(f: Finding): Staleness | undefined {
  return (f as EngineFinding).stale;
}

export interface EngineSnapshot {
  /** Every finding of every source: sessions first, then claims, in registry order. Rows of a source not reading carry `stale` (see staleOf). */
  readonly findings: readonly EngineFinding[];
  readonly sources: readonly SourceState[];
  readonly host: string;
  readonly os: OsState;
  readonly counts: Readonly<Record<Verdict, number>>;
  /** Findings whose verdict is a problem. */
  readonly problems: number;
  /** Rows still waiting for their first probe (each counted under its provisional verdict too: `unverified`, `offline`, `held`). */
  readonly checking?: number | undefined;
  /** Local clock: when this snapshot was computed. */
  readonly computedAt: number;
  /** Increments with every published snapshot. */
  readonly version: number;
  /** True once every source has had its first snapshot and every local pid one full probe. */
  readonly settled: boolean;
  /** What happened, oldest first, the last EVENTS_KEPT of them (from the first settled snapshot on). */
  readonly events?: readonly WatchEvent[] | undefined;
  /**
   * Local pid → the tmux pane it runs in; a dead pid keeps the pane it last ran in while that
   * pane exists. Absent or empty without tmux.
   */
  readonly panes?: ReadonlyMap<number, TmuxPane> | undefined;
  /** The remote hosts verified over ssh, in configuration order; absent when none is configured. */
  readonly hosts?: readonly HostStatus[] | undefined;
  /**
   * Agents gone from their registry whose leftovers still run, each as a row (`departed`, verdict
   * ghost, not a problem, not evictable): not among `findings` or `counts`, which are the registries'.
   */
  readonly departed?: readonly EngineFinding[] | undefined;
}

/** A remote host verified over ssh, as the header and `check --json` show it. Strings are sanitized. */
export interface HostStatus {
  /** The machine name the registry uses. */
  readonly machine: string;
  /** The ssh destination it is reached at. */
  readonly dest: string;
  readonly transport: 'ssh';
  readonly state: 'connecting' | 'up' | 'down';
  /** Why it is down, one line. */
  readonly reason?: string | undefined;
  /** What kind of failure (auth, host-key, refused, timeout, dropped, mismatch...). */
  readonly kind?: string | undefined;
  /** The last round trip of one request, whole ms. */
  readonly rttMs?: number | undefined;
  /** The name the remote gave. */
  readonly remoteName?: string | undefined;
  /** ssh connections made so far. */
  readonly connections: number;
}

/** What the `o` key did: switched, or why not (how to attach from outside tmux), in one line. */
export interface PaneJumpResult {
  readonly ok: boolean;
  readonly text: string;
}

/** How many events the engine keeps for the events pane. */
export const EVENTS_KEPT = 200;

/** Snapshots are published at least this far apart: ~30 a second at most (the UI paces other data frames alike). */
export const PUBLISH_GAP_MS = 33;

/**
 * What became of one selected entry in an eviction run: removed, found already gone, skipped (it
 * was not what the plan saw, or stale), refused by its registry, or failed (nothing was sent).
 */
export type EvictionOutcome = 'evicted' | 'already-gone' | 'skipped' | 'refused' | 'failed';

export interface EvictResult {
  readonly finding: Finding;
  readonly outcome: EvictionOutcome;
  /** Why it was skipped, the registry's refusal, or the failure, in one line. */
  readonly detail?: string | undefined;
  readonly forced: boolean;
}

export interface EvictProgress {
  /** 1-based position of the entry being handled, of `total`. */
  readonly index: number;
  readonly total: number;
  readonly finding: Finding;
  /** 'checking' before the re-probe, 'sending' once the audit intent is written; then the result. */
  readonly phase: 'checking' | 'sending' | EvictionOutcome;
  readonly detail?: string | undefined;
}

/** A record or lock a request of the run removed besides the entry it was sent for (agentctl's prune). */
export interface AlsoRemovedResult {
  readonly source: string;
  readonly kind: 'session' | 'claim';
  /** The session's id or the claim's resource. */
  readonly id: string;
  /** As the registry sent it, unsanitized. */
  readonly pid?: unknown;
  /** What happened to it ("no longer listed", "marked stopped"). */
  readonly change: string;
  /** The finding whose request removed it. */
  readonly by: Finding;
  /** It was selected too: its own result says which request removed it. */
  readonly selected: boolean;
}

export interface EvictSummary {
  readonly results: readonly EvictResult[];
  /** What the run's requests removed besides the entries they were sent for, each once. */
  readonly alsoRemoved?: readonly AlsoRemovedResult[] | undefined;
  readonly counts: Readonly<Record<EvictionOutcome, number>>;
  /** Selected but not evicted because they need force and force was not given. */
  readonly needsForce: readonly Finding[];
  /**
   * The run was cancelled (the request's signal): these planned entries were never re-checked,
   * audited or sent. Every entry in `results` was carried through to its end first.
   */
  readonly notSent?: readonly Finding[] | undefined;
}

export interface EvictRequest {
  readonly selection: readonly Finding[];
  /** Also evict findings whose verdict alone does not allow it (live, remote, unverified, held). */
  readonly force: boolean;
  readonly onProgress?: ((progress: EvictProgress) => void) | undefined;
  /**
   * Stops the run between entries: the entry being handled is carried through (sent and its
   * outcome audited, or not sent at all), the rest are reported as not sent, and the audit log
   * gets a `cancel` line naming them.
   */
  readonly signal?: AbortSignal | undefined;
}

export interface Engine {
  start(): void;
  stop(): Promise<void>;
  /** Stable identity until something changed (fits React's useSyncExternalStore). */
  getSnapshot(): EngineSnapshot;
  subscribe(listener: () => void): () => void;
  /** Probe everything and re-sync every source now (the R key). */
  refresh(): Promise<void>;
  /** Re-verify each entry, audit-log, send, one at a time; continues past failures. */
  evict(request: EvictRequest): Promise<EvictSummary>;
  /** What the last process table scan knows about a pid, for the detail view. */
  processInfo(pid: number): ProcessInfo | undefined;
  /** Local clock: when the OS was last asked about this row's process or port (the evidence keeps when its facts began). */
  lastChecked(f: Finding): number | undefined;
  /** Resolves once `settled` is true (or after timeoutMs, with whatever is known). */
  settled(timeoutMs: number): Promise<EngineSnapshot>;
  /** Switch the tmux client to the pane this local pid runs (or last ran) in. */
  jumpToPane?(pid: number): Promise<PaneJumpResult>;
  /** End dead agents' leftovers: SIGTERM, then SIGKILL after the grace, each re-verified and audited. */
  endLeftovers?(request: EndLeftoversRequest): Promise<EndLeftoversSummary>;
}

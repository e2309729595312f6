// What createEngine takes, and what it returns beyond the Engine contract: debug counters.

import type { LeftoverMemoryStore } from '../os/leftover-memory.js';
import type { ProbeProvider } from '../os/provider.js';
import type { RemotePortCheck } from '../os/remote-port-check.js';
import type { Source } from '../sources/types.js';
import type { Clock } from '../plumbing/clock.js';
import type { SshSettings } from './remote-hosts.js';
import type { ProbeCounts } from './os-facts.js';
import type { SshVerified } from './remote-ports.js';
import type { Engine, PaneJumpResult } from './types.js';
import type { EndLeftoversRequest, EndLeftoversSummary } from './end-leftovers.js';
import type { UpgradeProbe } from './handshakes.js';

export interface EngineOptions {
  readonly sources: readonly Source[];
  readonly hostName: string;
  readonly hostAliases?: readonly string[] | undefined;
  readonly pendingTtlMs?: number | undefined;
  /** --interval: multiplies every cadence. Default 1. */
  readonly intervalScale?: number | undefined;
  /** Default $XDG_STATE_HOME/ghostwatch/evictions.jsonl (XDG_STATE_HOME defaults to ~/.local/state). */
  readonly auditLogPath?: string | undefined;
  /** Who evicts, for the audit log. Default `${username}@${hostName}`. */
  readonly actor?: string | undefined;
  readonly readOnly?: boolean | undefined;
  /** The wall clock of facts, reconcile and snapshots. Default `clock.now`. */
  readonly now?: (() => number) | undefined;
  /** Where liveness, ports and the process table are read: the live probes and the eviction re-check. Default this machine. */
  readonly probes?: ProbeProvider | undefined;
  /** Every timer the engine arms and every gap it measures. Default the process's own. */
  readonly clock?: Clock | undefined;
  /** --probe-remote-ports: a TCP connect from this host to each remote entry's machine:port. Default off. */
  readonly probeRemotePorts?: boolean | undefined;
  /** Machines verified over SSH: never port-checked. Default: none. */
  readonly sshVerified?: SshVerified | undefined;
  /** Where remote port checks connect from (bounded, cached); default the real TCP checker. */
  readonly remotePortCheck?: RemotePortCheck | undefined;
  /**
   * Machines whose entries are verified over ssh (one connection per host, each probed on its
   * own): their entries get the same verdicts as local ones. None: every other machine is `remote`.
   */
  readonly ssh?: SshSettings | undefined;
  /** Where what agents started is kept between runs (a `check` from cron learns it for the next). Default: this run only. */
  readonly leftoverMemory?: LeftoverMemoryStore | undefined;
  /** Look at what agents start (their trees, a dead one's leftovers). Default true; `status` has no use for it. */
  readonly trackLeftovers?: boolean | undefined;
  /** K and `reap --leftovers`: how long SIGTERM gets before SIGKILL. Default 5 s. */
  readonly killGraceMs?: number | undefined;
  /** How an agent's own WebSocket port is asked whether it answers; default a real request to this host's loopback. */
  readonly upgradeProbe?: UpgradeProbe | undefined;
}

/** Debug counters: how much work the engine has done since it was created. */
export interface EngineStats {
  /** reconcile() runs of the whole view (eviction re-checks are not counted). */
  readonly recomputes: number;
  /** Snapshots published to subscribers. */
  readonly publishes: number;
  /** Completed probe runs of each kind (urgent full probes of new pids count as `full`). */
  readonly probes: Readonly<ProbeCounts>;
  /** What agents started: walks of their trees done, and processes remembered now (absent where not looked at). */
  readonly leftovers?: { readonly runs: number; readonly remembered: number } | undefined;
  /** Rounds of the "answering" probe of this host's WebSocket agents, once there has been one. */
  readonly handshakes?: number | undefined;
  /** Per host verified over ssh: connections made, request bytes sent and probe rounds completed (kill ticks, full and port probes; the bench reads them). */
  readonly ssh?: readonly { readonly machine: string; readonly connections: number; readonly bytesSent: number; readonly rounds: number; readonly linesPushed: number; readonly linesDropped: number }[] | undefined;
}

export interface LiveEngine extends Engine {
  stats(): EngineStats;
  jumpToPane(pid: number): Promise<PaneJumpResult>;
  endLeftovers(request: EndLeftoversRequest): Promise<EndLeftoversSummary>;
}

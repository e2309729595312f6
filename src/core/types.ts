// The domain vocabulary of ghostwatch. Pure data: no I/O, no clock, no Node APIs.
// All times are Unix epoch milliseconds on the LOCAL clock unless a field says otherwise.

import type { InvalidTime } from './time.js';
import type { ClaimVerdict, SessionVerdict, Verdict } from './verdicts.js';

export type { InvalidTime } from './time.js';

// The verdicts and their traits live in verdicts.ts (one table); re-exported here, where the
// rest of the vocabulary is.
export {
  MARKER_MEANINGS,
  PROBLEM_VERDICTS,
  VERDICT_TRAITS,
  VERDICTS,
  VERDICTS_WORST_FIRST,
  verdictsMarked,
  type ClaimVerdict,
  type SessionVerdict,
  type Verdict,
  type VerdictMarker,
  type VerdictTone,
  type VerdictTraits,
} from './verdicts.js';

/**
 * A session as a registry reports it, normalized by its source adapter.
 * `pid` and `port` stay as the registry sent them: core decides whether they are usable,
 * so a hostile or broken registry can never make us signal pid 0, -1 or 1.
 * Registry timestamps are on the REGISTRY's clock (converted to ms by the adapter);
 * `Policy.registryClockOffsetMs` says how far that clock is from ours.
 */
export interface SessionEntry {
  readonly source: string;
  readonly id: string;
  /** Host the session runs on, as the registry reports it. */
  readonly machine?: string | undefined;
  readonly cwd?: string | undefined;
  readonly port?: unknown;
  /**
   * What the agent serves on `port`, when its registry says (hypivisor: a WebSocket endpoint at
   * `/`, which its proxy opens): only such a port gets the "not answering" probe.
   */
  readonly portProtocol?: 'websocket' | undefined;
  readonly pid?: unknown;
  /** The registry says this session is offline (what it then does with it: `cleanup`). */
  readonly offline?: boolean | undefined;
  /**
   * With `offline`: the registry itself records the session as over (agentctl's stopped,
   * completed...): history it keeps on purpose, not a lie. Without it, offline means the
   * registering connection dropped (hypivisor), and a dead process behind it is a ghost.
   */
  readonly ended?: boolean | undefined;
  /**
   * What the registry itself does with this record once it is offline, in a few words for the
   * reason ("the registry sweeps it once its TTL has passed", "agentctl never removes it"). Set
   * by the adapter, which knows its registry; none: the reason claims no cleanup at all.
   */
  readonly cleanup?: string | undefined;
  /**
   * The registry's own liveness check counts EPERM (a process another user owns) as dead, as
   * agentctl's does. Where such a registry calls the record over and kill says EPERM, the finding
   * carries a warning; ghostwatch never follows the registry there (EPERM is alive).
   */
  readonly epermCountsDead?: boolean | undefined;
  /** Registry status text, for display only (e.g. "active", "offline", "stopped"). */
  readonly status?: string | undefined;
  /** Registry clock. */
  readonly lastSeen?: number | undefined;
  /** Registry clock. */
  readonly offlineSince?: number | undefined;
  /** Registry clock. */
  readonly registeredAt?: number | undefined;
  /** Process start time as the registering client read it: the AGENT's clock (same host, so ours when local). */
  readonly pidStartedAt?: number | undefined;
  /**
   * The process's exact start, in clock ticks since boot (Linux /proc/<pid>/stat field 22), as the
   * agent recorded it (Claude Code's `procStart`): the live process must have exactly this start.
   */
  readonly pidStartTicks?: number | undefined;
  /**
   * The pid table `pid` belongs to, when the record names it (Claude Code's `pidDomain`): a pid
   * means something only in its own pid namespace. Undefined: this host's table, as always.
   */
  readonly pidDomain?: PidDomain | undefined;
  /**
   * The agent's own session id, when the registry's `id` may differ from it (a file per process:
   * two processes can carry one session). Entries of one source with one sessionId and two live
   * processes are the same session open twice.
   */
  readonly sessionId?: string | undefined;
  /** Local clock: when ghostwatch first observed this entry with its current pid. Set by the engine. */
  readonly firstObservedAt?: number | undefined;
  /** Order in which ghostwatch saw entries join (higher = later); entries of one snapshot share a value. */
  readonly joinSeq?: number | undefined;
  /**
   * Time fields the registry gave that are no time (core/time.ts: NaN, or more than a hundred
   * years from now): their fields above are undefined (unknown), and these are shown as such.
   */
  readonly invalidTimes?: readonly InvalidTime[] | undefined;
  /** The entry exactly as the registry sent it, for the detail view, JSON and the audit log. */
  readonly raw?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * A pid namespace as a record names it: `linux:<machine-id>:pid:[<inode>]`. `unreadable` says why
 * a domain could not be read (it is then never judged against this host's table).
 */
export interface PidDomain {
  /** The text as the record gave it (sanitized on output like every registry string). */
  readonly text: string;
  readonly machineId?: string | undefined;
  /** The namespace's inode number, as digits. */
  readonly namespace?: string | undefined;
  readonly unreadable?: string | undefined;
}

/** A claim / lock on a resource, held by a session. */
export interface ClaimEntry {
  readonly source: string;
  readonly resource: string;
  /**
   * Which claim this is, when a registry allows several on one resource (agentctl: a manual lock
   * on top of an auto-lock, a second auto-lock with --force): unique within its source. Undefined:
   * the resource alone names the claim.
   */
  readonly key?: string | undefined;
  /** The id of the holding session, when the registry names one. */
  readonly holder?: string | undefined;
  readonly pid?: unknown;
  /** Host of the claim's pid, when the source knows it (local-only sources set this host). */
  readonly machine?: string | undefined;
  /** Registry clock. */
  readonly acquiredAt?: number | undefined;
  /** Free text: who set a manual lock, why. Display only. */
  readonly note?: string | undefined;
  /** Registry clock: the holder's last heartbeat, when the claim manager keeps one. */
  readonly heartbeatAt?: number | undefined;
  /** The claim is stale once its last heartbeat is older than this (the claim manager's own rule). */
  readonly staleAfterMs?: number | undefined;
  /** As SessionEntry's: time fields that are no time, read as unknown. */
  readonly invalidTimes?: readonly InvalidTime[] | undefined;
  readonly raw?: Readonly<Record<string, unknown>> | undefined;
}

/** What the registries say, merged across sources. */
export interface RegistryView {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

/** Outcome of kill(pid, 0): ok and EPERM both mean the process exists. */
export type KillResult = 'ok' | 'ESRCH' | 'EPERM' | 'error';

/** What the OS said about one pid at one moment. */
export interface PidFacts {
  readonly pid: number;
  readonly kill: KillResult;
  /** errno text or message when kill === 'error' or a read failed. */
  readonly error?: string | undefined;
  /** Process state letter (Linux /proc stat field 3, macOS ps stat first letter): R S D Z T ... */
  readonly state?: string | undefined;
  /** Process start time, local clock, epoch ms. */
  readonly startedAt?: number | undefined;
  /** The same start exactly: clock ticks since boot (Linux /proc/<pid>/stat field 22). */
  readonly startTicks?: number | undefined;
  /** kill says the process exists but /proc will not show it (hidepid): state and start time unknown. */
  readonly detailsHidden?: string | undefined;
  /** The start time a host answered that is no time (core/time.ts), as text: `startedAt` is then unknown. */
  readonly invalidStart?: string | undefined;
  /** Local clock: when these facts were read. */
  readonly checkedAt: number;
  /** From the process table scan, for "who is this pid" evidence. */
  readonly process?: ProcessInfo | undefined;
  /** As read (a probe's reading): CPU time the process has used so far, user + system, ms. */
  readonly cpuMs?: number | undefined;
  /** As read: resident memory, bytes. */
  readonly rssBytes?: number | undefined;
  /** What the process costs, from the last readings (the engine sets it from two full probes). */
  readonly usage?: ProcessUsage | undefined;
  /** Local clock: the first probe that found the process stopped (state T or t), while it stays stopped. */
  readonly stoppedSince?: number | undefined;
}

/** What a process costs: CPU and resident memory, as the table shows them. */
export interface ProcessUsage {
  /** CPU used, % of one core (above 100 on several): over the interval between the last two full probes, or its life. */
  readonly cpuPct?: number | undefined;
  /** `interval`: between the last two full probes; `life`: since the process started (only one reading yet). */
  readonly cpuOver?: 'interval' | 'life' | undefined;
  readonly rssBytes?: number | undefined;
}

/**
 * A WebSocket upgrade request to an agent's own port (this host only) and what came back within
 * the bound: an HTTP answer of any status proves the process serves its port.
 */
export interface HandshakeFacts {
  readonly port: number;
  /** `answered`: an HTTP status line came; `timeout`: none within the bound; `closed`: closed without one; `error`: the connect failed. */
  readonly result: 'answered' | 'timeout' | 'closed' | 'error';
  /** The status line, or the error's code. */
  readonly detail?: string | undefined;
  /** How long the answer (or the wait) took, ms. */
  readonly ms: number;
  readonly boundMs: number;
  /** Probes in a row that got no answer (timeout or closed), this one included. */
  readonly misses: number;
  /** Local clock. */
  readonly checkedAt: number;
}

/** One row of the process table scan. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly name: string;
  readonly cmd: string;
  /** Local clock, epoch ms. */
  readonly startedAt?: number | undefined;
}

export type PortResult = 'open' | 'refused' | 'timeout' | 'error';

export interface PortFacts {
  readonly port: number;
  readonly result: PortResult;
  readonly detail?: string | undefined;
  readonly checkedAt: number;
  /** Pids holding a listening socket on this port (from the socket table), when they could be read. */
  readonly owners?: readonly number[] | undefined;
  /** Why no owner could be named although something listens (another user's process, hidepid). */
  readonly ownerUnknown?: string | undefined;
  /** The addresses that listen on this port ("127.0.0.1", "::", "10.1.2.3"), from the socket table. */
  readonly listeners?: readonly string[] | undefined;
}

/**
 * A TCP connect from this host to a remote entry's `machine:port` (--probe-remote-ports): the
 * connection hypivisor's proxy makes. Says whether something accepts there, never which process.
 */
export interface RemotePortFacts {
  readonly machine: string;
  readonly port: number;
  readonly result: PortResult;
  /** The error code or why the check was not made ("ECONNREFUSED", "cannot resolve build-42 (ENOTFOUND)"). */
  readonly detail?: string | undefined;
  /** Local clock. */
  readonly checkedAt: number;
}

/** The operating system's ground truth, as last probed. */
export interface OsFacts {
  readonly pids: ReadonlyMap<number, PidFacts>;
  readonly ports: ReadonlyMap<number, PortFacts>;
  /** Port checks of remote entries, by remotePortKey(machine, port); absent when they are off. */
  readonly remotePorts?: ReadonlyMap<string, RemotePortFacts> | undefined;
  /**
   * Other hosts ghostwatch reaches itself (over ssh), each with its own facts: pid 1234 there is
   * not pid 1234 here. An entry of one of these machines is judged by the same rules as a local
   * one, on that host's facts, while the host is up; otherwise it is unverified, with the reason.
   */
  readonly remotes?: readonly RemoteHostFacts[] | undefined;
  /** This host's pid namespaces, read when some entry names a pid domain; absent until read (or not Linux). */
  readonly pidNamespaces?: PidNamespaceFacts | undefined;
  /** The WebSocket probes of this host's agents' own ports (by port); absent when none were made. */
  readonly handshakes?: ReadonlyMap<number, HandshakeFacts> | undefined;
}

/**
 * Where this process stands among the machine's pid namespaces, and the namespaces entries name:
 * for each, which of its pids are which host pids (from NSpid of the processes in it).
 */
export interface PidNamespaceFacts {
  /** This machine's id (/etc/machine-id); undefined: unknown, so no domain can be matched. */
  readonly machineId?: string | undefined;
  /** The inode of our own pid namespace. */
  readonly own?: string | undefined;
  /** We run in the machine's initial pid namespace: every process of the machine is in our table. */
  readonly initial: boolean;
  /** This OS has a single pid table (macOS, BSD): no record's pid belongs to another namespace. */
  readonly flat?: boolean | undefined;
  /** Why we may not see every process (not root, hidepid); undefined: we see them all. */
  readonly blind?: string | undefined;
  /**
   * Each namespace asked about: its pids -> our (host) pids, or null when no process holds that
   * namespace any more. A namespace not in the map was not asked about (yet).
   */
  readonly namespaces: ReadonlyMap<string, ReadonlyMap<number, number> | null>;
  /** Local clock: when the namespaces were read. */
  readonly checkedAt: number;
}

/** How a remote host's connection stands: only `up` lets its facts decide a verdict. */
export type RemoteHostState = 'connecting' | 'up' | 'down';

/** One remote host as reconcile sees it: its state and the facts read there. */
export interface RemoteHostFacts {
  /** The machine name the registry uses for it (matched as this host's name is: case, short name). */
  readonly machine: string;
  readonly transport: 'ssh';
  readonly state: RemoteHostState;
  /** Why it cannot answer (down), one line. */
  readonly reason?: string | undefined;
  /** The last round trip of one request, ms. */
  readonly rttMs?: number | undefined;
  /** The pids and ports of that host, as last probed there. */
  readonly facts: Pick<OsFacts, 'pids' | 'ports'>;
}

export interface Policy {
  /** This host's name (os.hostname()). */
  readonly hostName: string;
  /** Other names this host answers to (--host-alias). */
  readonly hostAliases: readonly string[];
  /** A `pending-*` entry older than this is a straggler. Default 120 s. */
  readonly pendingTtlMs: number;
  /** Slack when comparing a process start time with a registration time (clock resolution, rounding). */
  readonly startToleranceMs: number;
  /** Per source: registry clock minus local clock, in ms (0 when unknown). */
  readonly registryClockOffsetMs?: Readonly<Record<string, number>> | undefined;
  /** A local-clock time as the person reads it ("12:03:04"); the engine gives local time. Default: UTC. */
  readonly clockText?: ((localMs: number) => string) | undefined;
}

export const DEFAULT_PENDING_TTL_MS = 120_000;
export const DEFAULT_START_TOLERANCE_MS = 2_000;

export function defaultPolicy(hostName: string, overrides: Partial<Policy> = {}): Policy {
  // An override given as undefined keeps the default: `{pendingTtlMs: undefined}` must not
  // silently switch pending detection off.
  const set = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return {
    hostName,
    hostAliases: [],
    pendingTtlMs: DEFAULT_PENDING_TTL_MS,
    startToleranceMs: DEFAULT_START_TOLERANCE_MS,
    ...set,
  };
}

export type PidDomainStatus = 'this-namespace' | 'mapped' | 'namespace-gone' | 'pid-not-in-namespace' | 'unseen' | 'other-machine' | 'unreadable';

/** Which time a start-time comparison was made against (acquired_at: a claim's, for its own pid). */
export type StartReference = 'pid_started_at' | 'registered_at' | 'first_observed' | 'acquired_at';

/** Everything a verdict was decided on. JSON-safe: shown in the detail view, `check --json` and the audit log. */
export interface Evidence {
  readonly host: {
    readonly machine: string | null;
    readonly local: boolean;
    readonly matchedAs?: 'exact' | 'short-name' | 'alias' | undefined;
    /** The entry's machine is verified over ssh: which host, how it stood, and "via ssh build-42 (rtt 12 ms)". */
    readonly ssh?:
      | {
          readonly host: string;
          readonly state: RemoteHostState;
          readonly reason?: string | undefined;
          readonly rttMs?: number | undefined;
          readonly via: string;
        }
      | undefined;
  };
  readonly pid?:
    | {
        readonly value: number | null;
        readonly raw: unknown;
        /** Why the registry's pid cannot be used, when it cannot. */
        readonly unusable?: string | undefined;
      }
    | undefined;
  /** kill(pid, 0) result. */
  readonly kill?: KillResult | undefined;
  readonly killError?: string | undefined;
  readonly state?: string | undefined;
  readonly start?:
    | {
        readonly processStartedAt: number;
        readonly reference: StartReference;
        /** The reference time, converted to the local clock. */
        readonly referenceAt: number;
        /** processStartedAt - referenceAt. Positive: the process started after the reference. */
        readonly deltaMs: number;
        readonly toleranceMs: number;
      }
    | undefined;
  readonly port?:
    | {
        readonly port: number;
        readonly result: PortResult | 'not-probed';
        readonly detail?: string | undefined;
        readonly listeners?: readonly string[] | undefined;
        /** The process that listens on the port, when the socket table names it: the entry is judged by it. */
        readonly owner?: number | undefined;
        readonly ownerUnknown?: string | undefined;
      }
    | undefined;
  readonly pending?:
    | {
        readonly ageMs: number;
        readonly from: 'registered_at' | 'first_observed' | 'last_seen' | 'unknown';
        readonly ttlMs: number;
      }
    | undefined;
  /** Other entries of the same source claiming the same live pid, or served by the same process (the first 20 of them). */
  readonly siblings?: readonly string[] | undefined;
  /** How many other entries claim that pid in all. */
  readonly siblingCount?: number | undefined;
  readonly newestBy?: 'registered_at' | 'join_order' | 'last_seen' | undefined;
  /** The siblings share the process that serves their ports, not a registered pid. */
  readonly sharedBy?: 'pid' | 'port-owner' | undefined;
  readonly registry?: { readonly status?: string | undefined; readonly offlineSince?: number | undefined } | undefined;
  /** For an offline entry on this host: what the local check alone would have said. */
  readonly underlying?: SessionVerdict | undefined;
  /** Who this pid is now, from the process table scan. */
  readonly process?: ProcessInfo | undefined;
  /** What the process costs (CPU, resident memory), when its host reads it. */
  readonly usage?: ProcessUsage | undefined;
  /** Local clock: since when the process has been seen stopped (state T or t). */
  readonly stoppedSince?: number | undefined;
  /** The WebSocket probe of the agent's own port, when one was made. */
  readonly handshake?: HandshakeFacts | undefined;
  /** Claims: the holder's own verdict, or why the holder is missing. */
  readonly holder?:
    | {
        readonly id: string | null;
        readonly present: boolean;
        readonly verdict?: Verdict | undefined;
        readonly underlying?: SessionVerdict | undefined;
        /** Set when the holder was found in another source than the claim's (the same id, exactly). */
        readonly source?: string | undefined;
      }
    | undefined;
  /** Claims with a heartbeat: its age and the claim manager's limit. */
  readonly heartbeat?: { readonly at: number; readonly ageMs: number; readonly staleAfterMs: number } | undefined;
  /** Local clock: when the OS facts used were read. */
  readonly checkedAt?: number | undefined;
  /** The record named its pid table (pidDomain): how its pid was found in ours. */
  readonly pidDomain?:
    | {
        readonly domain: string;
        readonly machineId?: string | undefined;
        readonly namespace?: string | undefined;
        /** The pid as the record gave it, in its own namespace. */
        readonly nsPid: number | null;
        /** That process's pid in our table, when it was found. */
        readonly hostPid?: number | undefined;
        /** this-namespace, mapped (found through NSpid), namespace-gone, pid-not-in-namespace, unseen, other-machine, unreadable. */
        readonly status: PidDomainStatus;
      }
    | undefined;
  /** The exact start of the record's process against the live one's (clock ticks since boot). */
  readonly startTicks?: { readonly recorded: number; readonly process: number } | undefined;
  /** Other live processes that carry this same session id (a session open twice). */
  readonly alsoOpenIn?: readonly number[] | undefined;
  /** How the facts of a remote entry were read ("port check from this host"); absent for this host's own probes. */
  readonly transport?: string | undefined;
  /** Times the record or the host gave that are no time: shown, never used (the verdict takes them as unknown). */
  readonly invalidTimes?: readonly InvalidTime[] | undefined;
}

export interface SessionFinding {
  readonly kind: 'session';
  readonly source: string;
  readonly id: string;
  readonly verdict: SessionVerdict;
  readonly problem: boolean;
  /** Evictable without force. Every finding can be evicted with force. */
  readonly evictable: boolean;
  /** One line, plain words. */
  readonly reason: string;
  /** Extra qualifier, e.g. "resolving" for a young pending entry. */
  readonly note?: string | undefined;
  readonly evidence: Evidence;
  readonly entry: SessionEntry;
}

export interface ClaimFinding {
  readonly kind: 'claim';
  readonly source: string;
  /** The claimed resource. */
  readonly id: string;
  readonly holder: string | null;
  readonly verdict: ClaimVerdict;
  readonly problem: boolean;
  readonly evictable: boolean;
  readonly reason: string;
  readonly note?: string | undefined;
  readonly evidence: Evidence;
  readonly entry: ClaimEntry;
}

export type Finding = SessionFinding | ClaimFinding;

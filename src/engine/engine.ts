// The live loop: one store of source snapshots and OS facts, reconciled into one published
// snapshot. Work happens only when an input changed (a source notified, a fact changed in a way
// reconcile can see) or a verdict is due to change with time; publishes are coalesced to ~30/s,
// and fewer when a recompute costs more than a frame (Coalescer). A recompute runs in slices of
// a few ms with the event loop free in between: a key never waits for a whole recompute of a
// large registry, only for the slice under way.

import { reconcileSteps } from '../core/reconcile.js';
import type { Finding, OsFacts, Policy, ProcessInfo, RegistryView } from '../core/types.js';
import { localProbeProvider, type ProbeProvider } from '../os/provider.js';
import { STATUS_TRAITS, type Source, type SourceSnapshot } from '../sources/types.js';
import { sanitize } from '../core/sanitize.js';
import { isUsablePid } from '../core/pid.js';
import { AuditLog, currentUser, defaultAuditLogPath } from './audit-log.js';
import { realClock, type Clock, type TimerHandle } from '../plumbing/clock.js';
import { runToEnd, SLICE_MS, SlicedRun, type Steps } from '../plumbing/steps.js';
import { Coalescer } from './coalesce.js';
import { EventLog } from './event-log.js';
import { executeEviction } from './evict.js';
import { HandshakeTracker } from './handshakes.js';
import { cadenceMs, OsFactsTracker } from './os-facts.js';
import { PidDomains } from './pid-domains.js';
import { ProbeTargets } from './probe-targets.js';
import { RemotePortTracker } from './remote-ports.js';
import { RemoteHosts } from './remote-hosts.js';
import { mergeView, policyFor } from './registry-view.js';
import { reuseUnchanged, rowChangeSteps } from './row-changes.js';
import { buildSnapshot, markProgress, markStale, nextVerdictCrossing, sameFindings, type ProbeProgress } from './snapshot.js';
import type { Self } from '../core/leftovers.js';
import { DEFAULT_KILL_GRACE_MS, endLeftovers, type EndLeftoversRequest, type EndLeftoversSummary } from './end-leftovers.js';
import { agentsOf, placeLeftovers } from './leftover-rows.js';
import { LeftoverTracker } from './leftover-tracker.js';
import type { EngineOptions, EngineStats, LiveEngine } from './options.js';
import { PUBLISH_GAP_MS, type EngineFinding, type EngineSnapshot, type EvictProgress, type EvictRequest, type EvictSummary, type PaneJumpResult } from './types.js';

/** Duration texts in reasons ("3m12s old") stay roughly right with one re-check a minute. */
const TICK_MS = 60_000;

export function createEngine(options: EngineOptions): LiveEngine {
  return new LiveEngineImpl(options);
}

class LiveEngineImpl implements LiveEngine {
  private readonly sources: readonly Source[];
  private readonly hostName: string;
  private readonly hostAliases: readonly string[];
  private readonly now: () => number;
  private readonly clock: Clock;
  private readonly probes: ProbeProvider;
  private readonly scale: number;
  private readonly targets: ProbeTargets;
  private readonly tracker: OsFactsTracker;
  /** The pid namespaces records name (Claude Code's pidDomain), read while some record names one. */
  private readonly domains: PidDomains;
  /** Remote port checks, when on. */
  private readonly remotePorts: RemotePortTracker | undefined;
  /** This host's WebSocket agents asked, at the full cadence, whether they answer on their own ports. */
  private readonly handshakes: HandshakeTracker;
  /** The hosts verified over ssh, each probed on its own; undefined when none is configured. */
  private readonly remote: RemoteHosts | undefined;
  private readonly coalescer: Coalescer;
  /** The recompute under way, when it takes more than one slice. */
  private job: SlicedRun<void> | undefined;
  /** A recompute was asked for while one was under way: it runs once that one has ended. */
  private again = false;
  private readonly audit: AuditLog;
  private readonly actor: string;
  private readonly readOnly: boolean;
  private readonly pendingTtlMs: number | undefined;
  private readonly listeners = new Set<() => void>();
  /** settled() callers, told after every publish and on stop. */
  private readonly settleWaiters = new Set<() => void>();
  private unsubscribes: (() => void)[] = [];
  private lastSnaps: SourceSnapshot[] = [];
  private view: RegistryView = { sessions: [], claims: [] };
  private policy: Policy;
  private snapshot: EngineSnapshot;
  private readonly sourceSettled: boolean[];
  private settledLatch = false;
  private started = false;
  private stopped = false;
  private sourcesDirty = true;
  /** An input changed: publish whatever the recompute says. Otherwise only a visible change is published. */
  private inputDirty = true;
  private ttlTimer: TimerHandle | undefined;
  private ttlAt: number | undefined;
  private tickTimer: TimerHandle | undefined;
  private evictions: Promise<unknown> = Promise.resolve();
  private recomputes = 0;
  private publishes = 0;
  private notices: readonly string[] = [];
  private readonly eventLog = new EventLog();
  /** Per source: whether it was last told that a problem of its is shown (showProblems). */
  private readonly problemsTold: (boolean | undefined)[];
  /** What local agents started, and what dead ones left running; undefined where that cannot be read. */
  private readonly leftovers: LeftoverTracker | undefined;
  private readonly killGraceMs: number;
  private leftoverRuns: Promise<unknown> = Promise.resolve();

  constructor(opts: EngineOptions) {
    this.sources = [...opts.sources];
    this.hostName = opts.hostName;
    this.hostAliases = opts.hostAliases ?? [];
    const clock = (this.clock = opts.clock ?? realClock);
    this.now = opts.now ?? (() => clock.now());
    this.probes = opts.probes ?? localProbeProvider(opts.hostName);
    this.scale = opts.intervalScale ?? 1;
    this.pendingTtlMs = opts.pendingTtlMs;
    this.readOnly = opts.readOnly === true;
    this.audit = new AuditLog(opts.auditLogPath ?? defaultAuditLogPath());
    this.actor = opts.actor ?? `${currentUser()}@${opts.hostName}`;
    this.targets = new ProbeTargets(this.hostName, this.hostAliases);
    this.tracker = new OsFactsTracker({ intervalScale: this.scale, probes: this.probes, clock: this.clock, now: this.now, onChange: this.onFactsChanged });
    this.handshakes = new HandshakeTracker({ isLocal: this.targets.isLocal, pidFacts: (pid) => this.tracker.facts.pids.get(pid), clock: this.clock, now: this.now, intervalScale: this.scale, onChange: this.onFactsChanged, probe: opts.upgradeProbe });
    this.domains = new PidDomains({ probes: this.probes, clock: this.clock, periodMs: cadenceMs('table', this.scale), onChange: this.onDomainsChanged });
    const remote = opts.ssh
      ? new RemoteHosts({ ssh: opts.ssh, hostName: this.hostName, hostAliases: this.hostAliases, isLocal: this.targets.isLocal, intervalScale: this.scale, clock: this.clock, now: this.now, onChange: this.onFactsChanged, onNotice: (line) => this.notice([line]) })
      : undefined;
    this.remote = remote?.enabled ? remote : undefined;
    this.remotePorts = opts.probeRemotePorts
      ? new RemotePortTracker({ isLocal: this.targets.isLocal, sshVerified: opts.sshVerified ?? ((m) => this.remote?.verifies(m) ?? false), checker: opts.remotePortCheck, clock: this.clock, now: this.now, intervalScale: this.scale, onChange: this.onFactsChanged })
      : undefined;
    this.killGraceMs = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const leftoverProbes = opts.trackLeftovers === false ? undefined : this.probes.leftovers;
    this.leftovers = leftoverProbes
      ? new LeftoverTracker({
          probes: leftoverProbes,
          clock: this.clock,
          now: this.now,
          periodMs: cadenceMs('table', this.scale),
          facts: (pid) => this.tracker.facts.pids.get(pid),
          awaiting: (pid) => this.tracker.awaitingPid(pid),
          onChange: this.onFactsChanged,
          self: () => this.self(),
          store: opts.leftoverMemory,
          onNotice: (line) => this.notice([line]),
        })
      : undefined;
    this.coalescer = new Coalescer(() => this.recompute(), PUBLISH_GAP_MS, this.clock);
    this.sourceSettled = this.sources.map(() => false);
    this.problemsTold = this.sources.map(() => undefined);
    this.policy = policyFor([], this.hostName, this.hostAliases, this.pendingTtlMs);
    this.snapshot = buildSnapshot({
      findings: [],
      // Before start() the sources have not begun: they are about to connect, not "stopped".
      sources: this.sources.map((s) => s.snapshot().state).map((st) => (st.status === 'stopped' ? { ...st, status: 'connecting' as const } : st)),
      host: this.hostName,
      os: this.osState(),
      computedAt: this.now(),
      version: 0,
      settled: false,
      hosts: this.remote?.statuses(),
    });
  }

  // Arrow properties: the UI passes subscribe and getSnapshot around unbound (useSyncExternalStore).

  readonly start = (): void => {
    if (this.started || this.stopped) return;
    this.started = true;
    this.unsubscribes = this.sources.map((s) => s.subscribe(this.onSourceChanged));
    for (const s of this.sources) s.start();
    this.tracker.start();
    this.leftovers?.start();
    this.handshakes.start();
    this.remote?.start();
    this.remotePorts?.start();
    // A looser mode tightened or a partial line repaired is said once, where the person looks.
    void this.audit.check().then(
      (warnings) => this.notice(warnings),
      (error: Error) => this.notice([`audit log: ${error.message}`]),
    );
    this.tickTimer = this.clock.setInterval(this.onTimeCheck, Math.max(1_000, TICK_MS * this.scale));
    this.sourcesDirty = true;
    this.inputDirty = true;
    this.coalescer.request();
  };

  private notice(lines: readonly string[]): void {
    if (lines.length === 0 || this.stopped) return;
    this.notices = [...this.notices, ...lines.map((l) => sanitize(l, 300))];
    this.inputDirty = true;
    this.coalescer.request();
  }

  readonly stop = async (): Promise<void> => {
    if (this.stopped) return;
    this.stopped = true;
    this.coalescer.cancel();
    this.job?.cancel();
    if (this.ttlTimer !== undefined) this.clock.clearTimeout(this.ttlTimer);
    if (this.tickTimer !== undefined) this.clock.clearInterval(this.tickTimer);
    this.ttlTimer = this.tickTimer = undefined;
    for (const u of this.unsubscribes) u();
    this.unsubscribes = [];
    // An eviction under way finishes its entry first (sent, its outcome audited): its source's
    // connection must still be up for the answer. Entries after it are not sent (stopped()).
    await this.evictions;
    this.domains.stop();
    await this.leftoverRuns;
    await Promise.all([this.tracker.stop(), this.handshakes.stop(), this.leftovers?.stop(), this.remote?.stop(), this.remotePorts?.stop(), ...this.sources.map((s) => s.stop())]);
    // Waiters on settled() learn that nothing more is coming.
    for (const w of [...this.settleWaiters]) w();
  };

  readonly getSnapshot = (): EngineSnapshot => this.snapshot;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  readonly refresh = async (): Promise<void> => {
    // Remote port checks and ssh hosts start now but are not waited for: a fleet's round is rate-bound
    // (50/s) and a slow host never holds the table.
    void this.remotePorts?.refresh();
    this.remote?.refresh();
    await Promise.all([this.tracker.probeAllNow(), ...this.sources.map((s) => s.resync())]);
    await this.leftovers?.refresh();
    if (this.stopped) return;
    // The recompute under way and the one asked for, to their ends now.
    this.job?.finish();
    this.coalescer.flush();
    this.job?.finish();
  };

  readonly evict = (request: EvictRequest): Promise<EvictSummary> => {
    const onProgress = (p: EvictProgress): void => {
      // An entry our eviction removed is told at once, with the verdict it was removed for.
      if (this.eventLog.progress(p, this.now()) && !this.stopped) {
        this.inputDirty = true;
        this.coalescer.request();
      }
      request.onProgress?.(p);
    };
    // One eviction run at a time: two bulk runs must not interleave their re-checks and sends.
    const run = this.evictions.then(() =>
      executeEviction(
        {
          sources: this.sources,
          host: this.hostName,
          actor: this.actor,
          readOnly: this.readOnly,
          audit: this.audit,
          now: this.now,
          freshContext: () => ({
            policy: this.policy,
            now: this.now,
            isLocal: (m) => this.targets.isLocal(m),
            known: this.tracker.facts,
            probes: this.probes,
            remote: this.remote ? (machine) => this.remote?.probeContext(machine) : undefined,
            ...(this.remotePorts ? { remotePorts: this.remotePorts } : {}),
          }),
          applyFresh: (fresh) => {
            if (fresh.remoteHost !== undefined) this.remote?.applyFresh(fresh.remoteHost, fresh);
            else this.tracker.applyFresh(fresh.pids, fresh.ports);
            if (fresh.remotePorts) this.remotePorts?.apply(fresh.remotePorts);
          },
          stopped: () => this.stopped,
          shown: () => this.snapshot.findings,
        },
        { ...request, onProgress },
      ),
    );
    this.evictions = run.catch(() => undefined);
    return run;
  };

  readonly endLeftovers = (request: EndLeftoversRequest): Promise<EndLeftoversSummary> => {
    // One run at a time, like evictions; the rows are looked at again after it.
    const run = this.leftoverRuns.then(async () => {
      const summary = await endLeftovers(
        {
          probes: this.probes.leftovers,
          audit: this.audit,
          actor: this.actor,
          host: this.hostName,
          readOnly: this.readOnly,
          self: () => this.self(),
          now: this.now,
          clock: this.clock,
          live: () => ({ agents: this.liveAgentPids(), processes: this.leftovers?.liveAgentProcesses() ?? new Set() }),
        },
        request,
        this.killGraceMs,
      );
      if (!this.stopped) await this.leftovers?.refresh();
      return summary;
    });
    this.leftoverRuns = run.catch(() => undefined);
    return run;
  };

  /** The OS side as the snapshot shows it: the probes' state, the notices, whether leftovers are looked for. */
  private osState(): EngineSnapshot['os'] {
    const state = this.tracker.state;
    if (this.notices.length === 0 && !this.leftovers) return state;
    return { ...state, ...(this.notices.length > 0 ? { notices: this.notices } : {}), ...(this.leftovers ? { leftoversTracked: true } : {}) };
  }

  /** Who runs ghostwatch: never signalled, nor anything it runs under. */
  private self(): Self {
    const uid = process.getuid?.();
    const pids = new Set([process.pid, ...(this.probes.leftovers?.ancestors(process.pid) ?? [])]);
    return { uid, root: uid === 0, pids };
  }

  /** The local agents alive now, by the liveness probes. */
  private liveAgentPids(): Set<number> {
    const out = new Set<number>();
    for (const a of agentsOf(this.snapshot.findings)) {
      const f = this.tracker.facts.pids.get(a.pid);
      if (f === undefined || f.kill === 'ok' || f.kill === 'EPERM' || f.kill === 'error') {
        if (f?.state !== 'Z') out.add(a.pid);
      }
    }
    return out;
  }

  readonly processInfo = (pid: number): ProcessInfo | undefined => this.tracker.processInfo(pid);

  readonly jumpToPane = async (pid: number): Promise<PaneJumpResult> => {
    const pane = this.tracker.panes.get(pid);
    if (!pane) return { ok: false, text: `pid ${pid} runs in no tmux pane known here` };
    if (!this.probes.jumpToPane) return { ok: false, text: 'tmux panes cannot be switched to from here' };
    return this.probes.jumpToPane(pane);
  };

  readonly lastChecked = (f: Finding): number | undefined => {
    const ssh = f.evidence.host.ssh;
    const tracker = f.evidence.host.local ? this.tracker : ssh !== undefined ? this.remote?.progressOf(ssh.host) : undefined;
    if (!tracker) return undefined;
    const port = f.evidence.port;
    const pid = port?.owner ?? (isUsablePid(f.entry.pid) ? f.entry.pid : undefined);
    const times = [pid !== undefined ? tracker.pidCheckedAt(pid) : undefined, port !== undefined ? tracker.portCheckedAt(port.port) : undefined].filter((t) => t !== undefined);
    return times.length > 0 ? Math.max(...times) : undefined;
  };

  readonly settled = (timeoutMs: number): Promise<EngineSnapshot> => {
    if (this.snapshot.settled || this.stopped) return Promise.resolve(this.snapshot);
    return new Promise((resolve) => {
      const done = (): void => {
        this.clock.clearTimeout(timer);
        this.settleWaiters.delete(check);
        resolve(this.snapshot);
      };
      const check = (): void => {
        if (this.snapshot.settled || this.stopped) done();
      };
      const timer = this.clock.setTimeout(done, Math.max(0, timeoutMs));
      this.settleWaiters.add(check);
    });
  };

  readonly stats = (): EngineStats => ({
    recomputes: this.recomputes,
    publishes: this.publishes,
    probes: { ...this.tracker.counts },
    ...(this.leftovers ? { leftovers: { ...this.leftovers.counts } } : {}),
    ...(this.handshakes.rounds > 0 ? { handshakes: this.handshakes.rounds } : {}),
    ...(this.remote ? { ssh: this.remote.counters() } : {}),
  });

  // ------------------------------------------------------------ inputs

  private readonly onSourceChanged = (): void => {
    this.sourcesDirty = true;
    this.inputDirty = true;
    if (!this.stopped) this.coalescer.request();
  };

  private readonly onFactsChanged = (): void => {
    this.inputDirty = true;
    if (!this.stopped) this.coalescer.request();
  };

  /** Time alone may change a verdict or a reason: recompute, publish only if something shows. */
  private readonly onTimeCheck = (): void => {
    if (!this.stopped) this.coalescer.request();
  };

  // ------------------------------------------------------------ the store

  private recompute(): void {
    if (this.stopped) return;
    if (this.job?.running) {
      this.again = true;
      return;
    }
    const job = new SlicedRun(this.recomputeSteps(), this.clock, SLICE_MS, (_, busyMs) => this.recomputed(busyMs));
    this.job = job;
    job.start();
  }

  /** A recompute ended: the coalescer paces the next by what it cost (its slices; the UI paces its own frames). */
  private recomputed(busyMs: number): void {
    this.coalescer.ended(busyMs);
    if (this.again && !this.stopped) {
      this.again = false;
      this.coalescer.request();
    }
  }

  /** One recompute, pausing (yield) where the event loop may take its turn; see reconcileSteps. */
  private *recomputeSteps(): Steps<void> {
    const inputDriven = this.inputDirty;
    this.inputDirty = false;
    if (this.sourcesDirty) {
      this.sourcesDirty = false;
      yield* this.readSources();
      yield;
    }
    const now = this.now();
    const { facts, local, remote } = this.frozenFacts();
    // Settled as of these facts: every target had its first probe in them.
    const settled = this.isSettled();
    // The rows of a source that is not reading stay, as last known, marked stale and not evictable.
    // Rows waiting for their first probe say so; a gone process's problem row says since when.
    // Each pass over every row below is a step of its own (a few ms at 37,000 rows): a key typed
    // meanwhile waits for one of them, not for all (key_flood_p99_ms).
    const reconciled = yield* reconcileSteps(this.view, facts, now, this.policy);
    const judged = markProgress(reconciled, local, remote);
    yield;
    const marked = markStale(judged, this.lastSnaps.map((s) => s.state));
    yield;
    // The trees to walk are the local agents' the rows name; a dead one's leftovers go under its row.
    this.leftovers?.setAgents(agentsOf(marked));
    yield;
    const placed = placeLeftovers(marked, this.leftovers?.groups ?? [], this.hostName);
    yield;
    // Rows that came out as before keep the previous objects; the ones that changed are the events' news.
    const rows = yield* rowChangeSteps(this.snapshot.findings, placed.findings);
    const findings = rows.findings;
    const departed = reuseUnchanged(this.snapshot.departed ?? [], placed.departed) as EngineFinding[];
    this.recomputes++;
    this.tellProblems(findings);
    yield;
    this.scheduleTtl(findings, now);
    yield;
    if (!inputDriven && settled === this.snapshot.settled && sameFindings(this.snapshot.findings, findings) && sameFindings(this.snapshot.departed ?? [], departed)) return;
    const events = this.eventLog.next(rows, this.lastSnaps.map((s) => s.state), now, settled, [...placed.carrying, ...departed]);
    yield;
    this.snapshot = buildSnapshot({
      findings,
      sources: this.lastSnaps.map((s) => s.state),
      host: this.hostName,
      os: this.osState(),
      computedAt: now,
      version: this.snapshot.version + 1,
      settled,
      events,
      panes: this.tracker.panes,
      hosts: this.remote?.statuses(),
      departed,
    });
    this.publishes++;
    for (const l of [...this.listeners]) l();
    for (const w of [...this.settleWaiters]) w();
  }

  /** Re-read every source; the merged view, the probe targets and the policy change only if a source's lists did. Pauses as recomputeSteps does. */
  private *readSources(): Steps<void> {
    const snaps = this.sources.map((s) => s.snapshot());
    const listsChanged =
      snaps.length !== this.lastSnaps.length ||
      snaps.some((s, i) => s.sessions !== this.lastSnaps[i]?.sessions || s.claims !== this.lastSnaps[i]?.claims);
    for (const [i, s] of snaps.entries()) if (STATUS_TRAITS[s.state.status].settled) this.sourceSettled[i] = true;
    this.policy = policyFor(snaps, this.hostName, this.hostAliases, this.pendingTtlMs);
    this.lastSnaps = snaps;
    if (!listsChanged) return;
    const view = (this.view = mergeView(snaps));
    yield;
    this.domains.setWanted(yield* this.targets.namespaces(view));
    this.tracker.setTargets(yield* this.targets.compute(view, this.domains.facts));
    yield;
    this.handshakes.setView(view);
    yield;
    this.remote?.setView(view);
    this.remotePorts?.setView(this.view);
  }

  /**
   * This host's facts, with each remote host's state and facts when some are verified over ssh,
   * and the remote port checks when on; and the probes' progress. Copied as they stand now (see
   * OsFactsTracker.frozen): a recompute that pauses judges every row on the same facts.
   */
  private frozenFacts(): { facts: OsFacts; local: ProbeProgress; remote?: ((machine: string) => ProbeProgress | undefined) | undefined } {
    const local = this.tracker.frozen();
    const remote = this.remote?.frozen();
    const pidNamespaces = this.domains.facts;
    const handshakes = this.handshakes.facts.size > 0 ? new Map(this.handshakes.facts) : undefined;
    if (!remote && !this.remotePorts && !pidNamespaces && !handshakes) return { facts: local.facts, local: local.progress };
    const remotePorts = this.remotePorts ? new Map(this.remotePorts.facts) : undefined;
    return { facts: { ...local.facts, remotes: remote?.facts, remotePorts, pidNamespaces, handshakes }, local: local.progress, remote: remote?.progressOf };
  }

  /** A namespace read changed a mapping: the host pids to watch, and the verdicts resting on them. */
  private readonly onDomainsChanged = (): void => {
    if (this.stopped) return;
    this.tracker.setTargets(runToEnd(this.targets.compute(this.view, this.domains.facts)));
    this.onFactsChanged();
  };

  /** Each source that wants to know (a polling one paces itself by it): is a problem of its shown now? Told on change only. */
  private tellProblems(findings: readonly Finding[]): void {
    if (!this.sources.some((s) => s.showProblems)) return;
    const shown = new Set<string>();
    for (const f of findings) if (f.problem) shown.add(f.source);
    for (const [i, s] of this.sources.entries()) {
      const now = shown.has(s.name);
      if (!s.showProblems || this.problemsTold[i] === now) continue;
      this.problemsTold[i] = now;
      s.showProblems(now);
    }
  }

  /** Latched: every source has had its first snapshot (or failed), and every target its first probe. */
  private isSettled(): boolean {
    if (!this.settledLatch && this.sourceSettled.every(Boolean) && this.tracker.firstProbesDone && this.domains.settled && (this.leftovers?.settled ?? true) && (this.remote?.settled ?? true) && (this.remotePorts?.firstDone ?? true)) this.settledLatch = true;
    return this.settledLatch;
  }

  /** One timer, for the next moment a verdict turns with time alone (a pending TTL, a claim heartbeat). */
  private scheduleTtl(findings: readonly Finding[], now: number): void {
    const at = nextVerdictCrossing(findings, now);
    if (at === this.ttlAt) return;
    if (this.ttlTimer !== undefined) this.clock.clearTimeout(this.ttlTimer);
    this.ttlTimer = undefined;
    this.ttlAt = at;
    if (at === undefined) return;
    this.ttlTimer = this.clock.setTimeout(() => {
      this.ttlTimer = undefined;
      this.ttlAt = undefined;
      this.onTimeCheck();
    }, Math.max(0, at - now));
  }
}

// The memory of what agents started, and what dead ones left running. At the slow cadence (the
// process table's), and soon after an agent appears or dies: the tree of every live local agent is
// walked (its threads' children lists, so only agents' trees cost anything) and learned; then each
// remembered process that was not in a walk is read again, and core decides which are leftovers.
// Only while there are leftovers are their listening ports read. The memory can be kept in a file
// (a `check` from cron learns at one run what the next one finds left behind).

import { identityKey, judgeLeftovers, learn, type AgentMemory, type AgentRef, type LeftoverGroup, type ProcessIdentity, type ProcessNow, type Self } from '../core/leftovers.js';
import type { PidFacts } from '../core/types.js';
import type { LeftoverMemoryStore } from '../os/leftover-memory.js';
import type { ProcessSample } from '../os/process-tree.js';
import type { LeftoverProbes } from '../os/provider.js';
import type { Clock, TimerHandle } from '../plumbing/clock.js';
import { isAlive } from './fact-merge.js';

/** A local agent as the view names it: its (host) pid and the rows that name it. */
export interface AgentTarget {
  readonly pid: number;
  readonly refs: readonly AgentRef[];
}

export interface LeftoverTrackerOptions {
  readonly probes: LeftoverProbes;
  readonly clock: Clock;
  readonly now: () => number;
  /** The slow cadence, ms. */
  readonly periodMs: number;
  /** What the liveness probes last said of a pid the view names. */
  readonly facts: (pid: number) => PidFacts | undefined;
  /** The pid is watched and has not had its first full probe yet. */
  readonly awaiting: (pid: number) => boolean;
  /** Leftovers changed. */
  readonly onChange: () => void;
  readonly self: () => Self;
  readonly store?: LeftoverMemoryStore | undefined;
  /** One line to show (the memory file not used, or not written). */
  readonly onNotice?: ((line: string) => void) | undefined;
}

/** The memory is written at most this often (and when the engine stops). */
const SAVE_EVERY_MS = 30_000;

type AgentState = 'alive' | 'dead' | 'unknown';

function stateOf(f: PidFacts | undefined): AgentState {
  if (f === undefined) return 'unknown';
  if (f.kill === 'ESRCH' || (f.state === 'Z' && f.kill !== 'error')) return 'dead';
  return isAlive(f.kill) && f.startTicks !== undefined ? 'alive' : 'unknown';
}

export class LeftoverTracker {
  private memory = new Map<string, AgentMemory>();
  private agents: readonly AgentTarget[] = [];
  /** Each agent pid's state as last told, to run soon when one appears or dies. */
  private states = new Map<number, AgentState>();
  private groupsNow: readonly LeftoverGroup[] = [];
  /** The agents (identity keys) the last run judged dead. */
  private deadAgents: ReadonlySet<string> = new Set();
  private readonly cpu = new Map<string, { cpuMs: number; at: number }>();
  private timer: TimerHandle | undefined;
  private soonTimer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private abort = new AbortController();
  private stopped = false;
  /** The agent pids the last run judged on facts (each had had its first full probe). */
  private judged: ReadonlySet<number> | undefined;
  private savedText = '';
  private savedAt = -Infinity;

  constructor(private readonly opts: LeftoverTrackerOptions) {}

  /** Completed runs, and the processes remembered after the last one (debug counters; the tests wait on them). */
  readonly counts = { runs: 0, remembered: 0 };

  /** Dead agents with processes left, as last judged. */
  get groups(): readonly LeftoverGroup[] {
    return this.groupsNow;
  }

  /** The last run judged every agent the view names now on facts (not before their first probe). */
  get settled(): boolean {
    const judged = this.judged;
    return judged !== undefined && this.agents.every((a) => judged.has(a.pid));
  }

  /**
   * The processes agents not known dead learned, as of the last run: never anyone's leftovers. An
   * agent is dead here only when the last run judged it so (its pid gone, or another process now).
   */
  liveAgentProcesses(): Set<string> {
    const out = new Set<string>();
    for (const [key, m] of this.memory) {
      if (this.deadAgents.has(key)) continue;
      for (const d of m.descendants) out.add(identityKey(d));
    }
    return out;
  }

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loaded = this.opts.store?.load();
    if (loaded) {
      for (const m of loaded.agents) this.memory.set(identityKey(m.agent), m);
      this.savedText = JSON.stringify(loaded.agents);
      if (loaded.warning) this.opts.onNotice?.(loaded.warning);
    }
    this.timer = this.opts.clock.setInterval(() => this.request(), this.opts.periodMs);
    // A first look at once: what an earlier run remembered may be left behind already.
    this.soon();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer !== undefined) this.opts.clock.clearInterval(this.timer);
    if (this.soonTimer !== undefined) this.opts.clock.clearTimeout(this.soonTimer);
    this.timer = this.soonTimer = undefined;
    this.abort.abort();
    await this.running?.catch(() => undefined);
    this.save(true);
  }

  /** The agents the view names now; one that appeared, died or came to be known is looked at soon. */
  setAgents(agents: readonly AgentTarget[]): void {
    this.agents = agents;
    let news = false;
    const states = new Map<number, AgentState>();
    for (const a of agents) {
      const s = stateOf(this.opts.facts(a.pid));
      states.set(a.pid, s);
      if (this.states.get(a.pid) !== s) news = true;
    }
    if (states.size !== this.states.size) news = true;
    this.states = states;
    if (news) this.soon();
  }

  /** Look now (after a K run, the R key): the run in progress, then one more. */
  refresh(): Promise<void> {
    return this.request();
  }

  private soon(): void {
    if (this.soonTimer !== undefined || this.stopped) return;
    this.soonTimer = this.opts.clock.setTimeout(() => {
      this.soonTimer = undefined;
      void this.request();
    }, 0);
  }

  private request(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = this.run()
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.request();
        }
      });
    this.running = run;
    return run;
  }

  private async run(): Promise<void> {
    const { probes } = this.opts;
    const signal = this.abort.signal;
    const agents = this.agents;
    const byPid = new Map<number, AgentRef[]>();
    for (const a of agents) byPid.set(a.pid, [...(byPid.get(a.pid) ?? []), ...a.refs]);
    const roots = new Map<number, number>();
    const known = new Set<number>();
    for (const pid of byPid.keys()) {
      const f = this.opts.facts(pid);
      if (f !== undefined && !this.opts.awaiting(pid)) known.add(pid);
      if (stateOf(f) === 'alive') roots.set(pid, f!.startTicks!);
    }

    // 1. Learn the live agents' trees.
    const walk = await probes.descendants(roots, { signal });
    if (signal.aborted) return;
    const liveTrees = new Set<string>();
    const walked = new Set<string>();
    if (walk.ok) {
      for (const [pid, list] of walk.trees) {
        const agent: ProcessIdentity = { pid, startTicks: roots.get(pid), startedAt: this.opts.facts(pid)?.startedAt };
        const key = identityKey(agent);
        walked.add(key);
        for (const p of list) liveTrees.add(identityKey(p));
        const prev = this.memory.get(key);
        if (list.length > 0 || prev) this.memory.set(key, learn(prev, agent, byPid.get(pid) ?? [], list));
      }
    }

    // 2. Read again every remembered process not just walked, and the agents no row names now.
    const toRead = new Set<number>();
    for (const [key, m] of this.memory) {
      if (!byPid.has(m.agent.pid)) toRead.add(m.agent.pid);
      for (const d of m.descendants) if (!(walked.has(key) && liveTrees.has(identityKey(d)))) toRead.add(d.pid);
    }
    const read = toRead.size > 0 ? await probes.processes([...toRead], { signal }) : new Map<number, ProcessSample | null>();
    if (signal.aborted) return;
    const at = this.opts.now();

    // 3. Judge: which agents are dead, which of their processes are leftovers.
    const agentAlive = (agent: ProcessIdentity): boolean | undefined => {
      if (walked.has(identityKey(agent))) return true;
      if (byPid.has(agent.pid)) {
        const f = this.opts.facts(agent.pid);
        const s = stateOf(f);
        if (s === 'dead') return false;
        if (s === 'alive') return f!.startTicks === agent.startTicks;
        return undefined;
      }
      const now = read.get(agent.pid);
      if (now === undefined) return undefined;
      return now !== null && now.state !== 'Z' && now.state !== 'X' && now.startTicks === agent.startTicks;
    };
    const nowMap = new Map<number, ProcessNow | null>();
    for (const [pid, sample] of read) nowMap.set(pid, sample === null ? null : this.withCpu(sample, at));
    const judged = judgeLeftovers({ memory: [...this.memory.values()], agentAlive, now: nowMap, liveTrees, self: this.opts.self() });
    this.memory = new Map(judged.memory.map((m) => [identityKey(m.agent), m]));
    this.deadAgents = new Set([...this.memory.values()].filter((m) => agentAlive(m.agent) === false).map((m) => identityKey(m.agent)));
    const sampled = new Set([...read.values()].flatMap((p) => (p ? [identityKey(p)] : [])));
    for (const key of [...this.cpu.keys()]) if (!sampled.has(key)) this.cpu.delete(key);

    // 4. Their ports, only when there are some.
    let groups = judged.groups;
    if (groups.length > 0) {
      const pids = groups.flatMap((g) => g.leftovers.map((l) => l.pid));
      const ports = await probes.listeningPorts(pids, { signal });
      if (signal.aborted) return;
      groups = groups.map((g) => ({ ...g, leftovers: g.leftovers.map((l) => ({ ...l, ports: ports.get(l.pid) ?? [] })) }));
    }
    this.counts.runs++;
    this.counts.remembered = judged.memory.reduce((n, m) => n + m.descendants.length, 0);
    const wasSettled = this.settled;
    this.judged = known;
    const changed = JSON.stringify(groups) !== JSON.stringify(this.groupsNow);
    if (changed) this.groupsNow = groups;
    this.save(false);
    if (changed || this.settled !== wasSettled) this.opts.onChange();
  }

  /** CPU % since the last reading of this same process, or over its life at the first. */
  private withCpu(s: ProcessSample, at: number): ProcessNow {
    const { cpuMs, ...rest } = s;
    if (cpuMs === undefined) return rest;
    const key = identityKey(s);
    const prev = this.cpu.get(key);
    this.cpu.set(key, { cpuMs, at });
    const span = prev ? at - prev.at : s.startedAt !== undefined ? at - s.startedAt : 0;
    if (span <= 0) return rest;
    const pct = ((cpuMs - (prev?.cpuMs ?? 0)) / span) * 100;
    return { ...rest, cpuPct: Math.max(0, Math.round(pct * 10) / 10) };
  }

  private save(force: boolean): void {
    const store = this.opts.store;
    if (!store) return;
    const agents = [...this.memory.values()];
    const text = JSON.stringify(agents);
    if (text === this.savedText) return;
    if (!force && this.opts.clock.monotonic() - this.savedAt < SAVE_EVERY_MS) return;
    this.savedAt = this.opts.clock.monotonic();
    const failed = store.save(agents);
    if (failed === undefined) this.savedText = text;
    else this.opts.onNotice?.(failed);
  }
}

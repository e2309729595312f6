// Turning one reconcile into the snapshot the UI reads, and the two questions the time-driven
// recomputes ask of findings: did anything a person can see change, and when does the next
// young `pending-*` entry cross the TTL.

import type { EventSource, WatchEvent } from '../core/events.js';
import type { TmuxPane } from '../core/tmux.js';
import { isUsablePid } from '../core/pid.js';
import { VERDICTS, type Finding, type Verdict } from '../core/types.js';
import { STATUS_TRAITS, type SourceState } from '../sources/types.js';
import { checkingOf, deadSinceOf, goneAtFirstProbeOf, leftoversOf, staleOf, type EngineFinding, type EngineSnapshot, type HostStatus, type OsState, type Staleness } from './types.js';

export interface SnapshotInput {
  readonly findings: readonly Finding[];
  readonly sources: readonly SourceState[];
  readonly host: string;
  readonly os: OsState;
  readonly computedAt: number;
  readonly version: number;
  readonly settled: boolean;
  readonly events?: readonly WatchEvent[] | undefined;
  readonly panes?: ReadonlyMap<number, TmuxPane> | undefined;
  readonly hosts?: readonly HostStatus[] | undefined;
  readonly departed?: readonly EngineFinding[] | undefined;
}

export function zeroCounts(): Record<Verdict, number> {
  const counts = {} as Record<Verdict, number>;
  for (const v of VERDICTS) counts[v] = 0;
  return counts;
}

export function buildSnapshot(input: SnapshotInput): EngineSnapshot {
  const counts = zeroCounts();
  let problems = 0;
  let checking = 0;
  for (const f of input.findings) {
    counts[f.verdict]++;
    if (f.problem) problems++;
    if (checkingOf(f)) checking++;
  }
  return {
    findings: input.findings,
    sources: input.sources,
    host: input.host,
    os: input.os,
    counts,
    problems,
    checking,
    computedAt: input.computedAt,
    version: input.version,
    settled: input.settled,
    events: input.events,
    ...(input.panes !== undefined && input.panes.size > 0 ? { panes: input.panes } : {}),
    ...(input.hosts !== undefined ? { hosts: input.hosts } : {}),
    ...(input.departed !== undefined && input.departed.length > 0 ? { departed: input.departed } : {}),
  };
}

/** A snapshot's registries as the events diff sees them. */
export function eventSources(sources: readonly SourceState[]): EventSource[] {
  return sources.map((s) => ({ name: s.name, status: s.status, reading: STATUS_TRAITS[s.status].reading, why: s.cause ?? s.lastError }));
}

/** Per source that is not reading: what its kept rows are marked with. */
export function staleSources(sources: readonly SourceState[]): Map<string, Staleness> {
  const marks = new Map<string, Staleness>();
  for (const s of sources) {
    if (STATUS_TRAITS[s.status].reading) continue;
    marks.set(s.name, { source: s.name, since: s.confirmedAt ?? s.downSince ?? s.since, why: s.cause ?? s.lastError ?? s.status });
  }
  return marks;
}

/**
 * The findings with the rows of every source that is not reading marked stale and not
 * evictable. Only those rows are copied; with every source reading, the array is returned as it is.
 */
export function markStale(findings: readonly Finding[], sources: readonly SourceState[]): readonly EngineFinding[] {
  const marks = staleSources(sources);
  if (marks.size === 0) return findings;
  let any = false;
  const out = findings.map((f): EngineFinding => {
    const stale = marks.get(f.source);
    if (!stale) return f;
    any = true;
    return withMarks(f, { evictable: false, stale });
  });
  return any ? out : findings;
}

type Marks = Partial<Pick<EngineFinding, 'evictable' | 'stale' | 'checking' | 'deadSince' | 'goneAtFirstProbe' | 'leftovers' | 'departed'>>;

/**
 * A finding with the engine's marks (and the marks it had already), written as one literal per
 * kind: every copy of a kind shares one V8 hidden class. A spread (`{ ...f, deadSince }`) gave
 * each copy a hidden class of its own, ~0.5 KB with its descriptors: 2,500 of them for the
 * ghosts of a 10,000-session registry, 10,000 when a source stops reading. A field added to
 * SessionFinding or ClaimFinding must be added here (test/engine/snapshot.test.ts, withMarks, checks
 * that a copy keeps every field).
 */
export function withMarks(f: EngineFinding, m: Marks): EngineFinding {
  const evictable = m.evictable ?? f.evictable;
  const stale = m.stale ?? f.stale;
  const checking = m.checking ?? f.checking;
  const deadSince = m.deadSince ?? f.deadSince;
  const goneAtFirstProbe = m.goneAtFirstProbe ?? f.goneAtFirstProbe;
  const leftovers = m.leftovers ?? f.leftovers;
  const departed = m.departed ?? f.departed;
  const { source, id, problem, reason, note, evidence } = f;
  return f.kind === 'session'
    ? { kind: 'session', source, id, verdict: f.verdict, problem, evictable, reason, note, evidence, entry: f.entry, stale, checking, deadSince, goneAtFirstProbe, leftovers, departed }
    : { kind: 'claim', source, id, holder: f.holder, verdict: f.verdict, problem, evictable, reason, note, evidence, entry: f.entry, stale, checking, deadSince, goneAtFirstProbe, leftovers, departed };
}

/** What the engine knows of the OS beyond the facts reconcile reads. */
export interface ProbeProgress {
  /** The pid (or, for a pid-less entry, the port) is watched and has not had its first probe. */
  awaitingPid(pid: number): boolean;
  awaitingPort(port: number): boolean;
  /** The first probe that found this pid gone, while it stays gone. */
  deadSince(pid: number): number | undefined;
  /** That probe was the first this monitor made of the pid: it was never seen alive here. */
  goneAtFirstProbe(pid: number): boolean;
}

/**
 * Rows the engine knows more about than reconcile. A row whose verdict waits on a first probe is
 * marked `checking`: a local session whose process (or port) has not had it (reconcile said
 * `unverified`, or `offline` for want of the OS's word), and a claim that is not a problem while
 * its own pid or its holder still waits (its `held` would be a guess: a recycled pid or a dead
 * holder turn it stale a moment later). A problem whose process is gone carries `deadSince`, and
 * `goneAtFirstProbe` when it was never seen alive here. Only those rows are copied; otherwise the
 * array is returned as it is.
 */
export function markProgress(
  findings: readonly Finding[],
  local: ProbeProgress,
  /** The progress of a remote host's probes, by its machine name (entries verified over ssh). */
  remote?: (machine: string) => ProbeProgress | undefined,
): readonly EngineFinding[] {
  let out: EngineFinding[] | undefined;
  /** Sessions marked checking, by source and id: the claims they hold wait with them. Made only when one is. */
  let waiting: Set<string> | undefined;
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    let mark: EngineFinding | undefined;
    const pid = isUsablePid(f.entry.pid) ? f.entry.pid : undefined;
    const ssh = f.evidence.host.ssh;
    const progress = f.evidence.host.local ? local : ssh !== undefined && ssh.state === 'up' ? remote?.(ssh.host) : undefined;
    if (f.kind === 'claim' && !f.problem) {
      const holder = f.evidence.holder;
      const holderWaits = waiting !== undefined && holder?.id != null && waiting.has(`${holder.source ?? f.source}\0${holder.id}`);
      if (holderWaits || (pid !== undefined && progress?.awaitingPid(pid) === true)) mark = withMarks(f, { checking: true });
    } else if (progress === undefined) continue;
    else if (f.kind === 'session' && (f.verdict === 'unverified' || (f.verdict === 'offline' && f.evidence.underlying === 'unverified'))) {
      const port = f.evidence.port;
      if (pid !== undefined ? progress.awaitingPid(pid) : port?.result === 'not-probed' && progress.awaitingPort(port.port)) {
        mark = withMarks(f, { checking: true });
        (waiting ??= new Set()).add(`${f.source}\0${f.id}`);
      }
    } else if (f.problem) {
      // The process judged: the registered pid, or the one serving the entry's port.
      const judged = f.evidence.port?.owner ?? pid;
      const since = judged !== undefined && (f.evidence.kill === 'ESRCH' || f.evidence.state === 'Z') ? progress.deadSince(judged) : undefined;
      if (since !== undefined) mark = withMarks(f, { deadSince: since, goneAtFirstProbe: progress.goneAtFirstProbe(judged!) ? true : undefined });
    }
    if (!mark) continue;
    out ??= findings.slice();
    out[i] = mark;
  }
  return out ?? findings;
}

/** Same rows with the same verdict, reason and note: a republish would show nothing new. */
export function sameFindings(a: readonly Finding[], b: readonly Finding[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.kind !== y.kind || x.source !== y.source || x.id !== y.id) return false;
    if (x.verdict !== y.verdict || x.reason !== y.reason || x.note !== y.note) return false;
    if (staleOf(x)?.since !== staleOf(y)?.since || staleOf(x)?.why !== staleOf(y)?.why) return false;
    if (checkingOf(x) !== checkingOf(y) || deadSinceOf(x) !== deadSinceOf(y) || goneAtFirstProbeOf(x) !== goneAtFirstProbeOf(y)) return false;
    if (leftoversOf(x) !== leftoversOf(y)) return false;
  }
  return true;
}

/**
 * The local time at which the next verdict turns with time alone, or undefined: a young
 * `pending-*` entry outliving the TTL, or a held claim whose heartbeat outlives its limit. Reads
 * the ages reconcile computed, so the engine never re-derives design.md's rules.
 */
export function nextVerdictCrossing(findings: readonly Finding[], computedAt: number): number | undefined {
  let earliest: number | undefined;
  const consider = (at: number): void => {
    if (earliest === undefined || at < earliest) earliest = at;
  };
  for (const f of findings) {
    const { pending, heartbeat } = f.evidence;
    // reconcile calls an age stale once it is strictly greater than the limit.
    if (pending !== undefined && f.verdict !== 'pending' && pending.from !== 'unknown') consider(computedAt + (pending.ttlMs - pending.ageMs) + 1);
    if (heartbeat !== undefined && f.verdict === 'held') consider(computedAt + (heartbeat.staleAfterMs - heartbeat.ageMs) + 1);
  }
  return earliest;
}

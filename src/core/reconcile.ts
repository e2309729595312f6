// reconcile(view, osFacts, now, policy) → findings. The one place a verdict is decided.
// Pure: the engine passes in everything (including "now" and first-observed times).
//
// It runs on every change of a 10,000-entry registry, so it allocates little: findings are
// written once and amended in place by the superseded pass, evidence objects share one shape,
// and what is the same for many entries (host evidence, process info) is shared, not copied.

import { formatDuration } from './duration.js';
import { matchHost, type HostMatch } from './host.js';
import { isUsablePid, isUsablePort, pidProblem } from './pid.js';
import { sanitize } from './sanitize.js';
import {
  VERDICT_TRAITS,
  type ClaimEntry,
  type ClaimFinding,
  type ClaimVerdict,
  type Evidence,
  type Finding,
  type OsFacts,
  type Policy,
  type PortFacts,
  type RegistryView,
  type SessionEntry,
  type SessionFinding,
  type SessionVerdict,
  type StartReference,
} from './types.js';

export const PENDING_PREFIX = 'pending-';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type Draft = Omit<Mutable<SessionFinding>, 'evidence'> & { evidence: Mutable<Evidence> };

interface Context {
  readonly os: OsFacts;
  readonly now: number;
  readonly policy: Policy;
  /** matchHost and its evidence, memoized: thousands of entries, few distinct hosts. */
  readonly host: (machine: string | undefined) => Evidence['host'];
}

export function reconcile(view: RegistryView, os: OsFacts, now: number, policy: Policy): Finding[] {
  const ctx: Context = { os, now, policy, host: hostEvidenceCache(policy) };
  const findings: Finding[] = view.sessions.map((entry) => judgeSession(entry, ctx));
  markSuperseded(findings as Draft[], policy);
  markSharedPortOwner(findings as Draft[], policy);
  if (view.claims.length > 0) {
    const holders = indexHolders(view.claims, findings as SessionFinding[]);
    for (const c of view.claims) findings.push(judgeClaim(c, holders, ctx));
  }
  return findings;
}

function hostEvidenceCache(policy: Policy): Context['host'] {
  const cache = new Map<string, Evidence['host']>();
  const none: Evidence['host'] = { machine: null, local: false, matchedAs: undefined };
  return (machine) => {
    if (machine === undefined) return none;
    let evidence = cache.get(machine);
    if (!evidence) {
      const matched: HostMatch | undefined = matchHost(machine, policy.hostName, policy.hostAliases);
      evidence = { machine, local: matched !== undefined, matchedAs: matched };
      cache.set(machine, evidence);
    }
    return evidence;
  };
}

/**
 * Evidence objects start with the fields nearly every finding fills, in one order (absent =
 * undefined, which JSON omits): one small hidden class for the hot path. Rare fields (pending,
 * siblings, port, ...) are added only where they apply.
 */
function newEvidence(host: Evidence['host']): Mutable<Evidence> {
  return { host, kill: undefined, state: undefined, start: undefined, process: undefined, checkedAt: undefined };
}

/** "12:03:04" in the engine's local time, or UTC when the policy gives no formatter (core has no time zone). */
function clockText(policy: Policy, localMs: number): string {
  if (policy.clockText) return policy.clockText(localMs);
  const daySeconds = Math.floor((((localMs % 86_400_000) + 86_400_000) % 86_400_000) / 1000);
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return `${two(Math.floor(daySeconds / 3600))}:${two(Math.floor(daySeconds / 60) % 60)}:${two(daySeconds % 60)} UTC`;
}

function toLocal(policy: Policy, source: string, registryTime: number): number {
  return registryTime - (policy.registryClockOffsetMs?.[source] ?? 0);
}

function draft(entry: SessionEntry, evidence: Mutable<Evidence>): Draft {
  return {
    kind: 'session',
    source: entry.source,
    id: entry.id,
    verdict: 'unverified',
    problem: false,
    evictable: false,
    reason: '',
    note: undefined,
    evidence,
    entry,
  };
}

/** Set verdict, reason (and note) together, with the traits design.md gives the verdict. */
function decide(f: Draft, verdict: SessionVerdict, reason: string, note?: string): Draft {
  const traits = VERDICT_TRAITS[verdict];
  f.verdict = verdict;
  f.problem = traits.problem;
  f.evictable = traits.evictable;
  f.reason = reason;
  f.note = note;
  return f;
}

// ---------------------------------------------------------------- sessions

function judgeSession(entry: SessionEntry, ctx: Context): Draft {
  const evidence = newEvidence(ctx.host(entry.machine));
  const f = draft(entry, evidence);
  const local = evidence.host.local;
  if (local) judgeLocal(f, ctx);

  if (entry.offline) {
    evidence.registry = { status: entry.status, offlineSince: entry.offlineSince };
    if (local) {
      evidence.underlying = f.verdict;
      // A killed agent's socket closes and the registry says offline: the process being gone
      // is what matters. Only a live (or uncheckable) process keeps the registry's word.
      if (f.problem && !entry.ended) {
        const since = entry.offlineSince !== undefined ? ` since ${clockText(ctx.policy, toLocal(ctx.policy, entry.source, entry.offlineSince))}` : '';
        decide(f, f.verdict, `registry: offline${since}; OS: ${f.reason}`);
        if (entry.id.startsWith(PENDING_PREFIX)) judgePending(f, ctx);
        return f;
      }
    }
    const since =
      entry.offlineSince !== undefined
        ? ` for ${formatDuration(ctx.now - toLocal(ctx.policy, entry.source, entry.offlineSince))}`
        : '';
    return decide(f, 'offline', `the registry marks it offline${since}; it will sweep it`);
  }
  if (!local) {
    if (entry.machine === undefined || entry.machine.trim() === '') {
      return decide(f, 'unverified', 'the registry names no host for it, so it cannot be checked');
    }
    return decide(f, 'remote', `runs on ${sanitize(entry.machine, 64)}, not on this host: cannot be checked here`);
  }
  if (entry.id.startsWith(PENDING_PREFIX)) judgePending(f, ctx);
  return f;
}

function judgeLocal(f: Draft, ctx: Context): void {
  const { entry, evidence } = f;
  const unusable = pidProblem(entry.pid);
  if (unusable === undefined) {
    judgePid(f, entry.pid as number, ctx);
    return;
  }
  if (entry.pid !== undefined && entry.pid !== null) evidence.pid = { value: null, raw: entry.pid, unusable };
  judgePort(f, ctx, unusable);
}

function judgePid(f: Draft, pid: number, ctx: Context): void {
  const { entry, evidence } = f;
  const facts = ctx.os.pids.get(pid);
  if (!facts) {
    decide(f, 'unverified', `pid ${pid} has not been probed yet`);
    return;
  }
  evidence.kill = facts.kill;
  evidence.checkedAt = facts.checkedAt;
  if (facts.error !== undefined) evidence.killError = facts.error;
  evidence.process = facts.process;
  if (facts.kill === 'ESRCH') {
    decide(f, 'ghost', `pid ${pid} is gone (ESRCH)`);
    return;
  }
  if (facts.kill === 'error') {
    decide(f, 'unverified', `pid ${pid} could not be checked: ${facts.error ?? 'unknown error'}`);
    return;
  }
  evidence.state = facts.state;
  if (facts.state === 'Z') {
    decide(f, 'zombie', `pid ${pid} is a zombie: it exited and its parent never reaped it`);
    return;
  }
  const kind = facts.startedAt !== undefined ? startReference(entry) : undefined;
  if (kind !== undefined && facts.startedAt !== undefined) {
    const referenceAt = startReferenceAt(entry, kind, ctx.policy);
    const deltaMs = facts.startedAt - referenceAt;
    const toleranceMs = ctx.policy.startToleranceMs;
    evidence.start = { processStartedAt: facts.startedAt, reference: kind, referenceAt, deltaMs, toleranceMs };
    if (deltaMs > toleranceMs) {
      const what = REFERENCE_WORDS[kind];
      decide(f, 'reused', `pid ${pid} belongs to a process started ${formatDuration(deltaMs)} after ${what}: the pid was recycled`);
      return;
    }
    if (kind === 'pid_started_at' && -deltaMs > toleranceMs) {
      // Older than the process that registered: not that process, but not a recycled pid either.
      const before = formatDuration(-deltaMs);
      decide(f, 'unverified', `pid ${pid} belongs to a process started ${before} before the registered start time: identity unclear`);
      return;
    }
  }
  const alive = facts.kill === 'EPERM' ? `pid ${pid} is alive (EPERM: another user owns it)` : `pid ${pid} is alive`;
  if (facts.detailsHidden !== undefined) {
    // kill found it: alive. Its state and start time are hidden, so identity is unchecked.
    decide(f, 'live', `${alive}; details hidden (hidepid): state and start time unknown`, 'details hidden');
    return;
  }
  decide(f, 'live', alive);
}

const REFERENCE_WORDS: Record<StartReference, string> = {
  pid_started_at: 'the registered process started',
  registered_at: 'the entry was registered',
  first_observed: 'ghostwatch first saw the entry',
};

/** What the process behind the entry must have started by: pid_started_at, registered_at, first observed. */
function startReference(entry: SessionEntry): StartReference | undefined {
  if (entry.pidStartedAt !== undefined) return 'pid_started_at';
  if (entry.registeredAt !== undefined) return 'registered_at';
  if (entry.firstObservedAt !== undefined) return 'first_observed';
  return undefined;
}

/** That time on the local clock. pid_started_at was read on the agent's host, which is this host. */
function startReferenceAt(entry: SessionEntry, kind: StartReference, policy: Policy): number {
  if (kind === 'pid_started_at') return entry.pidStartedAt as number;
  if (kind === 'registered_at') return toLocal(policy, entry.source, entry.registeredAt as number);
  return entry.firstObservedAt as number;
}

function judgePort(f: Draft, ctx: Context, pidWhy: string): void {
  const port = f.entry.port;
  if (!isUsablePort(port)) {
    decide(f, 'unverified', `${pidWhy} and no port to probe: nothing to check`);
    return;
  }
  const facts = ctx.os.ports.get(port);
  if (!facts) {
    f.evidence.port = { port, result: 'not-probed', detail: undefined };
    decide(f, 'unverified', `${pidWhy}; port ${port} has not been probed yet`);
    return;
  }
  const owner = facts.result === 'open' ? portOwner(facts, ctx.os) : undefined;
  f.evidence.port = { port, result: facts.result, detail: facts.detail, listeners: facts.listeners, owner, ownerUnknown: facts.ownerUnknown };
  f.evidence.checkedAt = facts.checkedAt;
  if (owner !== undefined) {
    // The process behind the port is known: judge the entry by it, as if it had registered that pid.
    judgePid(f, owner, ctx);
    const who = f.evidence.process;
    const name = who ? ` (${sanitize(who.name, 32)})` : '';
    if (f.verdict === 'live') f.reason = `${pidWhy}; port ${port} is served by pid ${owner}${name}, which is alive`;
    else f.reason = `${pidWhy}; port ${port} is served by pid ${owner}${name}: ${f.reason}`;
    return;
  }
  const where = facts.listeners && facts.listeners.length > 0 ? ` (listening on ${facts.listeners.map((a) => sanitize(a, 46)).join(', ')})` : '';
  if (facts.result === 'open') decide(f, 'live', `${pidWhy}; something accepts connections on port ${port}${where}`);
  else if (facts.result === 'refused') decide(f, 'ghost', `${pidWhy}; nothing listens on port ${port}`);
  else {
    const detail = facts.detail ? `: ${facts.detail}` : '';
    decide(f, 'unverified', `${pidWhy}; the probe of port ${port} failed (${facts.result}${detail})`);
  }
}

/**
 * Which of the processes listening on a port stands for the entry: one the OS facts know, the
 * earliest started (a child that inherited the socket is not the agent). Undefined when none is known.
 */
function portOwner(facts: PortFacts, os: OsFacts): number | undefined {
  let best: number | undefined;
  let bestStart = Infinity;
  for (const pid of facts.owners ?? []) {
    if (!isUsablePid(pid)) continue;
    const p = os.pids.get(pid);
    if (!p) continue;
    const start = p.startedAt ?? Infinity;
    if (best === undefined || start < bestStart) {
      best = pid;
      bestStart = start;
    }
  }
  return best;
}

function judgePending(f: Draft, ctx: Context): void {
  const { policy, now } = ctx;
  const age = pendingAge(f.entry, now, policy);
  f.evidence.pending = { ageMs: age.ms, from: age.from, ttlMs: policy.pendingTtlMs };
  if (f.verdict === 'ghost' || f.verdict === 'zombie' || f.verdict === 'reused') {
    decide(f, 'pending', `placeholder whose process is dead: ${f.reason}`);
  } else if (age.from !== 'unknown' && age.ms > policy.pendingTtlMs) {
    decide(f, 'pending', `placeholder never resolved: ${formatDuration(age.ms)} old (TTL ${formatDuration(policy.pendingTtlMs)})`);
  } else {
    const ageText = age.from === 'unknown' ? 'age unknown' : `${formatDuration(age.ms)} old`;
    decide(f, f.verdict, `placeholder, ${ageText}: ${f.reason}`, 'resolving');
  }
}

function pendingAge(
  entry: SessionEntry,
  now: number,
  policy: Policy,
): { ms: number; from: 'registered_at' | 'first_observed' | 'last_seen' | 'unknown' } {
  // A registry clock ahead of ours would give a negative age: clamp, never count it as old.
  if (entry.registeredAt !== undefined) {
    return { ms: Math.max(0, now - toLocal(policy, entry.source, entry.registeredAt)), from: 'registered_at' };
  }
  if (entry.firstObservedAt !== undefined) return { ms: Math.max(0, now - entry.firstObservedAt), from: 'first_observed' };
  if (entry.lastSeen !== undefined) {
    return { ms: Math.max(0, now - toLocal(policy, entry.source, entry.lastSeen)), from: 'last_seen' };
  }
  return { ms: 0, from: 'unknown' };
}

// ---------------------------------------------------------------- superseded

const INDEX_BITS = 2 ** 21;

/** Of the live entries of one source that share one pid, all but the newest registration are superseded. */
function markSuperseded(findings: Draft[], policy: Policy): void {
  // Shared pids are rare: sort (pid, index) pairs packed into one float, then look at neighbours.
  // No per-entry allocation, unlike a Map of 10,000 pids. pid < 2^31 and index < 2^21 fit in 2^53.
  if (findings.length >= INDEX_BITS) return markSupersededSlow(findings, policy);
  const keys = new Float64Array(findings.length);
  let n = 0;
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    if (f.verdict === 'live' && isUsablePid(f.entry.pid)) keys[n++] = f.entry.pid * INDEX_BITS + i;
  }
  const sorted = keys.subarray(0, n).sort();
  for (let start = 0; start < n; ) {
    const pid = Math.floor(sorted[start]! / INDEX_BITS);
    let end = start + 1;
    while (end < n && Math.floor(sorted[end]! / INDEX_BITS) === pid) end++;
    if (end - start > 1) {
      const shared: Draft[] = [];
      for (let k = start; k < end; k++) shared.push(findings[sorted[k]! % INDEX_BITS]!);
      supersedeBySource(shared, policy);
    }
    start = end;
  }
}

/** The same, for registries too big to pack an index (over two million entries). */
function markSupersededSlow(findings: Draft[], policy: Policy): void {
  const byPid = new Map<number, Draft[]>();
  for (const f of findings) {
    if (f.verdict !== 'live' || !isUsablePid(f.entry.pid)) continue;
    const list = byPid.get(f.entry.pid);
    if (list) list.push(f);
    else byPid.set(f.entry.pid, [f]);
  }
  for (const shared of byPid.values()) if (shared.length > 1) supersedeBySource(shared, policy);
}

function supersedeBySource(shared: Draft[], policy: Policy): void {
  for (const source of new Set(shared.map((f) => f.source))) {
    const group = shared.filter((f) => f.source === source);
    if (group.length > 1) supersede(group, policy);
  }
}

/** Evidence lists at most this many siblings, reasons name at most NAMED: hundreds of entries
 * on one pid (a registry gone wrong) must not make the pass quadratic in time or in text. */
const MAX_SIBLINGS = 20;
const NAMED = 3;

function someIds(group: readonly Draft[], except: Draft | undefined, max: number): string[] {
  const out: string[] = [];
  for (const g of group) {
    if (g === except) continue;
    out.push(g.id);
    if (out.length === max) break;
  }
  return out;
}

function nameSome(group: readonly Draft[], except: Draft | undefined): string {
  const total = group.length - (except ? 1 : 0);
  const named = someIds(group, except, NAMED).map((s) => sanitize(s, 40)).join(', ');
  return total > NAMED ? `${named} and ${total - NAMED} more` : named;
}

function supersede(group: Draft[], policy: Policy): void {
  const order = newestOrder(group.map((f) => f.entry), policy);
  const newest = order ? group.filter((f) => order.rank(f.entry) === order.max) : group;
  const newer = nameSome(newest, undefined);
  for (const f of group) {
    f.evidence.siblings = someIds(group, f, MAX_SIBLINGS);
    f.evidence.siblingCount = group.length - 1;
    f.evidence.sharedBy = 'pid';
    if (!order) {
      decide(f, 'live', `${f.reason}; also claimed by ${nameSome(group, f)}, and nothing tells which registration is newest`, 'shared pid');
      continue;
    }
    f.evidence.newestBy = order.by;
    if (order.rank(f.entry) < order.max) {
      decide(f, 'superseded', `pid ${String(f.entry.pid)} is alive but belongs to the newer entry ${newer} (by ${order.by.replace('_', ' ')})`);
    } else if (newest.length > 1) {
      decide(f, 'live', `${f.reason}; also claimed by ${nameSome(group, f)}, registered at the same time: cannot tell which is newest`, 'shared pid');
    } else {
      decide(f, 'live', `${f.reason}; newest of ${group.length} entries on this pid`, f.note);
    }
  }
}

/**
 * Of the local entries of one source whose ports are served by one process, whatever the
 * registry's status, all but the newest registration are superseded: an old pi-socket re-registers
 * a previous session's id from the same process (protocols.md §1), and only the newest is current.
 */
function markSharedPortOwner(findings: Draft[], policy: Policy): void {
  let groups: Map<string, Draft[]> | undefined;
  for (const f of findings) {
    const owner = f.evidence.port?.owner;
    if (owner === undefined || (f.verdict !== 'live' && f.verdict !== 'offline')) continue;
    const key = `${owner}\u0000${f.source}`;
    groups ??= new Map();
    const group = groups.get(key);
    if (group) group.push(f);
    else groups.set(key, [f]);
  }
  if (!groups) return;
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const order = newestOrder(group.map((f) => f.entry), policy);
    const newest = order ? group.filter((f) => order.rank(f.entry) === order.max) : group;
    const owner = group[0]!.evidence.port!.owner!;
    for (const f of group) {
      f.evidence.siblings = someIds(group, f, MAX_SIBLINGS);
      f.evidence.siblingCount = group.length - 1;
      f.evidence.sharedBy = 'port-owner';
      if (!order || newest.length > 1 || order.rank(f.entry) === order.max) {
        if (order) f.evidence.newestBy = order.by;
        continue;
      }
      f.evidence.newestBy = order.by;
      decide(f, 'superseded', `pid ${owner} serves its port and also the newer entry ${nameSome(newest, undefined)} (by ${order.by.replace('_', ' ')})`);
    }
  }
}

type NewestBy = 'registered_at' | 'join_order' | 'last_seen';

function newestOrder(
  entries: readonly SessionEntry[],
  policy: Policy,
): { by: NewestBy; rank: (e: SessionEntry) => number; max: number } | undefined {
  const candidates: [NewestBy, (e: SessionEntry) => number | undefined][] = [
    ['registered_at', (e) => (e.registeredAt === undefined ? undefined : toLocal(policy, e.source, e.registeredAt))],
    ['join_order', (e) => e.joinSeq],
    ['last_seen', (e) => e.lastSeen],
  ];
  for (const [by, get] of candidates) {
    // A key decides only if every entry of the group has it: mixing keys would compare unlike things.
    if (!entries.every((e) => get(e) !== undefined)) continue;
    const rank = (e: SessionEntry): number => get(e) as number;
    const max = Math.max(...entries.map(rank));
    if (entries.every((e) => rank(e) === max)) continue; // all tied on this key: try the next one
    return { by, rank, max };
  }
  return undefined;
}

// ---------------------------------------------------------------- claims

interface Holders {
  /** By source, then id: ids are unique per source only. */
  readonly bySource: Map<string, Map<string, SessionFinding>>;
  /** By id alone, every source: for a holder its claim's own source does not have. */
  readonly byId: Map<string, SessionFinding[]>;
}

/** The session findings that claims name as holders. Only the named ids are indexed. */
function indexHolders(claims: readonly ClaimEntry[], sessions: readonly SessionFinding[]): Holders {
  const bySource = new Map<string, Map<string, SessionFinding>>();
  const byId = new Map<string, SessionFinding[]>();
  const wanted = new Set<string>();
  for (const c of claims) if (c.holder !== undefined) wanted.add(c.holder);
  if (wanted.size === 0) return { bySource, byId };
  for (const f of sessions) {
    if (!wanted.has(f.id)) continue;
    let ids = bySource.get(f.source);
    if (!ids) bySource.set(f.source, (ids = new Map()));
    ids.set(f.id, f);
    const same = byId.get(f.id);
    if (same) same.push(f);
    else byId.set(f.id, [f]);
  }
  return { bySource, byId };
}

/**
 * The claim's holder: in the claim's own source; else a session with that very id (byte for byte,
 * no case folding or prefix games) in another source. The same id in several sources is the same
 * session seen twice: one of them that is not a problem is proof enough that it lives.
 */
function findHolder(claim: ClaimEntry, holders: Holders): SessionFinding | undefined {
  if (claim.holder === undefined) return undefined;
  const own = holders.bySource.get(claim.source)?.get(claim.holder);
  if (own) return own;
  const elsewhere = holders.byId.get(claim.holder);
  if (!elsewhere) return undefined;
  return elsewhere.find((f) => !f.problem) ?? elsewhere[0];
}

function judgeClaim(claim: ClaimEntry, holders: Holders, ctx: Context): ClaimFinding {
  const holder = findHolder(claim, holders);
  const evidence = newEvidence(ctx.host(claim.machine ?? holder?.entry.machine));
  evidence.holder = {
    id: claim.holder ?? null,
    present: holder !== undefined,
    verdict: holder?.verdict,
    underlying: holder?.evidence.underlying,
    source: holder !== undefined && holder.source !== claim.source ? holder.source : undefined,
  };
  return judgeClaimVerdict(claim, holder, evidence, ctx);
}

function judgeClaimVerdict(
  claim: ClaimEntry,
  holder: SessionFinding | undefined,
  evidence: Mutable<Evidence>,
  ctx: Context,
): ClaimFinding {
  const local = evidence.host.local;
  const holderName = claim.holder !== undefined ? sanitize(claim.holder, 40) : '';
  const stale = (reason: string): ClaimFinding => claimFinding(claim, 'stale-claim', reason, evidence);
  const held = (reason: string, note?: string): ClaimFinding => claimFinding(claim, 'held', reason, evidence, note);

  const unusable = claim.pid === undefined ? undefined : pidProblem(claim.pid);
  if (claim.pid !== undefined) evidence.pid = { value: unusable ? null : (claim.pid as number), raw: claim.pid, unusable };
  const facts = local && unusable === undefined ? ctx.os.pids.get(claim.pid as number) : undefined;
  if (facts) {
    evidence.kill = facts.kill;
    evidence.checkedAt = facts.checkedAt;
    evidence.state = facts.state;
    if (facts.kill === 'ESRCH') return stale(`its pid ${facts.pid} is gone (ESRCH)`);
    if (facts.state === 'Z' && facts.kill !== 'error') return stale(`its pid ${facts.pid} is a zombie`);
  }
  if (claim.heartbeatAt !== undefined && claim.staleAfterMs !== undefined) {
    const ageMs = Math.max(0, ctx.now - toLocal(ctx.policy, claim.source, claim.heartbeatAt));
    evidence.heartbeat = { at: claim.heartbeatAt, ageMs, staleAfterMs: claim.staleAfterMs };
    if (ageMs > claim.staleAfterMs) {
      return stale(`last heartbeat ${formatDuration(ageMs)} ago (stale after ${formatDuration(claim.staleAfterMs)})`);
    }
  }
  if (claim.holder !== undefined && !holder) return stale(`holder ${holderName} is not in the registry`);
  const where = holder && holder.source !== claim.source ? ` (in ${sanitize(holder.source, 20)})` : '';
  if (holder?.problem) return stale(`holder ${holderName}${where} is ${holder.verdict}: ${holder.reason}`);
  const underlying = holder?.evidence.underlying;
  if (holder?.verdict === 'offline' && underlying && VERDICT_TRAITS[underlying].problem) {
    return stale(`holder ${holderName} is offline and its process is ${underlying}`);
  }
  if (holder) {
    const caveat = holder.verdict === 'live' ? '' : ` (${holder.verdict}: not proof it is alive)`;
    return held(`held by ${holderName}${where}, which is ${holder.verdict}${caveat}`);
  }
  if (facts && (facts.kill === 'ok' || facts.kill === 'EPERM')) return held(`held by pid ${facts.pid}, which is alive`);
  return held('names no holder and no pid that can be checked here', 'unverified');
}

function claimFinding(claim: ClaimEntry, verdict: ClaimVerdict, reason: string, evidence: Evidence, note?: string): ClaimFinding {
  const traits = VERDICT_TRAITS[verdict];
  return {
    kind: 'claim',
    source: claim.source,
    id: claim.resource,
    holder: claim.holder ?? null,
    verdict,
    problem: traits.problem,
    evictable: traits.evictable,
    reason,
    note,
    evidence,
    entry: claim,
  };
}

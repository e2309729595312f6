// Rule: claims. A claim / lock is held while its holder lives; it is stale when its own pid is
// dead or recycled (its process started after the claim was taken: the identity rule of sessions,
// with acquired_at / lockedAt as the reference), its heartbeat is older than the claim manager's limit, its holder is missing from the
// registry, or its holder's verdict is a problem (offline included, when the process behind it is).

import { formatDuration } from '../duration.js';
import { pidProblem } from '../pid.js';
import { sanitize } from '../sanitize.js';
import {
  VERDICT_TRAITS,
  type ClaimEntry,
  type ClaimFinding,
  type ClaimVerdict,
  type Evidence,
  type OsFacts,
  type PidFacts,
  type Policy,
  type SessionFinding,
} from '../types.js';
import { newEvidence, noteInvalidTimes, PROCESS_START_FIELD, toLocal, type EvidenceDraft } from './judgement.js';

/** The session findings that claims name as holders, by id. Only the named ids are indexed. */
export interface Holders {
  /** The first finding of each named id, in registry order. */
  readonly first: Map<string, SessionFinding>;
  /** The others of an id that more than one entry has (ids are unique per source only): rare. */
  readonly more: Map<string, SessionFinding[]>;
}

/**
 * The session findings that claims name as holders. It runs on every reconcile over every
 * session: one lookup per session, one map entry per holder found, a list only for an id that
 * more than one entry has. (A map per source and a list per id allocated 0.2 MB more per
 * reconcile of 10,000 sessions and 2,000 claims, enough for V8 to collect its young generation
 * 150 times in 300 reconciles instead of 120: docs/performance.md, 2026-11-24.)
 */
export function indexHolders(claims: readonly ClaimEntry[], sessions: readonly SessionFinding[]): Holders {
  const first = new Map<string, SessionFinding>();
  const more = new Map<string, SessionFinding[]>();
  const wanted = new Set<string>();
  for (const c of claims) if (c.holder !== undefined) wanted.add(c.holder);
  if (wanted.size === 0) return { first, more };
  for (const f of sessions) {
    if (!wanted.has(f.id)) continue;
    if (!first.has(f.id)) first.set(f.id, f);
    else {
      const others = more.get(f.id);
      if (others) others.push(f);
      else more.set(f.id, [f]);
    }
  }
  return { first, more };
}

/**
 * The claim's holder: in the claim's own source (the last entry of that id there); else a session
 * with that very id (byte for byte, no case folding or prefix games) in another source. The same
 * id in several sources is the same session seen twice: one of them that is not a problem is
 * proof enough that it lives.
 */
export function findHolder(claim: ClaimEntry, holders: Holders): SessionFinding | undefined {
  if (claim.holder === undefined) return undefined;
  const first = holders.first.get(claim.holder);
  const others = holders.more.get(claim.holder);
  if (first === undefined || others === undefined) return first;
  const all = [first, ...others];
  return all.findLast((f) => f.source === claim.source) ?? all.find((f) => !f.problem) ?? first;
}

/** Judge `claim`, whose holder's finding is `holder` (undefined: none found); `host` is its host's evidence. */
export function judgeClaim(
  claim: ClaimEntry,
  holder: SessionFinding | undefined,
  host: Evidence['host'],
  /** The facts of the claim's host when it can be checked (this host, or a remote host that is up). */
  os: OsFacts | undefined,
  now: number,
  policy: Policy,
): ClaimFinding {
  const evidence = newEvidence(host);
  noteInvalidTimes(evidence, claim.invalidTimes);
  evidence.holder = {
    id: claim.holder ?? null,
    present: holder !== undefined,
    verdict: holder?.verdict,
    underlying: holder?.evidence.underlying,
    source: holder !== undefined && holder.source !== claim.source ? holder.source : undefined,
  };

  const unusable = claim.pid === undefined ? undefined : pidProblem(claim.pid);
  if (claim.pid !== undefined) evidence.pid = { value: unusable ? null : (claim.pid as number), raw: claim.pid, unusable };
  // Only the facts of the claim's own host: this one, or a remote host verified over ssh and up.
  const checkable = os !== undefined && (host.local || host.ssh?.state === 'up');
  const facts = checkable && unusable === undefined ? os.pids.get(claim.pid as number) : undefined;
  let recycled: string | undefined;
  if (facts) {
    evidence.kill = facts.kill;
    evidence.checkedAt = facts.checkedAt;
    evidence.state = facts.state;
    if (facts.invalidStart !== undefined) noteInvalidTimes(evidence, [{ field: PROCESS_START_FIELD, value: facts.invalidStart }]);
    if (facts.kill === 'ESRCH') return claimFinding(claim, 'stale-claim', evidence, `its pid ${facts.pid} is gone (ESRCH)`);
    if (facts.state === 'Z' && facts.kill !== 'error') return claimFinding(claim, 'stale-claim', evidence, `its pid ${facts.pid} is a zombie`);
    if (facts.kill !== 'error') recycled = startAfterClaim(claim, facts, policy, evidence);
  }
  if (claim.heartbeatAt !== undefined && claim.staleAfterMs !== undefined) {
    const ageMs = Math.max(0, now - toLocal(policy, claim.source, claim.heartbeatAt));
    evidence.heartbeat = { at: claim.heartbeatAt, ageMs, staleAfterMs: claim.staleAfterMs };
    if (ageMs > claim.staleAfterMs) {
      return claimFinding(claim, 'stale-claim', evidence, `last heartbeat ${formatDuration(ageMs)} ago (stale after ${formatDuration(claim.staleAfterMs)})`);
    }
  }
  // After the heartbeat, which a claim manager that keeps one judges by first (its own rule).
  if (recycled !== undefined) return claimFinding(claim, 'stale-claim', evidence, recycled);
  if (claim.holder !== undefined && !holder) return claimFinding(claim, 'stale-claim', evidence, `holder ${holderName(claim)} is not in the registry`);
  const where = holder && holder.source !== claim.source ? ` (in ${sanitize(holder.source, 20)})` : '';
  if (holder?.problem) return claimFinding(claim, 'stale-claim', evidence, `holder ${holderName(claim)}${where} is ${holder.verdict}: ${holder.reason}`);
  const underlying = holder?.evidence.underlying;
  if (holder?.verdict === 'offline' && underlying && VERDICT_TRAITS[underlying].problem) {
    return claimFinding(claim, 'stale-claim', evidence, `holder ${holderName(claim)} is offline and its process is ${underlying}`);
  }
  if (holder) {
    const caveat = holder.verdict === 'live' ? '' : ` (${holder.verdict}: not proof it is alive)`;
    return claimFinding(claim, 'held', evidence, `held by ${holderName(claim)}${where}, which is ${holder.verdict}${caveat}`);
  }
  if (facts && (facts.kill === 'ok' || facts.kill === 'EPERM')) return claimFinding(claim, 'held', evidence, `held by pid ${facts.pid}, which is alive`);
  return claimFinding(claim, 'held', evidence, 'names no holder and no pid that can be checked here', 'unverified');
}

/**
 * The identity rule of sessions (identity.ts) for a claim's own pid: a process that started more
 * than the start tolerance after the claim was taken cannot be the one that took it. The claim's
 * time is on its registry's clock (hypivisor's acquired_at, whole seconds: the tolerance covers the
 * rounding; agentctl's lockedAt, taken after the agent was spawned).
 */
function startAfterClaim(claim: ClaimEntry, facts: PidFacts, policy: Policy, evidence: EvidenceDraft): string | undefined {
  if (facts.startedAt === undefined || claim.acquiredAt === undefined) return undefined;
  const referenceAt = toLocal(policy, claim.source, claim.acquiredAt);
  const deltaMs = facts.startedAt - referenceAt;
  const toleranceMs = policy.startToleranceMs;
  evidence.start = { processStartedAt: facts.startedAt, reference: 'acquired_at', referenceAt, deltaMs, toleranceMs };
  if (deltaMs <= toleranceMs) return undefined;
  return `its pid ${facts.pid} belongs to a process started ${formatDuration(deltaMs)} after the claim was taken: the pid was recycled`;
}

/** The holder as a reason names it, made only when a reason says it; every caller's claim names one. */
function holderName(claim: ClaimEntry): string {
  return sanitize(claim.holder ?? '', 40);
}

function claimFinding(claim: ClaimEntry, verdict: ClaimVerdict, evidence: EvidenceDraft, reason: string, note?: string): ClaimFinding {
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

// What the verdict rules share: the judgement a rule returns, the evidence it fills in, and the
// clock conversions. Every rule is a pure function from facts to a judgement; reconcile.ts
// composes them in one visible order.

import { VERDICT_TRAITS, type Evidence, type Policy, type SessionEntry, type SessionFinding, type SessionVerdict } from '../types.js';

/** What a rule decides about one session entry: the verdict, why in one line, and a qualifier. */
export interface Judgement {
  readonly verdict: SessionVerdict;
  /** One line, plain words. */
  readonly reason: string;
  /** Extra qualifier, e.g. "resolving" for a young pending entry. */
  readonly note?: string | undefined;
}

/** A judgement. Always the same three fields (one object shape on the hot path). */
export function judged(verdict: SessionVerdict, reason: string, note?: string): Judgement {
  return new Judged(verdict, reason, note);
}

// What reconcile makes per entry (judgements, evidence, findings) is made by a class, not by an
// object literal. V8 follows the objects of each literal (its allocation site): when most of those
// made since a young-generation collection are still alive at one, with the young generation at
// its full size, it allocates that literal's objects straight in the old generation from then on
// ("pretenuring"). A reconcile's objects live until the next reconcile, so they were then freed
// only by full collections: over 10,000 entries, the processes where V8 decided so spent about
// twice the CPU per reconcile of those where it did not (--trace-pretenuring;
// docs/performance.md, 2026-11-24). Objects made by `new` have no allocation site.

class Judged implements Judgement {
  constructor(
    readonly verdict: SessionVerdict,
    readonly reason: string,
    readonly note: string | undefined,
  ) {}
}

/** Evidence while a rule fills it in: each rule records what it looked at. */
export type EvidenceDraft = { -readonly [K in keyof Evidence]: Evidence[K] };

/**
 * Evidence objects start with the fields nearly every finding fills, in one order (absent =
 * undefined, which JSON omits): one small hidden class for the hot path. Rare fields (pending,
 * siblings, port, ...) are added only where they apply.
 */
export function newEvidence(host: Evidence['host']): EvidenceDraft {
  return new EvidenceObject(host);
}

class EvidenceObject implements EvidenceDraft {
  host: Evidence['host'];
  kill: Evidence['kill'] = undefined;
  state: Evidence['state'] = undefined;
  start: Evidence['start'] = undefined;
  process: Evidence['process'] = undefined;
  checkedAt: Evidence['checkedAt'] = undefined;

  constructor(host: Evidence['host']) {
    this.host = host;
  }
}

/** The finding for a session entry, with the traits design.md gives its verdict. */
export function sessionFinding(entry: SessionEntry, judgement: Judgement, evidence: Evidence): SessionFinding {
  return new SessionFindingObject(entry, judgement, evidence);
}

class SessionFindingObject implements SessionFinding {
  readonly kind = 'session';
  readonly source: string;
  readonly id: string;
  readonly verdict: SessionVerdict;
  readonly problem: boolean;
  readonly evictable: boolean;
  readonly reason: string;
  readonly note: string | undefined;
  readonly evidence: Evidence;
  readonly entry: SessionEntry;

  constructor(entry: SessionEntry, judgement: Judgement, evidence: Evidence) {
    const traits = VERDICT_TRAITS[judgement.verdict];
    this.source = entry.source;
    this.id = entry.id;
    this.verdict = judgement.verdict;
    this.problem = traits.problem;
    this.evictable = traits.evictable;
    this.reason = judgement.reason;
    this.note = judgement.note;
    this.evidence = evidence;
    this.entry = entry;
  }
}

/** A registry-clock time of `source` on the local clock. */
export function toLocal(policy: Policy, source: string, registryTime: number): number {
  return registryTime - (policy.registryClockOffsetMs?.[source] ?? 0);
}

/** "12:03:04" in the engine's local time, or UTC when the policy gives no formatter (core has no time zone). */
export function clockText(policy: Policy, localMs: number): string {
  if (policy.clockText) return policy.clockText(localMs);
  const daySeconds = Math.floor((((localMs % 86_400_000) + 86_400_000) % 86_400_000) / 1000);
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return `${two(Math.floor(daySeconds / 3600))}:${two(Math.floor(daySeconds / 60) % 60)}:${two(daySeconds % 60)} UTC`;
}

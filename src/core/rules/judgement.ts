// What the verdict rules share: the judgement a rule returns, the evidence it fills in, and the
// clock conversions. Every rule is a pure function from facts to a judgement; reconcile.ts
// composes them in one visible order.

import { VERDICT_TRAITS, type Evidence, type InvalidTime, type Policy, type SessionEntry, type SessionFinding, type SessionVerdict } from '../types.js';

/** What a rule decides about one session entry: the verdict, why in one line, and a qualifier. */
export interface Judgement {
  readonly verdict: SessionVerdict;
  /** One line, plain words. */
  readonly reason: string;
  /** Extra qualifier, e.g. "resolving" for a young pending entry. */
  readonly note?: string | undefined;
}

/** A judgement. Always the same three fields. */
export function judged(verdict: SessionVerdict, reason: string, note?: string): Judgement {
  return { verdict, reason, note };
}

/** Evidence while a rule fills it in: each rule records what it looked at. */
export type EvidenceDraft = { -readonly [K in keyof Evidence]: Evidence[K] };

/**
 * Evidence starts with the fields nearly every finding fills, in one order (absent = undefined,
 * which JSON omits); rare fields (pending, siblings, port, ...) are added only where they apply.
 */
export function newEvidence(host: Evidence['host']): EvidenceDraft {
  return { host, kill: undefined, state: undefined, start: undefined, process: undefined, usage: undefined, checkedAt: undefined };
}

/** What a host answered as a process's start, when it is no time. */
export const PROCESS_START_FIELD = 'process start';

/**
 * Times that are no time join the evidence, to be shown as such; the rules never see them (the
 * adapters left their fields unknown). Rare: a list is made only when there is one.
 */
export function noteInvalidTimes(evidence: EvidenceDraft, times: readonly InvalidTime[] | undefined): void {
  if (times === undefined || times.length === 0) return;
  evidence.invalidTimes = evidence.invalidTimes === undefined ? times : [...evidence.invalidTimes, ...times];
}

/** The finding for a session entry, with the traits design.md gives its verdict. */
export function sessionFinding(entry: SessionEntry, judgement: Judgement, evidence: Evidence): SessionFinding {
  const traits = VERDICT_TRAITS[judgement.verdict];
  return {
    kind: 'session',
    source: entry.source,
    id: entry.id,
    verdict: judgement.verdict,
    problem: traits.problem,
    evictable: traits.evictable,
    reason: judgement.reason,
    note: judgement.note,
    evidence,
    entry,
  };
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

// Rule: pending. A `pending-*` id is a placeholder the registry resolves to a real entry. One whose
// process is dead, or older than the pending TTL, is `pending` (a problem); a young one keeps what
// the OS said of it, noted "resolving".

import { formatDuration } from '../duration.js';
import type { Evidence, Policy, SessionEntry } from '../types.js';
import { judged, toLocal, type EvidenceDraft, type Judgement } from './judgement.js';

export const PENDING_PREFIX = 'pending-';

export function isPlaceholder(entry: SessionEntry): boolean {
  return entry.id.startsWith(PENDING_PREFIX);
}

/** Judge a placeholder on this host, of which the OS said `local`. */
export function judgePending(entry: SessionEntry, local: Judgement, now: number, policy: Policy, evidence: EvidenceDraft): Judgement {
  const age = pendingAge(entry, now, policy);
  evidence.pending = { ageMs: age.ms, from: age.from, ttlMs: policy.pendingTtlMs };
  if (local.verdict === 'ghost' || local.verdict === 'zombie' || local.verdict === 'reused') {
    return judged('pending', `placeholder whose process is dead: ${local.reason}`);
  }
  if (age.from !== 'unknown' && age.ms > policy.pendingTtlMs) {
    return judged('pending', `placeholder never resolved: ${formatDuration(age.ms)} old (TTL ${formatDuration(policy.pendingTtlMs)})`);
  }
  const ageText = age.from === 'unknown' ? 'age unknown' : `${formatDuration(age.ms)} old`;
  return judged(local.verdict, `placeholder, ${ageText}: ${local.reason}`, 'resolving');
}

type PendingAge = { ms: number; from: NonNullable<Evidence['pending']>['from'] };

/** Age from registered_at, else first observed, else last_seen. */
export function pendingAge(entry: SessionEntry, now: number, policy: Policy): PendingAge {
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

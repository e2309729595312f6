// What an agentctl eviction did, read from its lists before and after: the one record asked
// for, and everything else session.prune took with it (it removes every dead record at once).

import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import type { AlsoRemoved, RegistryAnswer } from '../types.js';

export interface Lists {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

export function describe(entry: SessionEntry): string {
  return `status ${entry.status ?? 'unknown'}, pid ${entry.pid === undefined ? 'none' : String(entry.pid)}`;
}

/** The outcome of a prune or release: what it was asked to remove, and everything else that went with it. */
export function evicted(before: Lists, after: Lists, target: { kind: 'session' | 'claim'; id: string }, pruneAnswer: unknown): RegistryAnswer {
  const sessionsAfter = new Set(after.sessions.map((s) => s.id));
  const claimsAfter = new Set(after.claims.map((c) => c.resource));
  const also: AlsoRemoved[] = [];
  for (const s of before.sessions) {
    if (!sessionsAfter.has(s.id) && !(target.kind === 'session' && s.id === target.id)) also.push({ kind: 'session', id: s.id, raw: s.raw ?? s });
  }
  for (const c of before.claims) {
    if (!claimsAfter.has(c.resource) && !(target.kind === 'claim' && c.resource === target.id)) also.push({ kind: 'claim', id: c.resource, raw: c.raw ?? c });
  }
  const pruned = typeof pruneAnswer === 'object' && pruneAnswer !== null ? (pruneAnswer as { pruned?: unknown }).pruned : undefined;
  return {
    outcome: 'evicted',
    detail: typeof pruned === 'number' ? `agentctl pruned ${pruned} record${pruned === 1 ? '' : 's'}` : undefined,
    alsoRemoved: also,
  };
}

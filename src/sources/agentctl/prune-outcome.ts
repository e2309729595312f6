// What an agentctl eviction did, read from its lists before and after: the one record asked
// for, and everything else session.prune took with it. Prune acts on every dead record and every
// dead auto-lock pid at once, whatever it does to the one we target, and it deletes nothing: a
// session it "prunes" is marked stopped (and no longer listed); an auto-lock is dropped.

import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import type { AlsoRemoved } from '../types.js';
import { claimKeyOf, ENDED_STATUSES } from './wire.js';

export interface Lists {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

export type Target = { readonly kind: 'session'; readonly id: string } | { readonly kind: 'claim'; readonly key: string };

export function describe(entry: SessionEntry): string {
  return `status ${entry.status ?? 'unknown'}, pid ${entry.pid === undefined ? 'none' : String(entry.pid)}`;
}

/**
 * How a session changed between two reads: undefined when it did not (for us), else what
 * happened. A record no longer listed is gone from the daemon's view; one still listed (a
 * manual lock names it) but now marked stopped or error was pruned all the same.
 */
function sessionChange(before: SessionEntry, after: SessionEntry | undefined): string | undefined {
  if (!after) return 'no longer listed';
  const wasOver = before.status !== undefined && ENDED_STATUSES.has(before.status);
  const isOver = after.status !== undefined && ENDED_STATUSES.has(after.status);
  return !wasOver && isOver ? `marked ${after.status}` : undefined;
}

/** Whether the request removed `target` (for a session: no longer listed, or marked over). */
export function targetRemoved(before: Lists, after: Lists, target: Target): boolean {
  if (target.kind === 'session') {
    const was = before.sessions.find((s) => s.id === target.id);
    return was !== undefined && sessionChange(was, after.sessions.find((s) => s.id === target.id)) !== undefined;
  }
  return !after.claims.some((c) => claimKeyOf(c) === target.key);
}

/** Every record and lock the request changed besides `target`, each with its entry before (and after, when still listed). */
export function sideEffects(before: Lists, after: Lists, target: Target): AlsoRemoved[] {
  const sessionsAfter = new Map(after.sessions.map((s) => [s.id, s]));
  const claimsAfter = new Set(after.claims.map(claimKeyOf));
  const also: AlsoRemoved[] = [];
  for (const s of before.sessions) {
    if (target.kind === 'session' && s.id === target.id) continue;
    const now = sessionsAfter.get(s.id);
    const change = sessionChange(s, now);
    if (change) also.push({ kind: 'session', id: s.id, change, raw: s.raw ?? s, ...(now ? { after: now.raw ?? now } : {}) });
  }
  for (const c of before.claims) {
    const key = claimKeyOf(c);
    if ((target.kind === 'claim' && key === target.key) || claimsAfter.has(key)) continue;
    also.push({ kind: 'claim', id: c.resource, ...(c.key !== undefined ? { key: c.key } : {}), change: 'no longer listed', raw: c.raw ?? c });
  }
  return also;
}

/** N of session.prune's `{pruned: N}`, or undefined for any other answer. */
export function prunedCount(answer: unknown): number | undefined {
  const pruned = typeof answer === 'object' && answer !== null ? (answer as { pruned?: unknown }).pruned : undefined;
  return typeof pruned === 'number' ? pruned : undefined;
}

/** "agentctl pruned N records", from session.prune's `{pruned: N}`. */
export function prunedText(answer: unknown): string | undefined {
  const pruned = prunedCount(answer);
  return pruned !== undefined ? `agentctl pruned ${pruned} record${pruned === 1 ? '' : 's'}` : undefined;
}

// What the engine makes of its sources' snapshots before reconcile: one merged view of every
// source's lists, and the policy of this moment (host, aliases, TTL, each registry's clock offset).

import { defaultPolicy, type ClaimEntry, type Policy, type RegistryView, type SessionEntry } from '../core/types.js';
import { INVALID_TIME } from '../core/time.js';
import type { SourceSnapshot } from '../sources/types.js';

/** Sessions of every source, then claims of every source; one source's lists are used as they are. */
export function mergeView(snaps: readonly SourceSnapshot[]): RegistryView {
  if (snaps.length === 1) return { sessions: snaps[0]!.sessions, claims: snaps[0]!.claims };
  // Entries are never copied or spread: V8 reads objects made by {...entry} far slower in reconcile.
  const sessions: SessionEntry[] = [];
  const claims: ClaimEntry[] = [];
  for (const s of snaps) for (const e of s.sessions) sessions.push(e);
  for (const s of snaps) for (const c of s.claims) claims.push(c);
  return { sessions, claims };
}

/** The policy for this host, with every source's clock offset as it stands now. */
export function policyFor(
  snaps: readonly SourceSnapshot[],
  hostName: string,
  hostAliases: readonly string[],
  pendingTtlMs: number | undefined,
): Policy {
  const registryClockOffsetMs: Record<string, number> = {};
  for (const s of snaps) registryClockOffsetMs[s.state.name] = s.state.clockOffsetMs;
  // A TTL not given is undefined here, and defaultPolicy keeps its default for an undefined override.
  return defaultPolicy(hostName, { hostAliases, registryClockOffsetMs, clockText: localClockText, pendingTtlMs });
}

/** "12:03:04" on this machine's local clock, for reasons that name a moment ("invalid time" for none: never NaN:NaN). */
export function localClockText(ms: number): string {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return INVALID_TIME;
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

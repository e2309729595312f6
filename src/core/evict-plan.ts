// Eviction as data: what a selection of findings would send, what needs force, and, right
// before sending, whether a fresh look still allows it. The engine executes; core decides.

import type { Finding } from './types.js';

export type EvictionAction =
  | { readonly type: 'deregister'; readonly source: string; readonly id: string }
  /** `claim`: which of several claims on the resource (the entry's `key`), when its source has several. */
  | { readonly type: 'release-claim'; readonly source: string; readonly resource: string; readonly claim?: string | undefined };

export interface PlannedEviction {
  readonly finding: Finding;
  readonly action: EvictionAction;
  /** Sent only because the person forced it (the verdict alone does not allow eviction). */
  readonly forced: boolean;
}

export interface EvictionPlan {
  /** What will be sent, in order: claims first (a holder's removal would release them anyway). */
  readonly send: readonly PlannedEviction[];
  /** Selected but not evictable without force, and force was not given. */
  readonly needsForce: readonly Finding[];
}

/** A stable identity for a finding across reconciles: kind, source and id (a claim's key, when it has one). */
export function findingKey(f: Pick<Finding, 'kind' | 'source' | 'id'> | Finding): string {
  const key = f.kind === 'claim' && 'entry' in f ? (f.entry as { readonly key?: string | undefined }).key : undefined;
  return `${f.kind}\u0000${f.source}\u0000${key ?? f.id}`;
}

export function actionFor(f: Finding): EvictionAction {
  if (f.kind === 'session') return { type: 'deregister', source: f.source, id: f.id };
  return f.entry.key === undefined
    ? { type: 'release-claim', source: f.source, resource: f.id }
    : { type: 'release-claim', source: f.source, resource: f.id, claim: f.entry.key };
}

export function planEviction(selection: readonly Finding[], opts: { readonly force: boolean }): EvictionPlan {
  const seen = new Set<string>();
  const claims: PlannedEviction[] = [];
  const sessions: PlannedEviction[] = [];
  const needsForce: Finding[] = [];
  for (const f of selection) {
    const k = findingKey(f);
    if (seen.has(k)) continue;
    seen.add(k);
    if (!f.evictable && !opts.force) {
      needsForce.push(f);
      continue;
    }
    (f.kind === 'claim' ? claims : sessions).push({ finding: f, action: actionFor(f), forced: !f.evictable });
  }
  return { send: [...claims, ...sessions], needsForce };
}

export type Recheck =
  | { readonly send: true }
  | { readonly send: false; readonly outcome: 'already-gone' | 'skipped'; readonly why: string };

/**
 * Decide, from a fresh reconcile right before sending, whether a planned eviction still stands.
 * Anything that changed since the person confirmed stops it: they confirmed what they saw.
 */
export function recheck(planned: PlannedEviction, current: Finding | undefined): Recheck {
  const before = planned.finding;
  if (!current) return { send: false, outcome: 'already-gone', why: 'no longer in the registry' };
  const changed = identityChange(before, current);
  if (changed) return { send: false, outcome: 'skipped', why: `the entry changed: ${changed}` };
  if (current.verdict !== before.verdict) {
    return { send: false, outcome: 'skipped', why: `it is now ${current.verdict} (was ${before.verdict}): ${current.reason}` };
  }
  if (!current.evictable && !planned.forced) {
    return { send: false, outcome: 'skipped', why: `${current.verdict} needs force` };
  }
  return { send: true };
}

function identityChange(a: Finding, b: Finding): string | undefined {
  const pa = a.entry.pid;
  const pb = b.entry.pid;
  if (pa !== pb) return `pid ${String(pa ?? 'none')} is now ${String(pb ?? 'none')}`;
  if (a.entry.machine !== b.entry.machine) return 'it moved to another host';
  if (a.kind === 'session' && b.kind === 'session' && a.entry.port !== b.entry.port) {
    return `port ${String(a.entry.port ?? 'none')} is now ${String(b.entry.port ?? 'none')}`;
  }
  if (a.kind === 'claim' && b.kind === 'claim' && a.holder !== b.holder) {
    return `holder ${a.holder ?? 'none'} is now ${b.holder ?? 'none'}`;
  }
  return undefined;
}

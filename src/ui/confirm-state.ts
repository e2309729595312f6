// What the confirm dialog asks about: the selection split into what is evicted as it is, what
// needs force, and the stale rows that are left out whatever is answered. Pure.
import { planEviction } from '../core/evict-plan.js';
import type { Finding } from '../core/types.js';
import { staleOf } from '../engine/types.js';

export interface ConfirmState {
  /** Everything selected, in the order shown. */
  readonly selection: readonly Finding[];
  /** Evictable as they are. */
  readonly evictable: readonly Finding[];
  /** Need force: live, remote, unverified, held. */
  readonly needsForce: readonly Finding[];
  /** Selected but left out whatever is answered: stale rows of a registry not read now. */
  readonly stale?: readonly Finding[] | undefined;
  /** What part of the view the selection is, when it is not simply the rows chosen ("3 shown of 12 problems; filter: foo"). */
  readonly scope?: string | undefined;
  /** y was answered where every entry needs force: the dialog says why nothing was sent, and offers f. */
  readonly yesSentNothing?: boolean | undefined;
}

/** The question for a non-empty selection, or why there is none to ask (every row is stale). */
export function confirmFor(selection: readonly Finding[], scope?: string): ConfirmState | { readonly refused: string } {
  // Stale rows (their registry is not read now) are never sent, forced or not: left out, and said so.
  const stale = selection.filter((f) => staleOf(f) !== undefined);
  const rest = stale.length > 0 ? selection.filter((f) => staleOf(f) === undefined) : selection;
  if (rest.length === 0) return { refused: staleRefusal(stale) };
  const plan = planEviction(rest, { force: false });
  return { selection: rest, evictable: plan.send.map((p) => p.finding), needsForce: plan.needsForce, ...(stale.length > 0 ? { stale } : {}), ...(scope !== undefined ? { scope } : {}) };
}

/** Why stale rows are not evicted, one line: "not evicted: 2 stale rows; hypivisor is not connected (connection refused)". */
export function staleRefusal(stale: readonly Finding[]): string {
  const why = [...new Map(stale.map((f) => [staleOf(f)!.source, staleOf(f)!.why])).entries()].map(([name, w]) => `${name} is not connected (${w})`).join('; ');
  const n = stale.length;
  return `not evicted: ${n === 1 ? 'a stale row' : `${n} stale rows`}; ${why}. Evict once it reconnects.`;
}

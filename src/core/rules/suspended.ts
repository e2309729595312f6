// Rule: suspended. A process that is there and the one that registered, but stopped (state T:
// Ctrl-Z in its pane, SIGSTOP; t: stopped by a tracer), cannot answer anyone until it is
// continued. It is not a problem and never evicted for it (the person stopped it, and `fg` brings
// it back), and never a ghost: it exists. The registry's "offline" still wins (offline.ts), so the
// verdict means: the registry says active, the process is stopped.

import { isStopped } from '../usage.js';
import type { PidFacts, Policy } from '../types.js';
import { clockText, judged, type EvidenceDraft, type Judgement } from './judgement.js';

/** `name` says how reasons name the process ("pid 4242"); undefined when the process is not stopped. */
export function judgeSuspended(name: string, pid: number, facts: PidFacts, policy: Policy, evidence: EvidenceDraft): Judgement | undefined {
  if (!isStopped(facts.state)) return undefined;
  if (facts.stoppedSince !== undefined) evidence.stoppedSince = facts.stoppedSince;
  const since = facts.stoppedSince !== undefined ? ` since ${clockText(policy, facts.stoppedSince)}` : '';
  const by = facts.state === 't' ? 'by a tracer' : 'Ctrl-Z or SIGSTOP';
  return judged('suspended', `${name} is stopped (state ${facts.state}, ${by})${since}: it cannot answer until continued; ${wayOut(pid, facts.state)}`);
}

/** How a person gets a stopped agent going again: a tracer's stop is the tracer's to end. */
export function wayOut(pid: number, state: string | undefined): string {
  if (state === 't') return `its tracer (a debugger) holds it: continue it there; o jumps to its pane`;
  return `o jumps to its pane: fg there, or kill -CONT ${pid}`;
}

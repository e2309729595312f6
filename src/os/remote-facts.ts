// What the remote probe's answers say, as facts: a P, K or L answer line (remote-probe.ts parses
// it) read as PidFacts or PortFacts of that host, its start times moved onto this host's clock.
// Pure: the host that asked (ssh-provider.ts) gives its name, its clock offset and why no answer came.
import { isTime } from '../core/time.js';
import type { PidFacts, PortFacts } from '../core/types.js';
import type { RemoteAnswer } from './remote-probe.js';

export interface AnswerReading {
  readonly host: string;
  /** This host's clock minus the remote's, ms (0 within the slack). */
  readonly offsetMs: number;
  /** Why an answer gave no facts: none came, or not of the shape asked. */
  readonly noFacts: (answer: RemoteAnswer | undefined) => string;
}

/**
 * A P answer (asked or pushed) as facts; undefined: the request got no answer. A start that is no
 * time on this host's clock (core/time.ts: a start tick of 999999999999999999) is unknown, and said.
 */
export function pidFacts(pid: number, a: RemoteAnswer | undefined, checkedAt: number, r: AnswerReading): PidFacts {
  if (a?.kind !== 'pid') return { pid, kill: 'error', error: r.noFacts(a), checkedAt };
  if (a.kill === 'ESRCH' || a.kill === 'error') return { pid, kill: a.kill, error: a.error, checkedAt };
  if (a.detailsHidden) return { pid, kill: a.kill, detailsHidden: `${r.host}'s /proc does not show it`, checkedAt };
  const startedAt = a.startedAt === undefined ? undefined : a.startedAt + r.offsetMs;
  // What the process costs, as the same read saw it (CPU time so far, resident memory): the engine's meter of this host makes CPU% of it.
  const costs = a.cpuMs === undefined && a.rssBytes === undefined ? undefined : { cpuMs: a.cpuMs, rssBytes: a.rssBytes };
  if (startedAt === undefined || isTime(startedAt, checkedAt)) return { pid, kill: a.kill, state: a.state, startedAt, checkedAt, ...costs };
  return { pid, kill: a.kill, state: a.state, invalidStart: `${a.startText ?? a.startedAt} on ${r.host}`, checkedAt, ...costs };
}

/** The `index`th pid of a K answer (kill -0 only) as facts. */
export function killFacts(pid: number, a: RemoteAnswer | undefined, index: number, checkedAt: number, r: AnswerReading): PidFacts {
  const kill = a?.kind === 'kills' ? a.results[index] : undefined;
  if (kill === undefined) return { pid, kill: 'error', error: r.noFacts(a), checkedAt };
  if (kill === 'error') return { pid, kill, error: `kill -0 failed on ${r.host}`, checkedAt };
  return { pid, kill, checkedAt };
}

/** An L answer (asked or pushed) as facts. */
export function portFacts(port: number, a: RemoteAnswer | undefined, checkedAt: number, r: AnswerReading): PortFacts {
  if (a?.kind !== 'port') return { port, result: 'error', detail: r.noFacts(a), checkedAt };
  if (a.listening === 'yes') return { port, result: 'open', detail: `listening on ${r.host}`, checkedAt };
  if (a.listening === 'no') return { port, result: 'refused', detail: `nothing listens on ${r.host}`, checkedAt };
  return { port, result: 'error', detail: `${r.host} cannot tell who listens`, checkedAt };
}

/** `items` in slices of at most `size`: one request line each. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

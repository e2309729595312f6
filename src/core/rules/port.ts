// Rule: port. An entry whose pid cannot be used is judged by its port: by the process that serves
// it when the socket table names one (as if the entry had registered that pid), else by the probe
// alone: open is live, refused is a ghost, anything else unverified.

import { isUsablePid, isUsablePort } from '../pid.js';
import { sanitize } from '../sanitize.js';
import type { OsFacts, PortFacts, Policy, SessionEntry } from '../types.js';
import { judgeIdentity } from './identity.js';
import { judged, type EvidenceDraft, type Judgement } from './judgement.js';

/** Judge `entry` by its port; `pidWhy` says why its pid was not used ("no pid", ...). */
export function judgeByPort(entry: SessionEntry, pidWhy: string, os: OsFacts, policy: Policy, evidence: EvidenceDraft): Judgement {
  if (entry.pid !== undefined && entry.pid !== null) evidence.pid = { value: null, raw: entry.pid, unusable: pidWhy };
  const port = entry.port;
  if (!isUsablePort(port)) return judged('unverified', `${pidWhy} and no port to probe: nothing to check`);
  const facts = os.ports.get(port);
  if (!facts) {
    evidence.port = { port, result: 'not-probed', detail: undefined };
    return judged('unverified', `${pidWhy}; port ${port} has not been probed yet`);
  }
  const owner = facts.result === 'open' ? portOwner(facts, os) : undefined;
  evidence.port = { port, result: facts.result, detail: facts.detail, listeners: facts.listeners, owner, ownerUnknown: facts.ownerUnknown };
  evidence.checkedAt = facts.checkedAt;
  if (owner !== undefined) {
    // The process behind the port is known: judge the entry by it, as if it had registered that pid.
    const byOwner = judgeIdentity(entry, owner, os.pids.get(owner), policy, evidence);
    const who = evidence.process;
    const name = who ? ` (${sanitize(who.name, 32)})` : '';
    const served = `${pidWhy}; port ${port} is served by pid ${owner}${name}`;
    if (byOwner.verdict === 'live') return judged('live', `${served}, which is alive`, byOwner.note);
    return judged(byOwner.verdict, `${served}: ${byOwner.reason}`, byOwner.note);
  }
  const where = facts.listeners && facts.listeners.length > 0 ? ` (listening on ${facts.listeners.map((a) => sanitize(a, 46)).join(', ')})` : '';
  if (facts.result === 'open') return judged('live', `${pidWhy}; something accepts connections on port ${port}${where}`);
  if (facts.result === 'refused') return judged('ghost', `${pidWhy}; nothing listens on port ${port}`);
  const detail = facts.detail ? `: ${facts.detail}` : '';
  return judged('unverified', `${pidWhy}; the probe of port ${port} failed (${facts.result}${detail})`);
}

/**
 * Which of the processes listening on a port stands for the entry: one the OS facts know, the
 * earliest started (a child that inherited the socket is not the agent). Undefined when none is known.
 */
export function portOwner(facts: PortFacts, os: OsFacts): number | undefined {
  let best: number | undefined;
  let bestStart = Infinity;
  for (const pid of facts.owners ?? []) {
    if (!isUsablePid(pid)) continue;
    const p = os.pids.get(pid);
    if (!p) continue;
    const start = p.startedAt ?? Infinity;
    if (best === undefined || start < bestStart) {
      best = pid;
      bestStart = start;
    }
  }
  return best;
}

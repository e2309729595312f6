// reconcile(view, osFacts, now, policy) → findings. The one place a verdict is decided: it
// composes the rules of src/core/rules (each a pure function from facts to a judgement) in one
// visible order. Pure: the engine passes in everything (including "now" and first-observed times).
//
// It runs on every change of a 10,000-entry registry, so it allocates little: each finding is
// written once (amended only for the rare entries that share a process), evidence objects share
// one shape, and what is the same for many entries (host evidence, process info) is shared.

import { matchHost } from './host.js';
import { pidProblem } from './pid.js';
import { findHolder, indexHolders, judgeClaim } from './rules/claims.js';
import { judgeElsewhere, judgeRemotePort } from './rules/elsewhere.js';
import { judgeIdentity } from './rules/identity.js';
import { newEvidence, sessionFinding, type EvidenceDraft, type Judgement } from './rules/judgement.js';
import { judgeOffline } from './rules/offline.js';
import { isPlaceholder, judgePending } from './rules/pending.js';
import { judgeByPort } from './rules/port.js';
import { supersededByPid, supersededByPortOwner, type Amendment } from './rules/superseded.js';
import { VERDICT_TRAITS, type Evidence, type Finding, type OsFacts, type Policy, type RegistryView, type SessionEntry, type SessionFinding } from './types.js';

export { PENDING_PREFIX } from './rules/pending.js';

/** reconcile's arguments, with the host matcher memoized: thousands of entries, few distinct hosts. */
interface ReconcileInputs {
  readonly os: OsFacts;
  readonly now: number;
  readonly policy: Policy;
  readonly hostOf: (machine: string | undefined) => Evidence['host'];
}

export function reconcile(view: RegistryView, os: OsFacts, now: number, policy: Policy): Finding[] {
  const inputs: ReconcileInputs = { os, now, policy, hostOf: hostEvidenceCache(policy) };
  // 1. Each session on its own: identity or port, then offline / elsewhere, then pending.
  const sessions: SessionFinding[] = view.sessions.map((entry) => judgeSession(entry, inputs));
  // 2. Sessions that share one process: by the pid they registered, then by the owner of their ports.
  amend(sessions, supersededByPid(sessions, policy));
  amend(sessions, supersededByPortOwner(sessions, policy));
  // 3. Claims, by their holders' final verdicts.
  const findings: Finding[] = sessions;
  if (view.claims.length > 0) {
    const holders = indexHolders(view.claims, sessions);
    for (const c of view.claims) {
      const holder = findHolder(c, holders);
      findings.push(judgeClaim(c, holder, inputs.hostOf(c.machine ?? holder?.entry.machine), os, now, policy));
    }
  }
  return findings;
}

function judgeSession(entry: SessionEntry, inputs: ReconcileInputs): SessionFinding {
  const evidence = newEvidence(inputs.hostOf(entry.machine));
  const local = evidence.host.local;
  // What this host's OS says of the process behind the entry (only for an entry on this host).
  const os = local ? judgeProcess(entry, inputs, evidence) : undefined;
  // Of an entry elsewhere, what a port check from this host said (when remote port checks are on).
  const checked = local ? undefined : judgeRemotePort(entry, inputs.os, evidence);
  let judgement: Judgement;
  if (entry.offline) judgement = judgeOffline(entry, os ?? checked, inputs.now, inputs.policy, evidence);
  else judgement = os ?? checked ?? judgeElsewhere(entry);
  // A placeholder is judged on what the OS said, unless the registry's "offline" stood.
  if (os && judgement.verdict !== 'offline' && isPlaceholder(entry)) {
    judgement = judgePending(entry, judgement, inputs.now, inputs.policy, evidence);
  }
  return sessionFinding(entry, judgement, evidence);
}

/** The registered pid when it can be used, else the port. */
function judgeProcess(entry: SessionEntry, inputs: ReconcileInputs, evidence: EvidenceDraft): Judgement {
  const unusable = pidProblem(entry.pid);
  if (unusable !== undefined) return judgeByPort(entry, unusable, inputs.os, inputs.policy, evidence);
  const pid = entry.pid as number;
  return judgeIdentity(entry, pid, inputs.os.pids.get(pid), inputs.policy, evidence);
}

/**
 * Apply a rule's amendments. The findings and their evidence objects were made by this reconcile
 * and nobody else holds them yet: they are completed in place, not copied (a spread copy is slow
 * to read, and a second finding per amended entry is garbage the collector must promote).
 */
function amend(findings: SessionFinding[], amendments: readonly Amendment[]): void {
  for (const a of amendments) {
    const f = findings[a.index] as Mutable<SessionFinding>;
    Object.assign(f.evidence as EvidenceDraft, a.evidence);
    if (!a.judgement) continue;
    const traits = VERDICT_TRAITS[a.judgement.verdict];
    f.verdict = a.judgement.verdict;
    f.problem = traits.problem;
    f.evictable = traits.evictable;
    f.reason = a.judgement.reason;
    f.note = a.judgement.note;
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function hostEvidenceCache(policy: Policy): ReconcileInputs['hostOf'] {
  const cache = new Map<string, Evidence['host']>();
  const none: Evidence['host'] = { machine: null, local: false, matchedAs: undefined };
  return (machine) => {
    if (machine === undefined) return none;
    let evidence = cache.get(machine);
    if (!evidence) {
      const matched = matchHost(machine, policy.hostName, policy.hostAliases);
      evidence = { machine, local: matched !== undefined, matchedAs: matched };
      cache.set(machine, evidence);
    }
    return evidence;
  };
}

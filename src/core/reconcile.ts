// reconcile(view, osFacts, now, policy) → findings. The one place a verdict is decided: it
// composes the rules of src/core/rules (each a pure function from facts to a judgement) in one
// visible order. Pure: the engine passes in everything (including "now" and first-observed times).
//
// It runs on every change of a 10,000-entry registry, so it allocates little: each finding is
// made once (again only for the rare entries that share a process), evidence objects share
// one shape, and what is the same for many entries (host evidence, process info) is shared.

import { firstHostMatching, matchHost } from './host.js';
import { pidProblem } from './pid.js';
import { noteAnswering } from './rules/answering.js';
import { findHolder, indexHolders, judgeClaim } from './rules/claims.js';
import { judgeElsewhere, judgeRemotePort } from './rules/elsewhere.js';
import { judgeIdentity } from './rules/identity.js';
import { judged, newEvidence, noteInvalidTimes, sessionFinding, type EvidenceDraft, type Judgement } from './rules/judgement.js';
import { openTwice } from './rules/open-twice.js';
import { placePid } from './rules/pid-domain.js';
import { judgeOffline } from './rules/offline.js';
import { isPlaceholder, judgePending } from './rules/pending.js';
import { judgeByPort } from './rules/port.js';
import { judgeUnreachable, remoteHostEvidence, verifiedVia } from './rules/remote.js';
import { supersededByPid, supersededByPortOwner, type Amendment } from './rules/superseded.js';
import { type Evidence, type Finding, type OsFacts, type Policy, type RegistryView, type RemoteHostFacts, type SessionEntry, type SessionFinding } from './types.js';

export { PENDING_PREFIX } from './rules/pending.js';

/** reconcile's arguments, with the host matcher memoized: thousands of entries, few distinct hosts. */
interface ReconcileInputs {
  readonly os: OsFacts;
  readonly now: number;
  readonly policy: Policy;
  readonly hostOf: (machine: string | undefined) => Evidence['host'];
  /** The facts an entry of this machine is judged by: this host's, a remote host's that is up, or none. */
  readonly factsOf: (host: Evidence['host']) => OsFacts | undefined;
}

export function reconcile(view: RegistryView, os: OsFacts, now: number, policy: Policy): Finding[] {
  const steps = reconcileSteps(view, os, now, policy);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Entries judged between two pauses of reconcileSteps. */
export const RECONCILE_STEP = 250;

/**
 * reconcile, pausing (a bare yield) after every RECONCILE_STEP entries and between its rules, so
 * that a caller can let other work run in between: the monitor's keys while 37,000 rows are
 * judged. The same findings as reconcile; the view and the facts must not change until it ends.
 */
export function* reconcileSteps(view: RegistryView, os: OsFacts, now: number, policy: Policy): Generator<void, Finding[], void> {
  const inputs: ReconcileInputs = { os, now, policy, hostOf: hostEvidenceCache(policy, os.remotes), factsOf: factsByHost(os) };
  // 1. Each session on its own: identity or port, then offline / elsewhere, then pending.
  const sessions: SessionFinding[] = [];
  for (const entry of view.sessions) {
    sessions.push(judgeSession(entry, inputs));
    if (sessions.length % RECONCILE_STEP === 0) yield;
  }
  // 2. Sessions that share one process: by the pid they registered, then by the owner of their ports.
  amend(sessions, supersededByPid(sessions, policy));
  yield;
  amend(sessions, supersededByPortOwner(sessions, policy));
  yield;
  // 3. One session id open in two live processes (a record per process: Claude Code's resume).
  amend(sessions, openTwice(sessions));
  yield;
  // 4. Claims, by their holders' final verdicts.
  const findings: Finding[] = sessions;
  if (view.claims.length > 0) {
    const holders = indexHolders(view.claims, sessions);
    for (const [i, c] of view.claims.entries()) {
      const holder = findHolder(c, holders);
      const host = inputs.hostOf(c.machine ?? holder?.entry.machine);
      findings.push(judgeClaim(c, holder, host, inputs.factsOf(host), now, policy));
      if ((i + 1) % RECONCILE_STEP === 0) yield;
    }
  }
  return findings;
}

function judgeSession(entry: SessionEntry, inputs: ReconcileInputs): SessionFinding {
  const evidence = newEvidence(inputs.hostOf(entry.machine));
  noteInvalidTimes(evidence, entry.invalidTimes);
  // The facts of the host the entry runs on: this one, or a remote host verified over ssh and up.
  const facts = inputs.factsOf(evidence.host);
  // What that host's OS says of the process behind the entry.
  const os = facts ? judgeProcess(entry, facts, inputs, evidence) : undefined;
  // Of an entry elsewhere and not verified over ssh, what a port check from this host said (when
  // remote port checks are on; an ssh-verified host is never port-checked: ssh says more).
  const checked = facts || evidence.host.local || evidence.host.ssh ? undefined : judgeRemotePort(entry, inputs.os, evidence);
  let judgement: Judgement;
  // A host configured for ssh that cannot answer now: unverified, whatever the registry says (it
  // becomes evictable again only once its host answers, or with force).
  if (!os && evidence.host.ssh) judgement = judgeUnreachable(evidence.host.ssh, entry, evidence);
  else if (entry.offline) judgement = judgeOffline(entry, os ?? checked, inputs.now, inputs.policy, evidence);
  else judgement = os ?? checked ?? judgeElsewhere(entry);
  // A placeholder is judged on what the OS said, unless the registry's "offline" stood.
  if (os && judgement.verdict !== 'offline' && isPlaceholder(entry)) {
    judgement = judgePending(entry, judgement, inputs.now, inputs.policy, evidence);
  }
  // Its own port's answer to a WebSocket upgrade, probed on this host only.
  if (os && evidence.host.local) judgement = noteAnswering(entry, judgement, facts?.handshakes, evidence);
  if (os && evidence.host.ssh) judgement = verifiedVia(judgement, evidence.host.ssh);
  return sessionFinding(entry, judgement, evidence);
}

/** The registered pid when it can be used (placed in this host's table when the record names its own), else the port. */
function judgeProcess(entry: SessionEntry, os: OsFacts, inputs: ReconcileInputs, evidence: EvidenceDraft): Judgement {
  if (entry.pidDomain !== undefined && evidence.host.local) {
    const placed = placePid(entry, os.pidNamespaces, evidence);
    if (placed.kind === 'unplaced') return judged(placed.verdict, placed.reason);
    if (placed.kind === 'mapped') {
      const name = `pid ${placed.nsPid} of pid namespace ${placed.namespace} (host pid ${placed.pid})`;
      return judgeIdentity(entry, placed.pid, os.pids.get(placed.pid), inputs.policy, evidence, name);
    }
  }
  const unusable = pidProblem(entry.pid);
  if (unusable !== undefined) return judgeByPort(entry, unusable, os, inputs.policy, evidence);
  const pid = entry.pid as number;
  return judgeIdentity(entry, pid, os.pids.get(pid), inputs.policy, evidence);
}

/**
 * Apply a rule's amendments. The evidence objects were made by this reconcile and nobody else
 * holds them yet: they are completed in place. An amended judgement makes a new finding of the
 * same class (one hidden class for every finding; amendments are rare: entries that share a
 * process).
 */
function amend(findings: SessionFinding[], amendments: readonly Amendment[]): void {
  for (const a of amendments) {
    const f = findings[a.index]!;
    Object.assign(f.evidence as EvidenceDraft, a.evidence);
    if (!a.judgement) continue;
    // A superseded judgement is new text; a live one builds on the reason, which names the transport already.
    const ssh = f.evidence.host.ssh;
    const judgement = ssh && a.judgement.verdict === 'superseded' ? verifiedVia(a.judgement, ssh) : a.judgement;
    findings[a.index] = sessionFinding(f.entry, judgement, f.evidence);
  }
}

function hostEvidenceCache(policy: Policy, remotes: readonly RemoteHostFacts[] | undefined): ReconcileInputs['hostOf'] {
  const cache = new Map<string, Evidence['host']>();
  const none: Evidence['host'] = { machine: null, local: false, matchedAs: undefined };
  let remoteOf: ((machine: string) => RemoteHostFacts | undefined) | undefined;
  return (machine) => {
    if (machine === undefined) return none;
    let evidence = cache.get(machine);
    if (!evidence) {
      const matched = matchHost(machine, policy.hostName, policy.hostAliases);
      // This host first: a remote host configured under this host's own name never takes its entries.
      const remote = matched === undefined && remotes ? (remoteOf ??= firstHostMatching(remotes, (r) => r.machine))(machine) : undefined;
      evidence = remote
        ? { machine, local: false, matchedAs: undefined, ssh: remoteHostEvidence(remote) }
        : { machine, local: matched !== undefined, matchedAs: matched };
      cache.set(machine, evidence);
    }
    return evidence;
  };
}

/**
 * This host's facts for its entries; an up remote host's facts for its entries; none for the rest.
 * Asked once per entry: the hosts' facts are indexed by machine name once (the first host of a
 * name, as hostOf takes it), not searched per entry.
 */
function factsByHost(os: OsFacts): ReconcileInputs['factsOf'] {
  const remotes = os.remotes;
  let byMachine: Map<string, RemoteHostFacts['facts']> | undefined;
  return (host) => {
    if (host.local) return os;
    const ssh = host.ssh;
    if (!ssh || ssh.state !== 'up' || !remotes) return undefined;
    if (!byMachine) {
      byMachine = new Map();
      for (const r of remotes) if (!byMachine.has(r.machine)) byMachine.set(r.machine, r.facts);
    }
    return byMachine.get(ssh.host);
  };
}

// Rule: remote hosts verified over ssh. An entry of such a host is judged by the same rules as a
// local one, on that host's facts, while the host is up; its judgement then says where the facts
// came from. A host that is connecting, down or answers under another name verifies nothing:
// its entries are unverified with the reason, never problems.

import { sanitize } from '../sanitize.js';
import type { Evidence, RemoteHostFacts, SessionEntry } from '../types.js';
import { judged, type EvidenceDraft, type Judgement } from './judgement.js';

type SshEvidence = NonNullable<Evidence['host']['ssh']>;

/** The host evidence of a remote host: its state, why it is down, and "via ssh build-42 (rtt 12 ms)". */
export function remoteHostEvidence(remote: RemoteHostFacts): SshEvidence {
  const host = sanitize(remote.machine, 64);
  const rttMs = remote.rttMs === undefined ? undefined : Math.max(0, Math.round(remote.rttMs));
  return {
    host: remote.machine,
    state: remote.state,
    reason: remote.reason === undefined ? undefined : sanitize(remote.reason, 200),
    rttMs,
    via: `via ssh ${host}${rttMs === undefined ? '' : ` (rtt ${rttMs} ms)`}`,
  };
}

/**
 * An entry whose ssh host cannot answer now: unverified, with the host's state and reason, even
 * when the registry marks it offline (that is said too, and kept in the evidence).
 */
export function judgeUnreachable(ssh: SshEvidence, entry: SessionEntry, evidence: EvidenceDraft): Judgement {
  const host = sanitize(ssh.host, 64);
  let offline = '';
  if (entry.offline) {
    evidence.registry = { status: entry.status, offlineSince: entry.offlineSince };
    offline = '; the registry marks it offline';
  }
  if (ssh.state === 'connecting') return judged('unverified', `ssh ${host} connecting: not verified yet${offline}`);
  if (ssh.state === 'down') return judged('unverified', `ssh ${host} down: ${ssh.reason ?? 'no reason given'}${offline}`);
  return judged('unverified', `ssh ${host}: no facts yet${offline}`);
}

/** A judgement made on a remote host's facts names the transport (the rtt stays in the evidence: it changes every round). */
export function verifiedVia(judgement: Judgement, ssh: SshEvidence): Judgement {
  return judged(judgement.verdict, `${judgement.reason} (via ssh ${sanitize(ssh.host, 64)})`, judgement.note);
}

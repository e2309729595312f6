// Rule: elsewhere. An entry that does not run on this host cannot be checked against this host's
// processes: remote when the registry names its host, unverified when it names none. With remote
// port checks on (--probe-remote-ports), a TCP connect from this host to the entry's own
// `machine:port` (the connection hypivisor's proxy makes) adds one fact: refused means nothing
// listens there (ghost); accepted means something does, but not which process (still remote,
// never live); a timeout, an unreachable or unresolvable host: unverified, with the reason.

import { isUsablePort } from '../pid.js';
import { remotePortKey } from '../remote-ports.js';
import { sanitize } from '../sanitize.js';
import type { OsFacts, SessionEntry } from '../types.js';
import { judged, type EvidenceDraft, type Judgement } from './judgement.js';

/** How a port check's facts were read, as the evidence and the audit log name it. */
export const PORT_CHECK_TRANSPORT = 'port check from this host';

export function judgeElsewhere(entry: SessionEntry): Judgement {
  if (entry.machine === undefined || entry.machine.trim() === '') {
    return judged('unverified', 'the registry names no host for it, so it cannot be checked');
  }
  return judged('remote', `runs on ${sanitize(entry.machine, 64)}, not on this host: cannot be checked here`);
}

/**
 * Judge a remote entry by the port check of its own `machine:port`, when there is one (undefined:
 * none was made, the entry is judged as before). Fills the port evidence and the transport.
 */
export function judgeRemotePort(entry: SessionEntry, os: OsFacts, evidence: EvidenceDraft): Judgement | undefined {
  const checks = os.remotePorts;
  const machine = entry.machine;
  if (checks === undefined || checks.size === 0 || machine === undefined || !isUsablePort(entry.port)) return undefined;
  const port = entry.port;
  const facts = checks.get(remotePortKey(machine, port));
  if (!facts) return undefined;
  evidence.port = { port, result: facts.result, detail: facts.detail };
  evidence.checkedAt = facts.checkedAt;
  evidence.transport = PORT_CHECK_TRANSPORT;
  const where = `${sanitize(machine, 64)}:${port}`;
  if (facts.result === 'refused') return judged('ghost', `port ${port} refused from this host: nothing listens on ${where}`);
  if (facts.result === 'open') {
    return judged('remote', `runs on ${sanitize(machine, 64)}; port ${port} accepts from this host (which process serves it cannot be checked here)`);
  }
  const detail = facts.detail ? `: ${sanitize(facts.detail, 120)}` : '';
  return judged('unverified', `the port check of ${where} from this host failed (${facts.result}${detail})`);
}

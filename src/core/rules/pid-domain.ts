// Rule: pid domains. A pid means something only in its own pid namespace. A record that names
// its namespace (Claude Code's `pidDomain`) is judged by the process it names there: in our own
// namespace as any pid; in another namespace of this machine through the host pid that process
// has in ours (NSpid); never against our table otherwise. A namespace that no process holds any
// more has no processes left, which only a reader that sees every process of the machine can say.

import { isUsablePid } from '../pid.js';
import { sanitize } from '../sanitize.js';
import type { Evidence, PidNamespaceFacts, SessionEntry } from '../types.js';

/** Where the record's pid is in our table: use it as is, use the host pid it maps to, or it cannot be placed. */
export type PidPlacement =
  | { readonly kind: 'ours' }
  | { readonly kind: 'mapped'; readonly pid: number; readonly nsPid: number; readonly namespace: string }
  | { readonly kind: 'unplaced'; readonly verdict: 'ghost' | 'unverified'; readonly reason: string };

const OURS: PidPlacement = { kind: 'ours' };

type DomainEvidence = NonNullable<Evidence['pidDomain']>;

/** The record's pid in its own namespace, when it is a process number there (pid 1 is a container's init). */
function namespacePid(pid: unknown): number | undefined {
  return typeof pid === 'number' && Number.isSafeInteger(pid) && pid >= 1 && pid <= 4_194_304 ? pid : undefined;
}

/**
 * Place the entry's pid in this host's table. `evidence` receives what was found (nothing for an
 * entry that names no domain). `ns` undefined: the namespaces were not read (yet, or not Linux).
 */
export function placePid(entry: SessionEntry, ns: PidNamespaceFacts | undefined, evidence?: { pidDomain?: Evidence['pidDomain'] }): PidPlacement {
  const domain = entry.pidDomain;
  if (domain === undefined) return OURS;
  const nsPid = namespacePid(entry.pid) ?? null;
  const text = sanitize(domain.text, 120);
  const note = (status: DomainEvidence['status'], hostPid?: number): void => {
    if (evidence) evidence.pidDomain = { domain: domain.text, machineId: domain.machineId, namespace: domain.namespace, nsPid, hostPid, status };
  };
  const unverified = (status: DomainEvidence['status'], why: string): PidPlacement => {
    note(status);
    return { kind: 'unplaced', verdict: 'unverified', reason: why };
  };
  // A host with one pid table (macOS): there is no other namespace a pid could belong to, so a
  // record written here is judged as any pid; a Linux namespace named here is another machine's.
  if (ns?.flat) {
    if (domain.machineId === undefined) {
      note('this-namespace');
      return OURS;
    }
    return unverified('other-machine', `its pid belongs to a Linux pid namespace (${text}); this host has no such namespace`);
  }
  if (domain.unreadable !== undefined || domain.machineId === undefined || domain.namespace === undefined) {
    return unverified('unreadable', `its pid domain "${text}" cannot be read (${domain.unreadable ?? 'no machine or namespace'}): its pid is not judged against this host's processes`);
  }
  if (ns === undefined) return unverified('unseen', `its pid namespace ${domain.namespace} has not been read yet`);
  if (ns.machineId === undefined) return unverified('unseen', `this host's machine-id is unknown, so its pid domain "${text}" cannot be matched`);
  if (domain.machineId !== ns.machineId) {
    return unverified('other-machine', `its pid belongs to another machine's pid table (machine-id ${sanitize(domain.machineId, 40)}, this host's is ${ns.machineId})`);
  }
  if (domain.namespace === ns.own) {
    note('this-namespace');
    return OURS;
  }
  const where = `pid namespace ${domain.namespace}`;
  if (nsPid === null) return unverified('unreadable', `its pid ${sanitize(entry.pid, 40)} is not a process number in ${where}`);
  if (!ns.namespaces.has(domain.namespace)) return unverified('unseen', `${where} has not been read yet`);
  const pids = ns.namespaces.get(domain.namespace);
  const seesAll = ns.blind === undefined;
  if (pids === null || pids === undefined) {
    if (ns.initial && seesAll) {
      note('namespace-gone');
      return { kind: 'unplaced', verdict: 'ghost', reason: `pid ${nsPid} of ${where} is gone: no process is left in that namespace` };
    }
    const why = ns.initial ? (ns.blind as string) : 'ghostwatch runs in a pid namespace of its own and cannot see every process';
    return unverified('unseen', `no process of ${where} is visible here (${why})`);
  }
  const hostPid = pids.get(nsPid);
  if (hostPid === undefined) {
    if (seesAll) {
      note('pid-not-in-namespace');
      return { kind: 'unplaced', verdict: 'ghost', reason: `pid ${nsPid} of ${where} is gone: no process in that namespace has it` };
    }
    return unverified('unseen', `pid ${nsPid} of ${where} is not visible here (${ns.blind as string})`);
  }
  note('mapped', hostPid);
  return { kind: 'mapped', pid: hostPid, nsPid, namespace: domain.namespace };
}

/** The pid this host's probes must watch for an entry: its own, or its host pid; undefined when it has none here. */
export function pidToProbe(entry: SessionEntry, ns: PidNamespaceFacts | undefined): unknown {
  if (entry.pidDomain === undefined) return entry.pid;
  const placed = placePid(entry, ns);
  if (placed.kind === 'ours') return entry.pid;
  return placed.kind === 'mapped' ? placed.pid : undefined;
}

/** The pid a finding was judged by in this host's table: its own, its host pid, or none (unusable, not placed). */
export function judgedPid(entry: SessionEntry, evidence: Evidence): number | undefined {
  const domain = evidence.pidDomain;
  if (domain?.status === 'mapped') return domain.hostPid;
  if (domain !== undefined && domain.status !== 'this-namespace') return undefined;
  return isUsablePid(entry.pid) ? entry.pid : undefined;
}

// Right before an eviction is sent: read the entry as its source has it NOW, probe what its
// verdict rests on NOW, and reconcile it again. Only the entries a verdict can depend on are
// reconciled (the entry, the sessions sharing its pid, a claim's holder), so a bulk eviction of
// a 10,000-entry registry does not run 10,000-entry reconciles per item.

import { findingKey } from '../core/evict-plan.js';
import { isUsablePid, isUsablePort } from '../core/pid.js';
import { reconcile } from '../core/reconcile.js';
import { pidToProbe } from '../core/rules/pid-domain.js';
import type { ClaimEntry, Finding, OsFacts, PidFacts, PortFacts, Policy, RemoteHostFacts, RemotePortFacts, SessionEntry } from '../core/types.js';
import type { ProbeProvider } from '../os/provider.js';
import type { Source } from '../sources/types.js';
import { withProcessOf } from './fact-merge.js';

export interface FreshContext {
  readonly policy: Policy;
  readonly now: () => number;
  readonly isLocal: (machine: string | undefined) => boolean;
  /** What the engine knows already: its process info is carried over to the fresh facts. */
  readonly known: OsFacts;
  /** The same probes the live loop reads. */
  readonly probes: ProbeProvider;
  /** With remote port checks on: connect again to the remote entries' own machine:port. */
  readonly remotePorts?: { recheck(entries: readonly SessionEntry[]): Promise<ReadonlyMap<string, RemotePortFacts>> } | undefined;
  /**
   * For an entry verified over ssh: that host's provider (the same connection the live loop
   * uses), what is known there, which machines it is, and its facts as reconcile reads them.
   */
  readonly remote?: ((machine: string) => RemoteProbeContext | undefined) | undefined;
}

export interface RemoteProbeContext {
  readonly provider: ProbeProvider;
  readonly known: OsFacts;
  readonly isOn: (machine: string | undefined) => boolean;
  readonly hostFacts: (facts: OsFacts) => RemoteHostFacts;
}

export interface Fresh {
  /** The finding as of now, or undefined when the entry is no longer in its registry. */
  readonly current: Finding | undefined;
  readonly pids: ReadonlyMap<number, PidFacts>;
  readonly ports: ReadonlyMap<number, PortFacts>;
  /** Remote port checks made for the re-check, when they are on. */
  readonly remotePorts?: ReadonlyMap<string, RemotePortFacts> | undefined;
  /** The remote host these facts were read on (over ssh); undefined: this host. */
  readonly remoteHost?: string | undefined;
}

/**
 * Re-read the registry itself before every send: an agent that re-registered (alive, maybe
 * with a new pid) just before the keypress may not have reached our event stream yet, and a
 * deregister sent on that old view would remove a live session. Any "fresh enough" window
 * admits exactly that race, so there is none; what remains is the round trip between this read
 * and the deregister, which the hypivisor protocol (deregister by id only) cannot close.
 */
async function rereadRegistry(source: Source): Promise<void> {
  const before = source.snapshot().state.resyncs;
  await source.resync();
  if (source.snapshot().state.resyncs === before) throw new Error('could not re-read the registry right before sending');
}

export async function freshFinding(source: Source, planned: Finding, ctx: FreshContext): Promise<Fresh> {
  // An entry verified over ssh is re-probed on its host, over the same connection; any other on this host.
  const sshHost = planned.evidence?.host?.ssh?.host;
  const remote = sshHost !== undefined ? ctx.remote?.(sshHost) : undefined;
  if (sshHost !== undefined && remote === undefined) throw new Error(`no ssh connection to ${sshHost} to re-check it over`);
  const probes = remote?.provider ?? ctx.probes;
  const known = remote?.known ?? ctx.known;
  const isOn = remote?.isOn ?? ctx.isLocal;

  await rereadRegistry(source);
  const snap = source.snapshot();
  const related = relatedEntries(snap.sessions, snap.claims, planned, known);
  if (!related) return { current: undefined, pids: new Map(), ports: new Map(), remoteHost: sshHost };

  // A record of another pid namespace is placed in ours afresh: its namespace read again, now.
  const named = new Set<string>();
  for (const s of related.sessions) if (!remote && s.pidDomain?.namespace !== undefined && isOn(s.machine)) named.add(s.pidDomain.namespace);
  const pidNamespaces = named.size > 0 && probes.pidNamespaces ? await probes.pidNamespaces(named) : undefined;
  const pids = new Set<number>();
  const ports = new Set<number>();
  for (const s of related.sessions) {
    if (!isOn(s.machine)) continue;
    const pid = s.pidDomain === undefined || remote ? s.pid : pidToProbe(s, pidNamespaces);
    if (isUsablePid(pid)) pids.add(pid);
    else if (s.pidDomain === undefined && isUsablePort(s.port)) ports.add(s.port);
  }
  const claim = related.claims[0];
  if (claim && isUsablePid(claim.pid) && isOn(claim.machine ?? related.sessions[0]?.machine)) pids.add(claim.pid);

  // Ports first: the processes serving them are probed with the registered pids.
  const portFacts = ports.size > 0 ? await probes.probePortFacts([...ports], { now: ctx.now }) : new Map<number, PortFacts>();
  for (const facts of portFacts.values()) for (const pid of facts.owners ?? []) pids.add(pid);
  const probed = pids.size > 0 ? await probes.probePids([...pids], { full: true, now: ctx.now }) : new Map<number, PidFacts>();
  const pidFacts = new Map<number, PidFacts>();
  for (const [pid, facts] of probed) pidFacts.set(pid, withProcessOf(known.pids.get(pid), facts));

  // A remote entry judged by its port (not verified over ssh) is connected to again, now, never
  // from a cache: a ghost whose port accepts again is not evicted.
  const remotePorts = !remote && ctx.remotePorts ? await ctx.remotePorts.recheck(related.sessions.filter((s) => !ctx.isLocal(s.machine))) : undefined;

  const fresh: OsFacts = { pids: pidFacts, ports: portFacts, remotePorts, pidNamespaces };
  // This host's facts say nothing of a remote entry: it is judged on its host's fresh facts alone
  // (and its host's state now: a host that went down since makes it unverified).
  const facts: OsFacts = remote ? { pids: new Map(), ports: new Map(), remotes: [remote.hostFacts(fresh)] } : fresh;
  const findings = reconcile(related, facts, ctx.now(), ctx.policy);
  const key = findingKey(planned);
  return { current: findings.find((f) => findingKey(f) === key), pids: pidFacts, ports: portFacts, remoteHost: sshHost, remotePorts };
}

/**
 * The entry and everything its verdict depends on, from one source's current snapshot:
 * for a session, the sessions sharing its pid (superseded); for a claim, its holder and the
 * holder's pid-sharing siblings. Undefined when the entry itself is gone.
 */
function relatedEntries(
  sessions: readonly SessionEntry[],
  claims: readonly ClaimEntry[],
  planned: Finding,
  known: OsFacts,
): { sessions: SessionEntry[]; claims: ClaimEntry[] } | undefined {
  if (planned.kind === 'session') {
    const entry = sessions.find((s) => s.id === planned.id);
    return entry ? { sessions: withSiblings(entry, sessions, known), claims: [] } : undefined;
  }
  const key = planned.entry.key ?? planned.id;
  const claim = claims.find((c) => (c.key ?? c.resource) === key);
  if (!claim) return undefined;
  const holder = claim.holder === undefined ? undefined : sessions.find((s) => s.id === claim.holder);
  return { sessions: holder ? withSiblings(holder, sessions, known) : [], claims: [claim] };
}

/**
 * The entry, then the entries its superseded verdict may rest on: those registered with the same
 * usable pid, or (no pid) those whose ports the same process was last seen serving.
 */
function withSiblings(entry: SessionEntry, sessions: readonly SessionEntry[], known: OsFacts): SessionEntry[] {
  if (isUsablePid(entry.pid)) {
    const pid = entry.pid;
    return [entry, ...sessions.filter((s) => s !== entry && s.pid === pid)];
  }
  const owners = isUsablePort(entry.port) ? known.ports.get(entry.port)?.owners : undefined;
  if (!owners || owners.length === 0) return [entry];
  const servedBySame = (s: SessionEntry): boolean =>
    !isUsablePid(s.pid) && isUsablePort(s.port) && (known.ports.get(s.port)?.owners ?? []).some((pid) => owners.includes(pid));
  return [entry, ...sessions.filter((s) => s !== entry && servedBySame(s))];
}

// Right before an eviction is sent: read the entry as its source has it NOW, probe what its
// verdict rests on NOW, and reconcile it again. Only the entries a verdict can depend on are
// reconciled (the entry, the sessions sharing its pid, a claim's holder), so a bulk eviction of
// a 10,000-entry registry does not run 10,000-entry reconciles per item.

import { findingKey } from '../core/evict-plan.js';
import { isUsablePid, isUsablePort } from '../core/pid.js';
import { reconcile } from '../core/reconcile.js';
import type { ClaimEntry, Finding, OsFacts, PidFacts, PortFacts, Policy, RemotePortFacts, SessionEntry } from '../core/types.js';
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
}

export interface Fresh {
  /** The finding as of now, or undefined when the entry is no longer in its registry. */
  readonly current: Finding | undefined;
  readonly pids: ReadonlyMap<number, PidFacts>;
  readonly ports: ReadonlyMap<number, PortFacts>;
  /** Remote port checks made for the re-check, when they are on. */
  readonly remotePorts?: ReadonlyMap<string, RemotePortFacts> | undefined;
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
  await rereadRegistry(source);
  const snap = source.snapshot();
  const related = relatedEntries(snap.sessions, snap.claims, planned, ctx.known);
  if (!related) return { current: undefined, pids: new Map(), ports: new Map() };

  const pids = new Set<number>();
  const ports = new Set<number>();
  for (const s of related.sessions) {
    if (!ctx.isLocal(s.machine)) continue;
    if (isUsablePid(s.pid)) pids.add(s.pid);
    else if (isUsablePort(s.port)) ports.add(s.port);
  }
  const claim = related.claims[0];
  if (claim && isUsablePid(claim.pid) && ctx.isLocal(claim.machine ?? related.sessions[0]?.machine)) pids.add(claim.pid);

  // Ports first: the processes serving them are probed with the registered pids.
  const portFacts = ports.size > 0 ? await ctx.probes.probePortFacts([...ports], { now: ctx.now }) : new Map<number, PortFacts>();
  for (const facts of portFacts.values()) for (const pid of facts.owners ?? []) pids.add(pid);
  const probed = pids.size > 0 ? await ctx.probes.probePids([...pids], { full: true, now: ctx.now }) : new Map<number, PidFacts>();
  const pidFacts = new Map<number, PidFacts>();
  for (const [pid, facts] of probed) pidFacts.set(pid, withProcessOf(ctx.known.pids.get(pid), facts));

  // A remote entry judged by its port is connected to again, now, never from a cache: a ghost
  // whose port accepts again is not evicted.
  const remote = ctx.remotePorts ? await ctx.remotePorts.recheck(related.sessions.filter((s) => !ctx.isLocal(s.machine))) : undefined;

  const findings = reconcile(related, { pids: pidFacts, ports: portFacts, remotePorts: remote }, ctx.now(), ctx.policy);
  const key = findingKey(planned);
  return { current: findings.find((f) => findingKey(f) === key), pids: pidFacts, ports: portFacts, remotePorts: remote };
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

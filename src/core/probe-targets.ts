// Which pids and ports this host has to watch: the usable pids of local sessions and claims,
// and the ports of local sessions that have no usable pid. Only entries whose machine is this
// host are ever checked against this host's processes (design.md, "Rules that protect users").
// The one rule: the engine's live loop and `status`'s single pass both choose by it.

import { matchHost } from './host.js';
import { isUsablePid, isUsablePort } from './pid.js';
import { pidToProbe } from './rules/pid-domain.js';
import type { ClaimEntry, PidNamespaceFacts, RegistryView, SessionEntry } from './types.js';

export interface ProbeTargetSet {
  readonly pids: Set<number>;
  readonly ports: Set<number>;
}

/** Is a registry's `machine` this host? */
export type IsLocalMachine = (machine: string | undefined) => boolean;

/** Past this many distinct machine names the memo is dropped: a hostile registry cannot grow it forever. */
const MAX_CACHED_HOSTS = 1_024;

/** matchHost against this host and its aliases, memoized: thousands of entries, a handful of machine names. */
export function localMachineTest(hostName: string, aliases: readonly string[]): IsLocalMachine {
  const memo = new Map<string, boolean>();
  return (machine) => {
    if (machine === undefined) return false;
    let local = memo.get(machine);
    if (local === undefined) {
      if (memo.size >= MAX_CACHED_HOSTS) memo.clear();
      local = matchHost(machine, hostName, aliases) !== undefined;
      memo.set(machine, local);
    }
    return local;
  };
}

/** Sessions looked at between two pauses of probeTargetSteps and namespaceSteps. */
export const TARGETS_STEP = 2_000;

/**
 * One pass over the view; allocates only the two sets (and a holder index when there are
 * claims). A claim without a machine of its own is on its holder's machine, as in reconcile.
 */
export function chooseProbeTargets(view: RegistryView, isLocal: IsLocalMachine, namespaces?: PidNamespaceFacts): ProbeTargetSet {
  return toEnd(probeTargetSteps(view, isLocal, namespaces));
}

/** chooseProbeTargets, pausing (a bare yield) every TARGETS_STEP sessions: a view of 37,000 entries is a few ms of work each time it changes. */
export function* probeTargetSteps(view: RegistryView, isLocal: IsLocalMachine, namespaces?: PidNamespaceFacts): Generator<void, ProbeTargetSet, void> {
  const pids = new Set<number>();
  const ports = new Set<number>();
  for (const [i, s] of view.sessions.entries()) {
    if ((i + 1) % TARGETS_STEP === 0) yield;
    if (!isLocal(s.machine)) continue;
    // A record of another pid namespace is watched by its host pid, once that is known.
    const pid = s.pidDomain === undefined ? s.pid : pidToProbe(s, namespaces);
    if (isUsablePid(pid)) pids.add(pid);
    else if (s.pidDomain === undefined && isUsablePort(s.port)) ports.add(s.port);
  }
  if (view.claims.length > 0) {
    const holders = holderMachines(view.claims, view.sessions);
    for (const c of view.claims) {
      if (!isUsablePid(c.pid)) continue;
      const machine = c.machine ?? (c.holder === undefined ? undefined : holders.get(c.source)?.get(c.holder));
      if (isLocal(machine)) pids.add(c.pid);
    }
  }
  return { pids, ports };
}

/**
 * The pid namespaces this host's entries name (their records' pidDomain): the ones to read. A
 * domain that names no Linux namespace is '' here: the host's standing must still be read (on a
 * host with one pid table, such a record is judged as any pid).
 */
export function namespacesNamed(view: RegistryView, isLocal: IsLocalMachine): Set<string> {
  return toEnd(namespaceSteps(view, isLocal));
}

/** namespacesNamed, pausing every TARGETS_STEP sessions. */
export function* namespaceSteps(view: RegistryView, isLocal: IsLocalMachine): Generator<void, Set<string>, void> {
  const named = new Set<string>();
  for (const [i, s] of view.sessions.entries()) {
    if ((i + 1) % TARGETS_STEP === 0) yield;
    if (s.pidDomain !== undefined && isLocal(s.machine)) named.add(s.pidDomain.namespace ?? '');
  }
  return named;
}

function toEnd<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

type ById<T> = Map<string, Map<string, T>>;

/** The machine of every session some claim names as its holder. */
function holderMachines(claims: readonly ClaimEntry[], sessions: readonly SessionEntry[]): ById<string | undefined> {
  const wanted = new Map<string, Set<string>>();
  for (const c of claims) {
    if (c.holder === undefined || c.machine !== undefined) continue;
    let ids = wanted.get(c.source);
    if (!ids) wanted.set(c.source, (ids = new Set()));
    ids.add(c.holder);
  }
  const machines: ById<string | undefined> = new Map();
  if (wanted.size === 0) return machines;
  for (const s of sessions) {
    if (!wanted.get(s.source)?.has(s.id)) continue;
    let ids = machines.get(s.source);
    if (!ids) machines.set(s.source, (ids = new Map()));
    ids.set(s.id, s.machine);
  }
  return machines;
}

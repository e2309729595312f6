// What the engine knows of a port: the loopback connect (port-probe.ts) and the socket table
// (port-owner.ts) together. The socket table names the process to judge a pid-less entry by, and
// sees listeners the loopback connect cannot reach (an agent bound to the host's own address only).
import type { PortFacts } from '../core/types.js';
import { portOwners, type OwnerHints, type PortOwnership } from './port-owner.js';
import { probePorts, type PortProbeOptions } from './port-probe.js';

export interface PortFactsOptions extends PortProbeOptions {
  /** Kept by the caller between calls: the next socket-owner search starts where the last one found them. */
  readonly hints?: OwnerHints;
}

/**
 * Connect probe and socket table for every port; never throws for an OS failure (only on abort).
 * No port, no work: the socket tables are not read (each read walks the kernel's whole
 * established-connection table, ~4 ms a file on a busy host, and loads the async file system).
 */
export async function probePortFacts(ports: readonly number[], opts: PortFactsOptions = {}): Promise<Map<number, PortFacts>> {
  if (ports.length === 0) return new Map();
  const [probed, owned] = await Promise.all([
    probePorts(ports, opts),
    portOwners(ports, { signal: opts.signal, hints: opts.hints, ...(opts.now ? { now: opts.now } : {}) }),
  ]);
  const result = new Map<number, PortFacts>();
  for (const [port, facts] of probed) {
    result.set(port, combine(facts, owned.ok ? owned.ports.get(port) : undefined));
  }
  return result;
}

/** One literal, every field, one order (one hidden class for every port's facts). */
export function combine(facts: PortFacts, own: PortOwnership | undefined): PortFacts {
  const listeners = own && own.sockets.length > 0 ? [...new Set(own.sockets.map((s) => s.address))] : undefined;
  let { result, detail } = facts;
  if (result !== 'open' && listeners) {
    // Something listens, only not where a loopback connect reaches (e.g. the host's own address).
    result = 'open';
    detail = `listening on ${listeners.join(', ')} (socket table); ${detail ?? result}`;
  }
  return {
    port: facts.port,
    result,
    detail,
    checkedAt: facts.checkedAt,
    owners: own && own.owners.length > 0 ? own.owners : undefined,
    ownerUnknown: own?.ownerUnknownBecause,
    listeners,
  };
}

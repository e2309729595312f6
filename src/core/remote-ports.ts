// Which remote `machine:port`s a port check (--probe-remote-ports) may connect to: only the
// machine and port a registry entry names itself, for entries on another host that is not
// verified over SSH (that is stronger). The machine must read as a host name or an IP address
// one could connect to: no URL, no spaces, no wildcard, broadcast or multicast address.

import { isUsablePort } from './pid.js';
import type { IsLocalMachine } from './probe-targets.js';
import type { RegistryView, SessionEntry } from './types.js';

export interface RemotePortTarget {
  readonly machine: string;
  readonly port: number;
}

/** The key of a port check in `OsFacts.remotePorts`. */
export function remotePortKey(machine: string, port: number): string {
  return `${machine}|${port}`;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/i;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Why `machine` is not connected to, or undefined when it may be. */
export function remoteMachineProblem(machine: string): string | undefined {
  if (machine === '' || machine.length > 253) return 'not a host name';
  const v4 = IPV4.exec(machine);
  if (v4) {
    const octets = v4.slice(1).map(Number);
    if (octets.some((o) => o > 255)) return 'not an IP address';
    const first = octets[0] as number;
    if (first === 0) return 'a wildcard address, not a host';
    if (first >= 224) return 'a multicast or broadcast address, not a host';
    return undefined;
  }
  if (machine.includes(':')) {
    const colons = machine.split(':').length - 1;
    if (!/^[0-9a-f:.]+$/i.test(machine)) return 'not a host name';
    if (colons < 2 || colons > 7 || machine.split('::').length > 2) return 'not an IP address';
    if (/^[0:]+$/.test(machine)) return 'a wildcard address, not a host';
    if (/^ff/i.test(machine)) return 'a multicast address, not a host';
    return undefined;
  }
  const name = machine.endsWith('.') ? machine.slice(0, -1) : machine;
  if (/^[\d.]+$/.test(name)) return 'not an IP address';
  if (!name.split('.').every((label) => LABEL.test(label))) return 'not a host name';
  return undefined;
}

/** The port check an entry may have: on another host, named, with a usable port, not ended, not SSH-verified. */
export function remotePortTarget(entry: SessionEntry, isLocal: IsLocalMachine, sshVerified: (machine: string) => boolean): RemotePortTarget | undefined {
  const machine = entry.machine;
  if (machine === undefined || entry.ended || !isUsablePort(entry.port)) return undefined;
  if (isLocal(machine) || sshVerified(machine) || remoteMachineProblem(machine) !== undefined) return undefined;
  return { machine, port: entry.port };
}

/** Every distinct port check the view asks for, by key, in registry order. */
export function chooseRemotePortTargets(
  view: RegistryView,
  isLocal: IsLocalMachine,
  sshVerified: (machine: string) => boolean,
): Map<string, RemotePortTarget> {
  const out = new Map<string, RemotePortTarget>();
  for (const s of view.sessions) {
    const t = remotePortTarget(s, isLocal, sshVerified);
    if (t) out.set(remotePortKey(t.machine, t.port), t);
  }
  return out;
}

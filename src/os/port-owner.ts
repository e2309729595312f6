// Who serves a port: its listening sockets (proc-net.ts) and the pid holding each socket, found
// by reading /proc/<pid>/fd/* links ("socket:[inode]"). For registry entries that carry a port
// but no pid. Linux only; elsewhere every answer is { ok: false, unavailable }.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { errorCode, errorText, throwIfAborted, yieldToLoop } from './liveness.js';
import { listeningSockets, PROC_NET_PATHS, type AddressFamily, type ProcNetPaths } from './proc-net.js';

/**
 * What the last calls learned, passed back in to make the next one cheap: the pid that held
 * each inode (its fds are read first), and where a walk cut short by the cap goes on.
 */
export interface OwnerHints {
  readonly byInode: Map<number, number>;
  resumeAfterPid: number;
}

export function createOwnerHints(): OwnerHints {
  return { byInode: new Map(), resumeAfterPid: 0 };
}

export interface SocketOwnersOptions {
  readonly hints?: OwnerHints;
  /** fd links read per call before the walk stops (a process is always read whole). Default 20,000. */
  readonly maxFds?: number;
  readonly signal?: AbortSignal;
}

export type SocketOwnersResult =
  | {
      readonly ok: true;
      /** inode → the pid found holding it (the first one: a socket shared after fork() has more). */
      readonly owners: Map<number, number>;
      /** inode → why no holder was found, for every wanted inode not in `owners`. */
      readonly unknownBecause: Map<number, string>;
      /** Processes whose fd folder could not be read (another user's, when we are not root). */
      readonly hidden: number;
      /** Processes whose fds were read. */
      readonly scanned: number;
      /** The walk stopped at `maxFds` before every process was read. */
      readonly capped: boolean;
    }
  | { readonly ok: false; readonly unavailable: string };

export const DEFAULT_MAX_FDS = 20_000;
/** Processes read between two yields to the event loop. */
const YIELD_EVERY = 64;
/** Hints kept at most (oldest dropped first), so a long-running monitor does not grow them. */
const MAX_HINTS = 4096;
const SOCKET_LINK = /^socket:\[(\d+)\]$/;

let hidepidCache: boolean | undefined;
/** Is /proc mounted so that other users' processes are not even listed (hidepid=1/2, invisible)? */
function procHidesOthers(): boolean {
  if (hidepidCache !== undefined) return hidepidCache;
  try {
    const line = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.split(' ')[4] === '/proc');
    hidepidCache = /\bhidepid=(?!0\b|off\b)/.test(line ?? '');
  } catch {
    hidepidCache = false;
  }
  return hidepidCache;
}

function listPids(): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .sort((a, b) => a - b);
}

function remember(hints: OwnerHints, inode: number, pid: number): void {
  hints.byInode.delete(inode);
  hints.byInode.set(inode, pid);
  if (hints.byInode.size > MAX_HINTS) {
    const oldest = hints.byInode.keys().next().value;
    if (oldest !== undefined) hints.byInode.delete(oldest);
  }
}

/**
 * Which pid holds each socket inode. Reads the hinted pids first, then every process in pid
 * order, and stops as soon as every inode is found or `maxFds` links were read. Never throws
 * for an OS failure; throws only when `signal` aborts.
 */
export async function socketOwners(inodes: readonly number[], opts: SocketOwnersOptions = {}): Promise<SocketOwnersResult> {
  throwIfAborted(opts.signal);
  if (process.platform !== 'linux') {
    return { ok: false, unavailable: `socket owners need Linux /proc (this is ${process.platform})` };
  }
  const wanted = new Set(inodes.filter((i) => Number.isSafeInteger(i) && i > 0));
  const remaining = new Set(wanted);
  const owners = new Map<number, number>();
  const checked = new Set<number>();
  const maxFds = Math.max(1, opts.maxFds ?? DEFAULT_MAX_FDS);
  const { hints } = opts;
  let hidden = 0;
  let scanned = 0;
  let fdsRead = 0;
  let capped = false;

  const readFds = (pid: number): void => {
    checked.add(pid);
    let names: string[];
    try {
      names = readdirSync(`/proc/${pid}/fd`);
    } catch (err) {
      const code = errorCode(err);
      if (code === 'EACCES' || code === 'EPERM') hidden++;
      return; // ENOENT: it exited meanwhile
    }
    scanned++;
    for (const name of names) {
      fdsRead++;
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${name}`);
      } catch {
        continue; // closed meanwhile
      }
      const m = SOCKET_LINK.exec(link);
      const inode = m ? Number(m[1]) : 0;
      if (!remaining.delete(inode)) continue;
      owners.set(inode, pid);
      if (hints) remember(hints, inode, pid);
      if (remaining.size === 0) return;
    }
  };

  if (hints) {
    for (const inode of [...remaining]) {
      const pid = hints.byInode.get(inode);
      if (pid !== undefined && remaining.has(inode) && !checked.has(pid)) readFds(pid);
    }
  }

  if (remaining.size > 0) {
    let pids: number[];
    try {
      pids = listPids();
    } catch (err) {
      return { ok: false, unavailable: `cannot read /proc (${errorCode(err) ?? errorText(err)})` };
    }
    const resumeAt = hints ? pids.findIndex((p) => p > hints.resumeAfterPid) : 0;
    const order = resumeAt > 0 ? [...pids.slice(resumeAt), ...pids.slice(0, resumeAt)] : pids;
    let sinceYield = 0;
    let last = 0;
    for (const pid of order) {
      if (remaining.size === 0) break;
      if (checked.has(pid)) continue;
      if (fdsRead >= maxFds) {
        capped = true;
        break;
      }
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToLoop();
        throwIfAborted(opts.signal);
      }
      readFds(pid);
      last = pid;
    }
    if (hints) hints.resumeAfterPid = capped ? last : 0;
  }

  const unknownBecause = new Map<number, string>();
  for (const inode of remaining) {
    if (hints) hints.byInode.delete(inode);
    unknownBecause.set(inode, whyUnknown(inode, { hidden, scanned, capped, maxFds }));
  }
  return { ok: true, owners, unknownBecause, hidden, scanned, capped };
}

function whyUnknown(inode: number, w: { hidden: number; scanned: number; capped: boolean; maxFds: number }): string {
  const notReadable = w.hidden > 0 ? `; ${w.hidden} processes not readable` : '';
  if (w.capped) return `unknown — search stopped after ${w.scanned} processes (${w.maxFds} fds read)${notReadable}; it goes on next time`;
  if (w.hidden > 0) return `unknown — ${w.hidden} processes not readable`;
  if (process.getuid?.() !== 0 && procHidesOthers()) return "unknown — /proc hides other users' processes (hidepid)";
  return `no process in view holds socket ${inode} (it closed meanwhile, or its holder is in another pid namespace)`;
}

export interface PortSocket {
  /** Printable: IPv4 dotted quad or compressed IPv6, e.g. 127.0.0.1, ::1, 0.0.0.0, ::. */
  readonly address: string;
  readonly family: AddressFamily;
  readonly inode: number;
  /** The uid that owns the socket. */
  readonly uid: number;
  /** The pid found holding it. */
  readonly pid?: number;
}

export interface PortOwnership {
  readonly port: number;
  /** Every listener on the port (IPv4 and IPv6, several with SO_REUSEPORT); empty when none. */
  readonly sockets: readonly PortSocket[];
  /** Distinct pids found holding the port's sockets, ascending. */
  readonly owners: readonly number[];
  /** Set when the port has listeners, each holder was found, and it is one and the same pid. */
  readonly owner?: { readonly pid: number };
  /** Set when some listener's holder was not found: the first reason, e.g. "unknown — 12 processes not readable". */
  readonly ownerUnknownBecause?: string;
}

export type PortOwnersResult =
  | {
      readonly ok: true;
      /** One entry per requested usable port, in the caller's order. */
      readonly ports: Map<number, PortOwnership>;
      /** Processes whose fd folder could not be read during this call. */
      readonly hidden: number;
      readonly scanned: number;
      readonly capped: boolean;
      /** Lines of /proc/net/tcp{,6} that did not parse (skipped). */
      readonly malformed: number;
      readonly checkedAt: number;
    }
  | { readonly ok: false; readonly unavailable: string };

export interface PortOwnersOptions extends SocketOwnersOptions {
  readonly now?: () => number;
  /** Where the socket tables are read from (tests). */
  readonly paths?: ProcNetPaths;
}

const byAddress = (a: PortSocket, b: PortSocket): number =>
  a.family - b.family || (a.address < b.address ? -1 : a.address > b.address ? 1 : a.inode - b.inode);

/**
 * For each port: who listens on it, on which addresses, held by which pid. Reads the socket
 * tables once and walks /proc/<pid>/fd only for the inodes found. Never throws for an OS
 * failure; throws only when `signal` aborts.
 */
export async function portOwners(ports: readonly number[], opts: PortOwnersOptions = {}): Promise<PortOwnersResult> {
  throwIfAborted(opts.signal);
  const now = opts.now ?? Date.now;
  if (process.platform !== 'linux') {
    return { ok: false, unavailable: `port owners need Linux /proc/net/tcp (this is ${process.platform})` };
  }
  const listening = await listeningSockets(ports, opts.paths ?? PROC_NET_PATHS);
  throwIfAborted(opts.signal);
  if (!listening.ok) return listening;
  const inodes = [...listening.byPort.values()].flatMap((ss) => ss.map((s) => s.inode));
  const found = inodes.length > 0 ? await socketOwners(inodes, opts) : undefined;
  if (found && !found.ok) return found;

  const result = new Map<number, PortOwnership>();
  for (const [port, listeners] of listening.byPort) {
    const sockets: PortSocket[] = listeners
      .map((s) => {
        const pid = found?.owners.get(s.inode);
        const base = { address: s.address, family: s.family, inode: s.inode, uid: s.uid };
        return pid === undefined ? base : { ...base, pid };
      })
      .sort(byAddress);
    const owners = [...new Set(sockets.flatMap((s) => (s.pid === undefined ? [] : [s.pid])))].sort((a, b) => a - b);
    const unheld = sockets.find((s) => s.pid === undefined);
    const because = unheld
      ? unheld.inode === 0
        ? 'no process holds it (socket inode 0)'
        : found?.unknownBecause.get(unheld.inode)
      : undefined;
    const ownership: PortOwnership = {
      port,
      sockets,
      owners,
      ...(owners.length === 1 && !unheld ? { owner: { pid: owners[0] as number } } : {}),
      ...(because !== undefined ? { ownerUnknownBecause: because } : {}),
    };
    result.set(port, ownership);
  }
  return {
    ok: true,
    ports: result,
    hidden: found?.hidden ?? 0,
    scanned: found?.scanned ?? 0,
    capped: found?.capped ?? false,
    malformed: listening.malformed,
    checkedAt: now(),
  };
}

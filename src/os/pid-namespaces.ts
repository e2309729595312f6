// This machine's pid namespaces, as /proc shows them: our own, whether it is the machine's
// initial one, whether we can see every process, and for each namespace asked about which of
// its pids are which of ours (the NSpid line of /proc/<p>/status: our pid first, the pid in the
// process's own namespace last). Read only while some record names a pid domain (Claude Code's
// `pidDomain`), at the process table's slow cadence: a scan of /proc costs ~2 µs a process.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { PidNamespaceFacts } from '../core/types.js';

/** The inode of the machine's initial pid namespace (PROC_PID_INIT_INO): a kernel constant. */
export const INITIAL_PID_NAMESPACE = '4026531836';

export interface PidNamespaceReadOptions {
  readonly procRoot?: string;
  readonly machineIdPaths?: readonly string[];
  readonly now?: () => number;
  /** Our effective uid (root sees every process); default process.geteuid(). */
  readonly euid?: number | undefined;
}

const NS_LINK = /^pid:\[(\d+)\]$/;

/** The inode of a pid namespace link ("pid:[4026531836]"), or undefined. */
export function namespaceOfLink(link: string): string | undefined {
  return NS_LINK.exec(link)?.[1];
}

/** "NSpid:\t4242\t7\t2" -> [4242, 7, 2]: our pid first, the innermost namespace's last. */
export function parseNsPid(status: string): number[] | undefined {
  const line = /^NSpid:([\t \d]+)$/m.exec(status)?.[1];
  if (line === undefined) return undefined;
  const pids = line.trim().split(/\s+/).map(Number);
  return pids.length > 0 && pids.every((p) => Number.isSafeInteger(p) && p > 0) ? pids : undefined;
}

/** Why this /proc may hide processes from us, from its mount options (hidepid, subset=pid). */
export function procHidingOptions(mounts: string, procRoot = '/proc'): string | undefined {
  for (const line of mounts.split('\n')) {
    const [, mountPoint, type, options] = line.split(' ');
    if (mountPoint !== procRoot || type !== 'proc' || options === undefined) continue;
    for (const opt of options.split(',')) {
      const [key, value] = opt.split('=');
      if (key === 'hidepid' && value !== '0' && value !== 'off') return `/proc is mounted with hidepid=${value}`;
      if (key === 'subset' && value === 'pid') return '/proc is mounted with subset=pid';
    }
  }
  return undefined;
}

/** The process's NSpid has one pid: it lives in the namespace of this /proc (ours). A vanished one counts as placed. */
function inOurNamespace(statusPath: string): boolean {
  try {
    return parseNsPid(readFileSync(statusPath, 'utf8'))?.length === 1;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH';
  }
}

function readMachineId(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    try {
      const id = readFileSync(path, 'utf8').trim();
      if (/^[0-9a-f]{32}$/.test(id)) return id;
    } catch {
      // The next place, or unknown.
    }
  }
  return undefined;
}

/**
 * Our standing and the namespaces in `wanted`. Never throws: what cannot be read makes the
 * facts blind (every verdict that would rest on a full view is then unverified).
 */
export function readPidNamespaces(wanted: ReadonlySet<string>, opts: PidNamespaceReadOptions = {}): PidNamespaceFacts {
  const proc = opts.procRoot ?? '/proc';
  const now = opts.now ?? Date.now;
  const machineId = readMachineId(opts.machineIdPaths ?? ['/etc/machine-id', '/var/lib/dbus/machine-id']);
  let own: string | undefined;
  try {
    own = namespaceOfLink(readlinkSync(`${proc}/self/ns/pid`));
  } catch {
    own = undefined;
  }
  const euid = opts.euid ?? process.geteuid?.();
  let blind: string | undefined = euid === 0 ? undefined : "not root: other users' processes and their namespaces are hidden";
  if (blind === undefined) {
    try {
      blind = procHidingOptions(readFileSync(`${proc}/mounts`, 'utf8'), proc);
    } catch (error) {
      blind = `cannot read ${proc}/mounts (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
  }
  const namespaces = new Map<string, Map<number, number> | null>();
  const asked = [...wanted].filter((ns) => ns !== own && ns !== '');
  for (const ns of asked) namespaces.set(ns, null);
  if (asked.length > 0) {
    let names: string[] = [];
    try {
      names = readdirSync(proc);
    } catch (error) {
      blind = `cannot list ${proc} (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    let unreadable = 0;
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue;
      let ns: string | undefined;
      try {
        ns = namespaceOfLink(readlinkSync(`${proc}/${name}/ns/pid`));
      } catch (error) {
        // Exited meanwhile (ENOENT, ESRCH) is no loss. A process whose namespace link is denied to
        // us (pid 1 of some sandboxes, even for root) is still placed by its NSpid: one pid there
        // means it lives in our own namespace, not in one asked about. Only the rest is unseen.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ESRCH' && !inOurNamespace(`${proc}/${name}/status`)) unreadable++;
        continue;
      }
      if (ns === undefined || !namespaces.has(ns)) continue;
      let pids: number[] | undefined;
      try {
        pids = parseNsPid(readFileSync(`${proc}/${name}/status`, 'utf8'));
      } catch {
        continue;
      }
      if (pids === undefined || pids.length < 2) continue;
      let map = namespaces.get(ns);
      if (!map) namespaces.set(ns, (map = new Map()));
      map.set(pids[pids.length - 1]!, pids[0]!);
    }
    if (unreadable > 0 && blind === undefined) blind = `the pid namespace of ${unreadable} process${unreadable === 1 ? '' : 'es'} could not be read`;
  }
  return { machineId, own, initial: own === INITIAL_PID_NAMESPACE, blind, namespaces, checkedAt: now() };
}

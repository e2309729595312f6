// What the real-Claude tests read of this host and of the files Claude Code writes: process trees,
// pid namespaces (NSpid, /proc/<pid>/ns/pid), the machine id, and each session file with its fields.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { alive } from '../support/processes.js';

export { alive };

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The first descendant of `root` (breadth first) whose executable is `exe`. */
export function descendantRunning(root: number, exe: string): number | undefined {
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    try {
      if (pid !== root && readlinkSync(`/proc/${pid}/exe`) === exe) return pid;
    } catch {
      // gone, or a kernel thread
    }
    queue.push(...children(pid));
  }
  return undefined;
}

/** The pids of a host process in each pid namespace it belongs to, outermost first (NSpid). */
export function nsPids(hostPid: number): number[] {
  const line = /^NSpid:\s+(.+)$/m.exec(readFileSync(`/proc/${hostPid}/status`, 'utf8'))?.[1] ?? '';
  return line.trim().split(/\s+/).map(Number);
}

/** The inode of a pid namespace, e.g. 4026532178 from "pid:[4026532178]". */
export function pidNamespaceOf(pid: number | 'self'): string {
  return /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))?.[1] ?? '';
}

/** Some process still lives in the pid namespace `inode` (it is not gone). */
export function namespaceHeld(inode: string): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/ns/pid`) === `pid:[${inode}]`) return true;
    } catch {
      // gone while we looked
    }
  }
  return false;
}

export const MACHINE_ID = (() => {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim();
  } catch {
    return '';
  }
})();

export { freePort } from '../support/ports.js';

// ---- what Claude Code wrote --------------------------------------------------------------------

export interface WrittenFile {
  readonly name: string;
  readonly mode: string;
  /** The JSON's field names, in the order written. */
  readonly fields: string[];
  /** The parsed JSON (a key file's peerToken masked: it is a secret, even here). */
  readonly sample: unknown;
}

export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Every file in a sessions folder, with its mode, field names and content. */
export function writtenFiles(sessionsDir: string): WrittenFile[] {
  if (!existsSync(sessionsDir)) return [];
  return readdirSync(sessionsDir)
    .sort()
    .map((name) => {
      const path = join(sessionsDir, name);
      const data = readJson(path);
      const sample = data && 'peerToken' in data ? { ...data, peerToken: `<${String(data.peerToken).length} hex chars>` } : data;
      return { name, mode: (lstatSync(path).mode & 0o777).toString(8).padStart(4, '0'), fields: Object.keys(data ?? {}), sample };
    });
}

/** `<pid>.<64 hex>.key`: the key file 2.1.332 writes beside `<pid>.json`. */
export const keyFilePattern = (pid: number): RegExp => new RegExp(`^${pid}\\.[0-9a-f]{64}\\.key$`);

export function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

/** Every file under `dir`, recursively, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => lstatSync(join(dir, p)).isFile());
}

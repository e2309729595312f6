// Who serves a Unix socket path: its listening socket in /proc/net/unix (the table of this
// network namespace) and the pid holding that socket (port-owner.ts's walk of /proc/<pid>/fd).
// For a daemon known only by its socket: a pid file can be stale, or name a pid of another pid
// namespace. Linux only; elsewhere the answer says why not.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { errorCode, errorText } from './liveness.js';
import { socketOwners, type OwnerHints } from './port-owner.js';

/** __SO_ACCEPTCON in the Flags column: the socket listens. */
const LISTENING = 0x10000;
/** Num: RefCount Protocol Flags Type St Inode Path (the path is the rest of the line, spaces and all). */
const ROW = /^\s*[0-9A-Fa-f]+:\s+[0-9A-Fa-f]+\s+[0-9A-Fa-f]+\s+([0-9A-Fa-f]+)\s+[0-9A-Fa-f]+\s+[0-9A-Fa-f]+\s+(\d+) (.+)$/;

/** The inodes of the listening sockets bound to `path` in the text of /proc/net/unix. */
export function listeningUnixInodes(table: string, path: string): number[] {
  const inodes: number[] = [];
  for (const line of table.split('\n')) {
    const m = ROW.exec(line);
    if (!m || m[3] !== path || (parseInt(m[1]!, 16) & LISTENING) === 0) continue;
    const inode = Number(m[2]);
    if (Number.isSafeInteger(inode) && inode > 0) inodes.push(inode);
  }
  return inodes;
}

export type UnixSocketServer = { readonly ok: true; readonly pid: number } | { readonly ok: false; readonly why: string };

export interface UnixSocketServerOptions {
  /** What the last calls found (createOwnerHints()), so asking again reads one process's fds. */
  readonly hints?: OwnerHints;
  /** A pid worth reading first (a pid file's), when the hints know none. */
  readonly likelyPid?: number | undefined;
  readonly tablePath?: string;
}

/** The pid that holds the socket listening on `path`. */
export async function unixSocketServer(path: string, opts: UnixSocketServerOptions = {}): Promise<UnixSocketServer> {
  const tablePath = opts.tablePath ?? '/proc/net/unix';
  const { hints, likelyPid } = opts;
  if (process.platform !== 'linux') return { ok: false, why: `finding a socket's process needs Linux /proc (this is ${process.platform})` };
  let table: string;
  try {
    table = readFileSync(tablePath, 'latin1');
  } catch (err) {
    return { ok: false, why: `cannot read ${tablePath} (${errorCode(err) ?? errorText(err)})` };
  }
  // The kernel prints the path the server bound: agentctl binds an absolute one.
  const inodes = listeningUnixInodes(table, resolve(path));
  if (inodes.length === 0) return { ok: false, why: `nothing listens on ${path}` };
  if (hints && likelyPid !== undefined && !inodes.some((i) => hints.byInode.has(i))) hints.byInode.set(inodes[0]!, likelyPid);
  const found = await socketOwners(inodes, { hints });
  if (!found.ok) return { ok: false, why: found.unavailable };
  for (const inode of inodes) {
    const pid = found.owners.get(inode);
    if (pid !== undefined) return { ok: true, pid };
  }
  return { ok: false, why: found.unknownBecause.get(inodes[0]!) ?? `no process in view holds the socket on ${path}` };
}

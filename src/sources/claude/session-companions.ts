// What a Claude Code session leaves beside its record (protocols.md §4): 2.1.332 writes
// `sessions/<pid>.<sha256>.key` (0600, a peerToken secret) next to `<pid>.json`, and listens on the
// Unix socket the record names in `messagingSocketPath`, outside the folder. SIGKILL leaves all
// three. An eviction takes the key files with the record and removes the socket only when it is
// certainly dead. The key files are never opened here: only their names and lstat are used.

import { lstat, readdir, unlink } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { sanitize } from '../../core/sanitize.js';
import { readPidNamespaces } from '../../os/pid-namespaces.js';
import { fsErrorText, lstatIfAny } from '../../os/safe-file.js';
import { pidDomainOf } from './formats.js';

/** How long a connect to a Unix socket may take before it counts as "no answer" (the socket is then left). */
const CONNECT_WAIT_MS = 1_000;

/** What belongs to a record besides itself, for FileSource's eviction. */
export interface RecordCompanions {
  /** Files beside the record that move into the trash with it. */
  files(recordPath: string): Promise<string[]>;
  /** After the record moved: what else it named is dealt with; one sentence for the eviction's detail, or nothing to say. */
  afterMove(raw: unknown, recordUid: number): Promise<string | undefined>;
}

/** `<stem>.<one more part>.key` beside `<stem>.json`: the key files of that record (and no other pid's). */
export async function keyFilesOf(recordPath: string): Promise<string[]> {
  const name = basename(recordPath);
  if (!name.endsWith('.json')) return [];
  const stem = name.slice(0, -'.json'.length);
  const dir = dirname(recordPath);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(`${stem}.`) && n.endsWith('.key'))
    .filter((n) => {
      const middle = n.slice(stem.length + 1, -'.key'.length);
      return middle !== '' && !middle.includes('.');
    })
    .sort()
    .map((n) => join(dir, n));
}

/** Why the record's pid cannot be judged here, or undefined when it is a pid of our own pid table. */
export function foreignPidDomain(raw: Record<string, unknown>): string | undefined {
  const domain = pidDomainOf(raw.pidDomain);
  if (domain === undefined) return undefined; // 2.1.197 writes none: its pid is of the host it runs on
  if (domain.unreadable !== undefined) return `its pidDomain ${sanitize(domain.text, 120)} is not one ghostwatch reads (${domain.unreadable})`;
  const own = readPidNamespaces(new Set());
  if (own.machineId === undefined || own.own === undefined) return "this host's machine-id or pid namespace cannot be read";
  if (domain.machineId !== own.machineId) return `its pid is of another machine (${sanitize(domain.text, 120)})`;
  if (domain.namespace !== own.own) return `its pid is of another pid namespace (${sanitize(domain.text, 120)}, ours is pid:[${own.own}])`;
  return undefined;
}

/** 'refused' when nothing listens; 'accepted' when something does; otherwise the error's code (or 'no answer'). */
function connectTo(path: string): Promise<'refused' | 'accepted' | string> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const done = (answer: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done('no answer'), CONNECT_WAIT_MS);
    socket.once('connect', () => done('accepted'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'refused' : (error.code ?? error.message)));
  });
}

/**
 * The record's messaging socket, removed only when it is a socket (never followed through a
 * symlink), owned by the record's owner, its pid is dead in our own pid namespace (ESRCH), and a
 * connect to it is refused. Otherwise it is left, and the sentence says why.
 */
export async function removeDeadSocket(raw: unknown, recordUid: number): Promise<string | undefined> {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const path = r.messagingSocketPath;
  if (path === undefined) return undefined;
  if (typeof path !== 'string' || !isAbsolute(path)) return 'left its messagingSocketPath alone: not an absolute path';
  const shown = sanitize(path, 200);
  const leave = (why: string): string => `left the messaging socket ${shown}: ${why}`;
  let s;
  try {
    s = await lstatIfAny(path);
  } catch (error) {
    return leave(fsErrorText(error));
  }
  if (!s) return `no messaging socket at ${shown} (already gone)`;
  if (!s.isSocket()) return leave(s.isSymbolicLink() ? 'a symbolic link, not a socket (not followed)' : 'not a socket');
  if (s.uid !== recordUid) return leave(`owned by uid ${s.uid}, not by the session file's owner (uid ${recordUid})`);
  const foreign = foreignPidDomain(r);
  if (foreign) return leave(`${foreign}, so its pid is not judged here`);
  const pid = r.pid;
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0) return leave('the record names no pid to check');
  try {
    process.kill(pid, 0);
    return leave(`pid ${pid} is alive`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ESRCH') return leave(code === 'EPERM' ? `pid ${pid} is alive (another user's)` : `pid ${pid} cannot be checked (${code ?? 'error'})`);
  }
  const answer = await connectTo(path);
  if (answer === 'accepted') return leave('something still accepts connections on it');
  if (answer !== 'refused') return leave(`a connect to it did not say "refused" (${sanitize(answer, 40)})`);
  // The same socket still (not another file put at its name meanwhile), then removed.
  const again = await lstat(path).catch(() => undefined);
  if (!again || again.ino !== s.ino || again.dev !== s.dev || !again.isSocket()) return leave('it changed while it was checked');
  try {
    await unlink(path);
  } catch (error) {
    return leave(fsErrorText(error));
  }
  return `removed the dead messaging socket ${shown} (pid ${pid} is gone and nothing listens)`;
}

/** A Claude Code session record: its key files move with it; its dead messaging socket is removed. */
export const CLAUDE_SESSION_COMPANIONS: RecordCompanions = { files: keyFilesOf, afterMove: removeDeadSocket };

/** For the force dialog: what evicting a Claude session that may be running does (two lines: a narrow pane keeps both). */
export const CLAUDE_LIVE_EVICT_NOTE = [
  'Claude Code does not write a moved session file again: a running Claude session',
  'stays out of every monitor until it restarts (ghostwatch restore puts the file back).',
] as const;

/** The `claude` source's eviction, as FileSource options: the record with its key files, the dead socket, and what the dialogs say. */
export const CLAUDE_SESSION_EVICTION = {
  evictNote: 'claude: the session file and its key files go to the ghostwatch trash (restore puts them back); a dead messaging socket is removed',
  liveEvictNote: CLAUDE_LIVE_EVICT_NOTE,
  companions: CLAUDE_SESSION_COMPANIONS,
} as const;

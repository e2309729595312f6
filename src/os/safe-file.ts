// Creating and opening the files ghostwatch writes (state file, trash notes, audit log) without
// being led somewhere else: a new file is made with O_CREAT|O_EXCL|O_NOFOLLOW (a name that is
// already taken, a planted symlink included, fails instead of being written through), a file
// that is appended to is opened with O_NOFOLLOW, and a path ghostwatch keeps for itself that is
// found looser than it should be is tightened, with a warning. Reading back what ghostwatch or its
// user keeps (view.json, config.json, serve's state file, trash notes) goes through one check,
// readOwnFileSync: a file another user could have written is never trusted.

import { closeSync, constants, type Stats, fstatSync, fsyncSync, openSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { chmod, lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crypto } from './builtins.js';

/** A new file only: never an existing name, never through a symlink. */
export const CREATE_NEW = constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_WRONLY;

/** Refused because of what is at the path (a symlink, not a regular file or folder). One line. */
export class UnsafePath extends Error {
  override readonly name = 'UnsafePath';
  readonly code = 'EUNSAFE';
}

/** Why a filesystem call failed, in one line: the errno code when there is one. */
export function fsErrorText(err: unknown): string {
  if (err instanceof UnsafePath) return err.message;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}

/** A name for a temporary file next to `path`: in the same folder (so rename is atomic), never guessable. */
export function tempNameFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${crypto().randomBytes(6).toString('hex')}`);
}

/** Opens a new file for writing (O_CREAT|O_EXCL|O_NOFOLLOW, `mode`). EEXIST when the name is taken, a symlink included. */
export async function createNew(path: string, mode = 0o600): Promise<FileHandle> {
  return open(path, CREATE_NEW, mode);
}

/**
 * Replaces `path` with `data` atomically: written and synced under a fresh temp name in the same
 * folder (created O_EXCL|O_NOFOLLOW, mode 0600), then renamed over. A failure leaves `path` as it
 * was and removes only the temp file this call made.
 */
export function writeFileAtomicSync(path: string, data: string | Buffer, mode = 0o600): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let tmp = tempNameFor(path);
  let fd: number | undefined;
  for (let attempt = 0; fd === undefined; attempt++) {
    try {
      fd = openSync(tmp, CREATE_NEW, mode);
    } catch (err) {
      // Someone holds that name (a leftover or a planted link): never touch it, pick another.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
      tmp = tempNameFor(path);
    }
  }
  try {
    try {
      for (let off = 0; off < bytes.length; ) {
        const n = writeSync(fd, bytes, off, bytes.length - off);
        if (n <= 0) throw new Error(`short write (${off} of ${bytes.length} bytes)`);
        off += n;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already renamed away or never there: nothing of ours is left.
    }
    throw err;
  }
}

/** lstat, or undefined when nothing is there. */
export async function lstatIfAny(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * A folder ghostwatch keeps for itself (the trash): created 0700 when missing; refused when a
 * symlink or not a folder; tightened to 0700 when group or others may use it. Resolves with the
 * warnings to show (one per tightening); rejects with UnsafePath.
 */
export async function ensurePrivateDir(path: string, what: string, opts: { create: boolean } = { create: true }): Promise<string[]> {
  let s = await lstatIfAny(path);
  if (!s) {
    if (!opts.create) return [];
    await mkdir(path, { recursive: true, mode: 0o700 });
    s = await lstat(path);
  }
  if (s.isSymbolicLink()) throw new UnsafePath(`${what} ${path} is a symbolic link ghostwatch did not make; refusing to write through it`);
  if (!s.isDirectory()) throw new UnsafePath(`${what} ${path} is not a folder; refusing to use it`);
  if (s.uid !== ourUid()) throw new UnsafePath(`${whyNotOurs(s, `${what} ${path}`)}; refusing to use it`);
  if ((s.mode & 0o077) === 0) return [];
  await chmod(path, 0o700);
  return [`${what} ${path} was mode ${octal(s.mode)}; tightened to 0700`];
}

/** The permission bits as `0755`. */
export function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/**
 * Reads a small file a person or another tool gave us (config, token, CA bundle, a registry's
 * state file) without hanging or swallowing: opened O_NONBLOCK (a FIFO does not block the open),
 * refused unless it is a regular file of at most `maxBytes`, and, with `noFollow`, refused when
 * the path is a symlink. Errors are UnsafePath (one line) or the fs error.
 */
export function readBoundedSync(path: string, maxBytes: number, opts: { noFollow?: boolean } = {}): Buffer {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (opts.noFollow ? constants.O_NOFOLLOW : 0);
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (err) {
    if (opts.noFollow && (err as { code?: unknown }).code === 'ELOOP') throw new UnsafePath(`${path} is a symbolic link: not followed`);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnsafePath(`${path} is not a regular file`);
    if (st.size > maxBytes) throw new UnsafePath(`${path} is larger than ${maxBytes} bytes (${st.size}): not read`);
    return readWhole(fd, st.size);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads back a file ghostwatch keeps, or its user keeps for it, in a state or config folder
 * (view.json, config.json, serve's state file, a trash note), only when nobody else could have
 * put it there: not a symlink (opened O_NOFOLLOW), a regular file, owned by the effective uid, not
 * writable by group or others, in a folder that is also ours and writable by nobody else, and at
 * most `maxBytes`. Anything else is UnsafePath, its message one clause without the path ("it
 * belongs to uid 65534, ..."), so the caller says what was ignored; ENOENT is the fs error.
 */
export function readOwnFileSync(path: string, maxBytes: number): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ELOOP') throw new UnsafePath('it is a symbolic link (not followed)');
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnsafePath('it is not a regular file');
    const file = whyNotOurs(st, 'it');
    if (file !== undefined) throw new UnsafePath(file);
    const folder = dirname(path);
    const dir = whyNotOurs(statSync(folder), `its folder ${folder}`);
    if (dir !== undefined) throw new UnsafePath(dir);
    if (st.size > maxBytes) throw new UnsafePath(`it is larger than ${maxBytes} bytes (${st.size})`);
    return readWhole(fd, st.size);
  } finally {
    closeSync(fd);
  }
}

/**
 * Why a file or folder is not one ghostwatch may trust (`what` names it in the sentence), or
 * undefined: it must belong to the effective uid and be writable by nobody else, as the files and
 * folders ghostwatch makes are (0600, 0700).
 */
export function whyNotOurs(s: Pick<Stats, 'uid' | 'mode'>, what: string): string | undefined {
  const uid = ourUid();
  if (s.uid !== uid) return `${what} belongs to uid ${s.uid}, not to uid ${uid} (the user running ghostwatch)`;
  if ((s.mode & 0o022) !== 0) return `${what} is writable by ${(s.mode & 0o002) !== 0 ? 'others' : 'its group'} (mode ${octal(s.mode)}; chmod go-w makes it usable)`;
  return undefined;
}

/** The effective uid: whose files ghostwatch trusts (-1 where there are no uids, so nothing passes). */
export function ourUid(): number {
  return process.geteuid?.() ?? -1;
}

function readWhole(fd: number, size: number): Buffer {
  const buf = Buffer.alloc(size);
  let at = 0;
  while (at < buf.length) {
    const n = readSync(fd, buf, at, buf.length - at, at);
    if (n === 0) break;
    at += n;
  }
  return buf.subarray(0, at);
}

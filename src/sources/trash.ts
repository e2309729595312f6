// ghostwatch's trash folder: where evicting a file-backed session puts its file ($XDG_STATE_HOME/
// ghostwatch/trash/, never a delete), and where `ghostwatch restore` takes it back from. Each
// trashed file has a .meta.json beside it naming where it came from; the metadata is written
// (and synced) before the file moves, so a crash in between leaves a note, not a lost file.

import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createNew, ensurePrivateDir, readBoundedSync, UnsafePath } from '../os/safe-file.js';
import { ghostwatchStateDir } from '../os/state-dir.js';

/** A note is a few hundred bytes; anything much larger in the trash is not one of ours. */
const MAX_META_BYTES = 64 * 1024;

export function defaultTrashDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(ghostwatchStateDir(env, home), 'trash');
}

export interface TrashMeta {
  readonly version: 1;
  readonly source: string;
  readonly kind: 'session' | 'claim';
  /** The entry's id (or a claim's resource) as the table showed it. */
  readonly id: string;
  readonly originalPath: string;
  /** The file's name inside the trash folder. */
  readonly trashName: string;
  readonly trashedAt: string;
}

export interface TrashItem extends TrashMeta {
  readonly trashPath: string;
  readonly metaPath: string;
  /** The trashed file itself is there (a crash between note and move leaves only the note). */
  readonly present: boolean;
}

/** What the file looked like when it was read: a move is refused if it no longer looks so. */
export function fileStamp(s: Pick<Stats, 'ino' | 'size' | 'mtimeMs'>): string {
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
}

export class FileChanged extends Error {
  override readonly name = 'FileChanged';
}

/**
 * The trash folder as ghostwatch keeps it: 0700, a folder of its own, never a symlink. `create`
 * makes it when missing. Resolves with warnings (a looser mode was tightened); rejects with
 * UnsafePath when it is a symlink or not a folder.
 */
export function checkTrashDir(trashDir: string, opts: { create: boolean } = { create: false }): Promise<string[]> {
  return ensurePrivateDir(trashDir, 'the trash folder', opts);
}

export interface Trashed {
  readonly trashPath: string;
  /** What was found and fixed on the way (the trash folder's mode tightened). */
  readonly warnings: readonly string[];
}

/**
 * Move `path` into the trash, provided it is still the file read (same inode, size, mtime).
 * Resolves with the trashed file's path; rejects with FileChanged, ENOENT when it is gone, or
 * UnsafePath when the file is not a regular file or the trash folder is a symlink.
 */
export async function moveToTrash(
  path: string,
  expectedStamp: string,
  meta: Pick<TrashMeta, 'source' | 'kind' | 'id'>,
  trashDir: string,
  now: () => number = Date.now,
): Promise<Trashed> {
  const before = await lstat(path);
  if (!before.isFile()) throw new UnsafePath(`${path} is not a regular file (a symlink?); it is not moved`);
  if (fileStamp(before) !== expectedStamp) throw new FileChanged('the file changed since ghostwatch read it');
  const warnings = await checkTrashDir(trashDir, { create: true });
  const at = new Date(now());
  const trashName = `${at.toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}-${basename(path)}`;
  const trashPath = join(trashDir, trashName);
  const record: TrashMeta = { version: 1, ...meta, originalPath: path, trashName, trashedAt: at.toISOString() };
  await writeSynced(`${trashPath}.meta.json`, `${JSON.stringify(record, null, 2)}\n`);
  try {
    await moveNoClobber(path, trashPath);
  } catch (error) {
    await unlink(`${trashPath}.meta.json`).catch(() => undefined);
    throw error;
  }
  // Linked (or copied), not yet removed at the source: still the same file there before letting go.
  const still = await lstat(path).catch(() => undefined);
  if (!still || fileStamp(still) !== expectedStamp) {
    await unlink(trashPath).catch(() => undefined);
    await unlink(`${trashPath}.meta.json`).catch(() => undefined);
    throw new FileChanged('the file changed while it was being moved');
  }
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  return { trashPath, warnings };
}

/**
 * Every trashed file with its note, newest first. Notes that cannot be read, are not regular
 * files or do not have the fields of a note are skipped. Rejects with UnsafePath when the trash
 * folder is a symlink (see checkTrashDir).
 */
export async function listTrash(trashDir: string): Promise<TrashItem[]> {
  let names: string[];
  try {
    const s = await lstat(trashDir);
    if (s.isSymbolicLink()) throw new UnsafePath(`the trash folder ${trashDir} is a symbolic link ghostwatch did not make; refusing to use it`);
    names = await readdir(trashDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const items: TrashItem[] = [];
  for (const name of names) {
    if (!name.endsWith('.meta.json')) continue;
    const metaPath = join(trashDir, name);
    const meta = await readMeta(metaPath);
    if (!meta) continue;
    const trashPath = join(trashDir, basename(meta.trashName));
    const present = await lstat(trashPath).then((s) => s.isFile(), () => false);
    items.push({ ...meta, trashPath, metaPath, present });
  }
  return items.sort((a, b) => b.trashedAt.localeCompare(a.trashedAt) || b.trashName.localeCompare(a.trashName));
}

/** A note of ours: a small regular file (never followed through a symlink) with every field of a note. */
async function readMeta(metaPath: string): Promise<TrashMeta | undefined> {
  let data: unknown;
  try {
    data = JSON.parse(readBoundedSync(metaPath, MAX_META_BYTES, { noFollow: true }).toString('utf8'));
  } catch {
    return undefined;
  }
  const m = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const strings = ['source', 'id', 'originalPath', 'trashName', 'trashedAt'].every((k) => typeof m[k] === 'string');
  if (m.version !== 1 || !strings || (m.kind !== 'session' && m.kind !== 'claim')) return undefined;
  return m as unknown as TrashMeta;
}

/** Put a trashed file back where it came from; never over a file that is there now, never a non-file. */
export async function restoreFromTrash(item: TrashItem): Promise<void> {
  const s = await lstat(item.trashPath);
  if (!s.isFile()) throw new UnsafePath(`${item.trashPath} is not a regular file; it is not restored`);
  await mkdir(dirname(item.originalPath), { recursive: true });
  await moveNoClobber(item.trashPath, item.originalPath);
  await unlink(item.trashPath).catch(() => undefined);
  await unlink(item.metaPath).catch(() => undefined);
}

/** Link (or, across filesystems, copy) `from` to `to`, failing with EEXIST when `to` exists. `from` stays. */
async function moveNoClobber(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
    await copyFile(from, to, constants.COPYFILE_EXCL);
  }
}

/** A new file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600): never an existing name, never through a symlink. */
async function writeSynced(path: string, text: string): Promise<void> {
  const file = await createNew(path, 0o600);
  try {
    await file.writeFile(text);
    await file.datasync();
  } finally {
    await file.close();
  }
}

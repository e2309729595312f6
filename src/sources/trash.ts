// ghostwatch's trash folder: where evicting a file-backed session puts its file ($XDG_STATE_HOME/
// ghostwatch/trash/, never a delete), and where `ghostwatch restore` takes it back from. Each
// trashed file has a .meta.json beside it naming where it came from; the metadata is written
// (and synced) before the file moves, so a crash in between leaves a note, not a lost file.

import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ghostwatchStateDir } from '../os/state-dir.js';

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
 * Move `path` into the trash, provided it is still the file read (same inode, size, mtime).
 * Resolves with the trashed file's path; rejects with FileChanged, or ENOENT when it is gone.
 */
export async function moveToTrash(
  path: string,
  expectedStamp: string,
  meta: Pick<TrashMeta, 'source' | 'kind' | 'id'>,
  trashDir: string,
  now: () => number = Date.now,
): Promise<string> {
  const before = await stat(path);
  if (fileStamp(before) !== expectedStamp) throw new FileChanged('the file changed since ghostwatch read it');
  await mkdir(trashDir, { recursive: true, mode: 0o700 });
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
  const still = await stat(path).catch(() => undefined);
  if (!still || fileStamp(still) !== expectedStamp) {
    await unlink(trashPath).catch(() => undefined);
    await unlink(`${trashPath}.meta.json`).catch(() => undefined);
    throw new FileChanged('the file changed while it was being moved');
  }
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  return trashPath;
}

/** Every trashed file with its note, newest first. Notes that cannot be read are skipped. */
export async function listTrash(trashDir: string): Promise<TrashItem[]> {
  let names: string[];
  try {
    names = await readdir(trashDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const items: TrashItem[] = [];
  for (const name of names) {
    if (!name.endsWith('.meta.json')) continue;
    const metaPath = join(trashDir, name);
    let meta: TrashMeta;
    try {
      meta = JSON.parse(await readFile(metaPath, 'utf8')) as TrashMeta;
    } catch {
      continue;
    }
    if (meta.version !== 1 || typeof meta.originalPath !== 'string' || typeof meta.trashName !== 'string') continue;
    const trashPath = join(trashDir, basename(meta.trashName));
    const present = await stat(trashPath).then(() => true, () => false);
    items.push({ ...meta, trashPath, metaPath, present });
  }
  return items.sort((a, b) => b.trashedAt.localeCompare(a.trashedAt) || b.trashName.localeCompare(a.trashName));
}

/** Put a trashed file back where it came from; never over a file that is there now. */
export async function restoreFromTrash(item: TrashItem): Promise<void> {
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

async function writeSynced(path: string, text: string): Promise<void> {
  const file = await open(path, 'wx', 0o600);
  try {
    await file.writeFile(text);
    await file.datasync();
  } finally {
    await file.close();
  }
}

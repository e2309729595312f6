// ghostwatch's trash folder: where evicting a file-backed session puts its file ($XDG_STATE_HOME/
// ghostwatch/trash/, never a delete), and where `ghostwatch restore` takes it back from. Each
// entry is a folder (the record and the files that belong to it) with a .meta.json beside it
// naming every file and where it came from; the note is written (and synced) before anything
// moves, so a crash in between leaves a note, not a lost file (the move itself: trash-move.ts).
// Entries of older releases (one file beside its note, version 1) are still listed and restored.
// What is read back is trusted only when it is ours: a note another user could have written (or an
// entry folder that is not ours) is passed over with a warning, so restore never acts on it.

import { constants, type Stats } from 'node:fs';
import { copyFile, link, lstat, mkdir, readdir, rmdir, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createNew, ensurePrivateDir, lstatIfAny, readOwnFileSync, UnsafePath, whyNotOurs } from '../os/safe-file.js';
import { ghostwatchStateDir } from '../os/state-dir.js';

/** A note is a few hundred bytes; anything much larger in the trash is not one of ours. */
const MAX_META_BYTES = 64 * 1024;

export function defaultTrashDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(ghostwatchStateDir(env, home), 'trash');
}

/** One file of a trash entry: its name in the entry's folder and where it came from. */
export interface TrashFile {
  readonly name: string;
  readonly originalPath: string;
}

export interface TrashMeta {
  /** 1: the entry is the one file `trashName`; 2: a folder `trashName` holding `files`. */
  readonly version: 1 | 2;
  readonly source: string;
  readonly kind: 'session' | 'claim';
  /** The entry's id (or a claim's resource) as the table showed it. */
  readonly id: string;
  /** Where the record (the first file) came from. */
  readonly originalPath: string;
  /** The entry's name inside the trash folder. */
  readonly trashName: string;
  readonly trashedAt: string;
  /** Version 2: every file of the entry, the record first (a Claude record's key files after it). */
  readonly files?: readonly TrashFile[] | undefined;
}

/** A file of an entry as it is in the trash now. */
export interface TrashedFile {
  readonly trashPath: string;
  readonly originalPath: string;
  readonly present: boolean;
}

export interface TrashItem extends TrashMeta {
  /** The record's place in the trash. */
  readonly trashPath: string;
  readonly metaPath: string;
  /** The record itself is there (a crash between note and move leaves only the note). */
  readonly present: boolean;
  /** Every file of the entry, the record first. */
  readonly entryFiles: readonly TrashedFile[];
  /** Version 2: the entry's folder. */
  readonly entryDir?: string | undefined;
}

/** What the file looked like when it was read: a move is refused if it no longer looks so. */
export function fileStamp(s: Pick<Stats, 'ino' | 'size' | 'mtimeMs'>): string {
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
}

export class FileChanged extends Error {
  override readonly name = 'FileChanged';
  /** Where what was moved instead is kept, when it could not go back (its place was taken again). */
  constructor(
    message: string,
    readonly keptAt?: string,
  ) {
    super(message);
  }
}

/** A restore that would overwrite a file at the original place: nothing of the entry was moved. */
export class RestoreConflict extends Error {
  override readonly name = 'RestoreConflict';
  readonly code = 'EEXIST';
  constructor(readonly path: string) {
    super(`${path} exists now; it was not overwritten`);
  }
}

/**
 * The trash folder as ghostwatch keeps it: 0700, a folder of its own, never a symlink. `create`
 * makes it when missing. Resolves with warnings (a looser mode was tightened); rejects with
 * UnsafePath when it is a symlink or not a folder.
 */
export function checkTrashDir(trashDir: string, opts: { create: boolean } = { create: false }): Promise<string[]> {
  return ensurePrivateDir(trashDir, 'the trash folder', opts);
}

/**
 * Every trash entry with its note, newest first. Notes that cannot be read or do not have the
 * fields of a note are skipped; a note or entry folder that is not ours (another user's, writable
 * by others, a symlink) is skipped and said through `warn`. Rejects with UnsafePath when the trash
 * folder is a symlink, another user's or writable by others (see checkTrashDir, which tightens it).
 */
export async function listTrash(trashDir: string, warn: (line: string) => void = () => {}): Promise<TrashItem[]> {
  let names: string[];
  try {
    const s = await lstat(trashDir);
    if (s.isSymbolicLink()) throw new UnsafePath(`the trash folder ${trashDir} is a symbolic link ghostwatch did not make; refusing to use it`);
    const foreign = whyNotOurs(s, `the trash folder ${trashDir}`);
    if (foreign !== undefined) throw new UnsafePath(`${foreign}; refusing to use it`);
    names = await readdir(trashDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const items: TrashItem[] = [];
  for (const name of names) {
    if (!name.endsWith('.meta.json')) continue;
    const metaPath = join(trashDir, name);
    const meta = readMeta(metaPath, warn);
    if (!meta) continue;
    const item = await itemOf(trashDir, meta, metaPath, warn);
    if (item) items.push(item);
  }
  return items.sort((a, b) => b.trashedAt.localeCompare(a.trashedAt) || b.trashName.localeCompare(a.trashName));
}

async function itemOf(trashDir: string, meta: TrashMeta, metaPath: string, warn: (line: string) => void): Promise<TrashItem | undefined> {
  const isFile = (p: string): Promise<boolean> => lstat(p).then((s) => s.isFile(), () => false);
  if (meta.version === 1 || !meta.files) {
    const trashPath = join(trashDir, basename(meta.trashName));
    const present = await isFile(trashPath);
    return { ...meta, trashPath, metaPath, present, entryFiles: [{ trashPath, originalPath: meta.originalPath, present }] };
  }
  const entryDir = join(trashDir, basename(meta.trashName));
  // Files are looked at only inside a real folder of the entry, never through a symlink.
  const found = await lstatIfAny(entryDir).catch(() => undefined);
  const folder = found?.isDirectory() === true;
  const foreign = folder ? whyNotOurs(found, 'its folder') : undefined;
  if (foreign !== undefined) {
    warn(`the trash entry ${entryDir} is passed over: ${foreign}`);
    return undefined;
  }
  const entryFiles: TrashedFile[] = [];
  for (const f of meta.files) {
    const trashPath = join(entryDir, basename(f.name));
    entryFiles.push({ trashPath, originalPath: f.originalPath, present: folder && (await isFile(trashPath)) });
  }
  const record = entryFiles[0]!;
  return { ...meta, trashPath: record.trashPath, metaPath, present: record.present, entryFiles, entryDir };
}

/** A note of ours: a small regular file of our own (readOwnFileSync) with every field of a note. */
function readMeta(metaPath: string, warn: (line: string) => void): TrashMeta | undefined {
  let data: unknown;
  try {
    data = JSON.parse(readOwnFileSync(metaPath, MAX_META_BYTES).toString('utf8'));
  } catch (error) {
    if (error instanceof UnsafePath) warn(`the trash note ${metaPath} is passed over: ${error.message}`);
    return undefined;
  }
  const m = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  const strings = ['source', 'id', 'originalPath', 'trashName', 'trashedAt'].every((k) => typeof m[k] === 'string');
  if (!strings || (m.kind !== 'session' && m.kind !== 'claim')) return undefined;
  if (m.version === 1) return m as unknown as TrashMeta;
  if (m.version !== 2 || !Array.isArray(m.files) || m.files.length === 0) return undefined;
  const files = m.files as unknown[];
  const valid = files.every((f) => {
    const x = (typeof f === 'object' && f !== null ? f : {}) as Record<string, unknown>;
    return typeof x.name === 'string' && typeof x.originalPath === 'string' && x.name === basename(x.name) && x.name !== '..' && x.name !== '.';
  });
  return valid ? (m as unknown as TrashMeta) : undefined;
}

/**
 * Put a trash entry back where it came from: every file of it that is in the trash, or none when
 * any of their original places holds a file now (RestoreConflict). Never a non-file. Resolves
 * with the original paths restored.
 */
export async function restoreFromTrash(item: TrashItem): Promise<string[]> {
  if (item.entryDir !== undefined) {
    const folder = await lstat(item.entryDir);
    if (!folder.isDirectory()) throw new UnsafePath(`${item.entryDir} is not a folder; it is not restored`);
    const foreign = whyNotOurs(folder, item.entryDir);
    if (foreign !== undefined) throw new UnsafePath(`${foreign}; it is not restored`);
  }
  const s = await lstat(item.trashPath);
  if (!s.isFile()) throw new UnsafePath(`${item.trashPath} is not a regular file; it is not restored`);
  const files = item.entryFiles.filter((f) => f.present);
  for (const f of files) if (await lstatIfAny(f.originalPath)) throw new RestoreConflict(f.originalPath);
  const restored: string[] = [];
  for (const f of files) {
    await mkdir(dirname(f.originalPath), { recursive: true });
    await moveNoClobber(f.trashPath, f.originalPath);
    await unlink(f.trashPath).catch(() => undefined);
    restored.push(f.originalPath);
  }
  await unlink(item.metaPath).catch(() => undefined);
  if (item.entryDir !== undefined) await rmdir(item.entryDir).catch(() => undefined);
  return restored;
}

/** Link (or, across filesystems, copy) `from` to `to`, failing with EEXIST when `to` exists. `from` stays. */
async function moveNoClobber(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new RestoreConflict(to);
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
    await copyFile(from, to, constants.COPYFILE_EXCL).catch((copyError: NodeJS.ErrnoException) => {
      throw copyError.code === 'EEXIST' ? new RestoreConflict(to) : copyError;
    });
  }
}

/** A new file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600), synced: never an existing name, never through a symlink. */
export async function writeSynced(path: string, text: string): Promise<void> {
  const file = await createNew(path, 0o600);
  try {
    await file.writeFile(text);
    await file.datasync();
  } finally {
    await file.close();
  }
}

// Evicting a file into ghostwatch's trash (see trash.ts): a new entry folder, its note written
// first, then one rename per file and a look at what arrived, so that a file replaced in the
// meantime goes back where it was and no byte that was on disk is lost.

import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { chmod, copyFile, link, lstat, mkdir, rename, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsErrorText, lstatIfAny, UnsafePath } from '../os/safe-file.js';
import { checkTrashDir, FileChanged, fileStamp, writeSynced, type TrashFile, type TrashMeta } from './trash.js';

export interface Trashed {
  /** The record's place in the trash. */
  readonly trashPath: string;
  /** The entry's folder (0700), every moved file in it. */
  readonly entryDir: string;
  /** The entry's note, beside its folder. */
  readonly metaPath: string;
  /** The companions that moved with the record, by their original paths. */
  readonly movedAlong: readonly string[];
  /** The companions that stayed where they were, with why. */
  readonly left: readonly { readonly path: string; readonly why: string }[];
  /** Companions that changed while they were moved and could not go back: in the entry, one sentence each. */
  readonly kept: readonly string[];
  /** The record's owner (uid), as it was moved. */
  readonly uid: number;
  /** What was found and fixed on the way (the trash folder's mode tightened). */
  readonly warnings: readonly string[];
}

/**
 * Move `path` into a new trash entry, provided it is still the file read (same inode, size,
 * mtime), and `companions` (files that belong to it: a Claude record's key files) with it. Each
 * file goes by one rename into the entry's folder (0700) and is checked there: a file that is not
 * the one judged is put back (or, when its place is taken again, kept in the entry, named in its
 * note) — a byte on disk is never lost. One note names every file and where it came from; it is
 * written before anything moves. A companion that is not a regular file stays, and is named in
 * `left`; a companion moved is made 0600 (it may hold a secret; it is never read).
 * Rejects with FileChanged, ENOENT when the record is gone, or UnsafePath when the record is not
 * a regular file or the trash folder is a symlink; nothing is moved then.
 */
export async function moveToTrash(
  path: string,
  expectedStamp: string,
  meta: Pick<TrashMeta, 'source' | 'kind' | 'id'>,
  trashDir: string,
  now: () => number = Date.now,
  companions: readonly string[] = [],
): Promise<Trashed> {
  const before = await lstat(path);
  if (!before.isFile()) throw new UnsafePath(`${path} is not a regular file (a symlink?); it is not moved`);
  if (fileStamp(before) !== expectedStamp) throw new FileChanged('the file changed since ghostwatch read it');
  const left: { path: string; why: string }[] = [];
  const planned: { path: string; ino: number }[] = [];
  for (const c of companions) {
    const s = await lstatIfAny(c);
    if (!s) continue;
    if (s.isFile()) planned.push({ path: c, ino: s.ino });
    else left.push({ path: c, why: 'not a regular file (a symlink?)' });
  }
  const warnings = await checkTrashDir(trashDir, { create: true });
  const at = new Date(now());
  const trashName = `${at.toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}-${basename(path)}`;
  const entryDir = join(trashDir, trashName);
  const metaPath = `${entryDir}.meta.json`;
  await mkdir(entryDir, { mode: 0o700 });
  const file = (p: string): TrashFile => ({ name: basename(p), originalPath: p });
  const note = (files: readonly TrashFile[]): TrashMeta => ({ version: 2, ...meta, originalPath: path, trashName, trashedAt: at.toISOString(), files });
  const plannedFiles = [file(path), ...planned.map((p) => file(p.path))];
  await writeSynced(metaPath, `${JSON.stringify(note(plannedFiles), null, 2)}\n`);

  const trashPath = join(entryDir, basename(path));
  try {
    await moveChecked(path, trashPath, (s) => s.isFile() && fileStamp(s) === expectedStamp);
  } catch (error) {
    if (!(error instanceof KeptInTrash)) {
      await unlink(metaPath).catch(() => undefined);
      await rmdir(entryDir).catch(() => undefined);
      throw error;
    }
    // What arrived stays in the entry, its note naming only it: restore can still put it back.
    if (planned.length > 0) await rewriteNote(metaPath, note([file(path)])).catch(() => undefined);
    throw new FileChanged(`the file changed while it was being moved, and ${error.message}`, trashPath);
  }
  const movedAlong: string[] = [];
  const kept: string[] = [];
  for (const p of planned) {
    const to = join(entryDir, basename(p.path));
    try {
      await moveChecked(p.path, to, (s) => s.isFile() && s.ino === p.ino);
      const s = await lstat(to);
      // In our 0700 folder nobody else can swap it between the lstat and the chmod.
      if (s.isFile() && (s.mode & 0o077) !== 0) await chmod(to, 0o600);
      movedAlong.push(p.path);
    } catch (error) {
      if (!(error instanceof KeptInTrash)) {
        left.push({ path: p.path, why: fsErrorText(error) });
        continue;
      }
      // Not the file judged, and its place taken again: it stays in the entry, named by the note.
      movedAlong.push(p.path);
      kept.push(`${p.path} changed while it was being moved, and ${error.message}`);
    }
  }
  if (movedAlong.length !== planned.length) await rewriteNote(metaPath, note([file(path), ...movedAlong.map(file)]));
  return { trashPath, entryDir, metaPath, movedAlong, left, uid: before.uid, kept, warnings };
}

/** A file moved into the trash that was not the one judged, and could not go back: it stays in the entry. */
class KeptInTrash extends Error {}

/**
 * One rename of `from` to `to` (a new name in our own folder), then a look at what arrived: not
 * what was judged, it goes back where it was, never over a file that is there again (then it stays
 * and KeptInTrash says so). Across filesystems see copyChecked.
 */
async function moveChecked(from: string, to: string, judged: (s: Stats) => boolean): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    return copyChecked(from, to, judged);
  }
  if (judged(await lstat(to))) return;
  const stays = await putBack(to, from);
  if (stays !== undefined) throw new KeptInTrash(`what was moved is kept at ${to}, since it cannot go back (${stays})`);
  throw new FileChanged('the file changed while it was being moved');
}

/**
 * Across filesystems: renamed first to a hidden name beside itself (so what is copied is what was
 * checked), copied into the entry, then that name removed. Not what was judged, it goes back where
 * it was; when its place is taken again it is copied into the entry all the same (KeptInTrash):
 * never left under the hidden name, where nobody would look for it.
 */
async function copyChecked(from: string, to: string, judged: (s: Stats) => boolean): Promise<void> {
  const staging = join(dirname(from), `.${basename(from)}.ghostwatch-${randomBytes(3).toString('hex')}`);
  await rename(from, staging);
  const isJudged = judged(await lstat(staging));
  const stays = isJudged ? undefined : await putBack(staging, from);
  if (!isJudged && stays === undefined) throw new FileChanged('the file changed while it was being moved');
  try {
    await copyFile(staging, to, constants.COPYFILE_EXCL);
  } catch (copyError) {
    await unlink(to).catch(() => undefined);
    // The judged file goes back; one that could not go back before cannot now: its name is said.
    const stuck = isJudged ? await putBack(staging, from) : stays;
    if (stuck !== undefined) throw new Error(`${fsErrorText(copyError)}; what was moved is at ${staging}, since it cannot go back (${stuck})`);
    throw copyError;
  }
  await unlink(staging);
  if (!isJudged) throw new KeptInTrash(`what was moved is kept at ${to}, since it cannot go back (${stays})`);
}

/** Back to `to` without overwriting: a hard link, then the moved name goes. Resolves with why it cannot go back, or undefined once it is back. */
async function putBack(moved: string, to: string): Promise<string | undefined> {
  try {
    await link(moved, to);
  } catch (error) {
    return fsErrorText(error);
  }
  await unlink(moved);
  return undefined;
}

/** The note replaced whole (a new file renamed over it): a crash leaves the old note or the new one. */
async function rewriteNote(metaPath: string, record: TrashMeta): Promise<void> {
  const temp = `${metaPath}.${randomBytes(3).toString('hex')}.tmp`;
  await writeSynced(temp, `${JSON.stringify(record, null, 2)}\n`);
  await rename(temp, metaPath);
}

// The trash folder with real files: never written through a symlink, tightened when loose, its
// notes created exclusively and validated when read back, only regular files moved or restored;
// what a move leaves behind (the note first, then the file, nothing at the source), a file that
// changes in the middle of its move (and a real process that keeps replacing it, trial after trial),
// a move and a restore across filesystems (copied, since a hard link cannot cross), and restore
// never over a file.
import { spawn } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { UnsafePath } from '../../src/os/safe-file.js';
import { moveToTrash } from '../../src/sources/trash-move.js';
import { ghostwatchStateDir } from '../../src/os/state-dir.js';
import { checkTrashDir, defaultTrashDir, FileChanged, fileStamp, listTrash, restoreFromTrash, type TrashMeta } from '../../src/sources/trash.js';
import { OTHER_UID, PLANTINGS, plantingRequirement } from '../support/planted-files.js';
import { claudeRecord } from '../support/claude-records.js';
import { killAndReap } from '../support/processes.js';
import { until } from '../support/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(base = tmpdir()): string {
  const d = mkdtempSync(join(base, 'gw-trash-'));
  dirs.push(d);
  return d;
}
function sessionFile(root: string, name = 'a.json', text = '{"pid": 1}'): { path: string; stamp: string } {
  const path = join(root, name);
  writeFileSync(path, text);
  return { path, stamp: fileStamp(statSync(path)) };
}
const meta = { source: 'claude', kind: 'session', id: 'abc' } as const;

describe('trash folder', () => {
  it('is never written through a symlink: the move is refused in one line, the file stays, the target folder is untouched', async () => {
    const root = temp();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const trash = join(root, 'trash');
    symlinkSync(elsewhere, trash);
    const { path, stamp } = sessionFile(root);
    const moved = moveToTrash(path, stamp, meta, trash);
    await expect(moved).rejects.toBeInstanceOf(UnsafePath);
    await expect(moved).rejects.toThrow(new RegExp(`^the trash folder ${trash} is a symbolic link ghostwatch did not make; refusing to write through it$`));
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 1}');
    await expect(listTrash(trash)).rejects.toThrow(/symbolic link/);
    await expect(checkTrashDir(trash)).rejects.toThrow(/symbolic link/);
  });

  it('a loose trash folder (0777) is tightened to 0700 with a warning; a new one is made 0700', async () => {
    const root = temp();
    const trash = join(root, 'state', 'trash');
    mkdirSync(trash, { recursive: true });
    chmodSync(trash, 0o777);
    expect(await checkTrashDir(trash)).toEqual([`the trash folder ${trash} was mode 0777; tightened to 0700`]);
    expect(statSync(trash).mode & 0o777).toBe(0o700);

    chmodSync(trash, 0o755);
    const { path, stamp } = sessionFile(root);
    const moved = await moveToTrash(path, stamp, meta, trash);
    expect(moved.warnings).toEqual([`the trash folder ${trash} was mode 0755; tightened to 0700`]);
    expect(statSync(trash).mode & 0o777).toBe(0o700);
    expect(statSync(moved.metaPath).mode & 0o777).toBe(0o600);
    expect(statSync(moved.entryDir).mode & 0o777).toBe(0o700);

    const fresh = join(root, 'new-trash');
    const again = sessionFile(root, 'b.json');
    expect((await moveToTrash(again.path, again.stamp, meta, fresh)).warnings).toEqual([]);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });

  it('only a regular file is moved: a symlink named like a session file is refused and left as it is', async () => {
    const root = temp();
    const target = join(root, 'passwd');
    writeFileSync(target, 'root:x:0:0\n');
    const link = join(root, 'evil.json');
    symlinkSync(target, link);
    const trash = join(root, 'trash');
    await expect(moveToTrash(link, fileStamp(statSync(link)), meta, trash)).rejects.toThrow(/is not a regular file/);
    expect(readFileSync(link, 'utf8')).toBe('root:x:0:0\n');
    expect(existsSync(trash) ? readdirSync(trash) : []).toEqual([]);
  });

  it('notes that are not ours are skipped, not trusted: wrong field types, symlinks, huge files', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root);
    await moveToTrash(path, stamp, meta, trash);
    const good = { version: 1, source: 's', kind: 'session', id: 'x', originalPath: '/x', trashName: 'x', trashedAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(join(trash, 'n1.meta.json'), JSON.stringify({ ...good, trashedAt: 5 }));
    writeFileSync(join(trash, 'n2.meta.json'), JSON.stringify({ ...good, kind: 'rootkit' }));
    writeFileSync(join(trash, 'n3.meta.json'), JSON.stringify({ ...good, id: ['x'] }));
    writeFileSync(join(root, 'outside.json'), JSON.stringify({ ...good, id: 'from-outside' }));
    symlinkSync(join(root, 'outside.json'), join(trash, 'n4.meta.json'));
    writeFileSync(join(trash, 'n5.meta.json'), JSON.stringify({ ...good, id: 'huge', pad: 'x'.repeat(100_000) }));
    const items = await listTrash(trash);
    expect(items.map((i) => i.id)).toEqual(['abc']);
  });

  it('restore puts back only a regular file', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root);
    const { trashPath } = await moveToTrash(path, stamp, meta, trash);
    const [item] = await listTrash(trash);
    rmSync(trashPath);
    writeFileSync(join(root, 'secret'), 'secret');
    symlinkSync(join(root, 'secret'), trashPath);
    expect((await listTrash(trash))[0]!.present).toBe(false);
    await expect(restoreFromTrash(item!)).rejects.toThrow(/is not a regular file/);
    expect(existsSync(path)).toBe(false);
  });
});

const at = (iso: string) => () => Date.parse(iso);

/** A folder on another filesystem than tmpdir(), or why there is none here. */
function otherFilesystem(): string | { reason: string } {
  const shm = '/dev/shm';
  if (!existsSync(shm)) return { reason: 'not on this platform: no /dev/shm, so no second filesystem to move across' };
  if (statSync(shm).dev === statSync(tmpdir()).dev) return { reason: 'not on this platform: /dev/shm is on the same filesystem as the temp folder' };
  return temp(shm);
}

describe('moveToTrash', () => {
  it('leaves the file in a dated entry folder of the trash, its note beside it, nothing at the source', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root, 'sess.json', '{"pid": 42}');
    const { trashPath, entryDir, metaPath } = await moveToTrash(path, stamp, meta, trash, at('2026-03-04T05:06:07.089Z'));

    expect(existsSync(path)).toBe(false);
    expect(readFileSync(trashPath, 'utf8')).toBe('{"pid": 42}');
    expect(entryDir).toMatch(/\/trash\/2026-03-04T05-06-07-089Z-[0-9a-f]{6}-sess\.json$/);
    expect(trashPath).toBe(join(entryDir, 'sess.json'));
    expect(metaPath).toBe(`${entryDir}.meta.json`);
    const note = JSON.parse(readFileSync(metaPath, 'utf8')) as TrashMeta;
    expect(note).toEqual({
      version: 2,
      source: 'claude',
      kind: 'session',
      id: 'abc',
      originalPath: path,
      trashName: entryDir.slice(trash.length + 1),
      trashedAt: '2026-03-04T05:06:07.089Z',
      files: [{ name: 'sess.json', originalPath: path }],
    });
    expect(readdirSync(trash).sort()).toEqual([note.trashName, `${note.trashName}.meta.json`].sort());
    expect(readdirSync(entryDir)).toEqual(['sess.json']);
  });

  it('writes the note before the file arrives in the trash (a crash in between leaves a note, not a lost file)', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const { path, stamp } = sessionFile(root);
    const seen: string[] = [];
    let whenNoted: { atSource: boolean; inEntry: string[] } | undefined;
    const watcher = watch(trash, (_event, name) => {
      if (name && !seen.includes(name)) seen.push(name);
      if (!whenNoted && name?.endsWith('.meta.json')) whenNoted = { atSource: existsSync(path), inEntry: readdirSync(join(trash, name.slice(0, -'.meta.json'.length))) };
    });
    try {
      const { entryDir } = await moveToTrash(path, stamp, meta, trash);
      const name = entryDir.slice(trash.length + 1);
      await until(() => seen.includes(`${name}.meta.json`), 2_000, 'the note in the trash');
      // When the note appeared, the file was still where it was and its entry folder empty.
      expect(whenNoted).toEqual({ atSource: true, inEntry: [] });
    } finally {
      watcher.close();
    }
  });

  it('refuses a file that changed since it was read; a file that is gone rejects with ENOENT; the trash stays empty', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root);
    appendFileSync(path, ' ');
    await expect(moveToTrash(path, stamp, meta, trash)).rejects.toThrow(new FileChanged('the file changed since ghostwatch read it'));
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 1} ');
    rmSync(path);
    await expect(moveToTrash(path, stamp, meta, trash)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(existsSync(trash) ? readdirSync(trash) : []).toEqual([]);
  });

  it('a file written to while it is being moved stays where it is, with what was written; the trash keeps neither copy nor note', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const { path, stamp } = sessionFile(root);
    // The note is the move's first write into the trash: the session writes to its file right then.
    let wrote = false;
    const watcher = watch(trash, (_event, name) => {
      if (!wrote && name?.endsWith('.meta.json')) {
        wrote = true;
        appendFileSync(path, '\n{"pid": 2}');
      }
    });
    try {
      await expect(moveToTrash(path, stamp, meta, trash)).rejects.toThrow(new FileChanged('the file changed while it was being moved'));
    } finally {
      watcher.close();
    }
    expect(wrote).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 1}\n{"pid": 2}');
    expect(readdirSync(trash)).toEqual([]);
  });

  it('a file replaced by another (a new inode) just before the rename goes back where it was, whole; the trash keeps nothing', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const { path, stamp } = sessionFile(root, '42.json', '{"pid": 42, "old": true}');
    // Pid reuse: a new process writes its record at the same name (a new file renamed over it) right as the move starts.
    let replaced = false;
    const watcher = watch(trash, (_event, name) => {
      if (!replaced && name?.endsWith('.meta.json')) {
        replaced = true;
        writeFileSync(join(root, 'new.tmp'), '{"pid": 42, "new": true}');
        renameSync(join(root, 'new.tmp'), path);
      }
    });
    try {
      await expect(moveToTrash(path, stamp, meta, trash)).rejects.toThrow(new FileChanged('the file changed while it was being moved'));
    } finally {
      watcher.close();
    }
    expect(replaced).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 42, "new": true}');
    expect(readdirSync(trash)).toEqual([]);
  });

  it('moves across filesystems by copying: the content arrives, the source is removed (a companion too, made 0600), the note says where it came from', async (ctx) => {
    const other = otherFilesystem();
    if (typeof other !== 'string') return ctx.skip(other.reason);
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(other, 'far.json', '{"pid": 7}');
    const { trashPath } = await moveToTrash(path, stamp, meta, trash);
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(trashPath, 'utf8')).toBe('{"pid": 7}');
    const [item] = await listTrash(trash);
    expect(item).toMatchObject({ originalPath: path, trashPath, present: true });

    await restoreFromTrash(item!);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 7}');
    expect(readdirSync(trash)).toEqual([]);

    // With a companion (a Claude key file): both copied, each checked beside itself first.
    const sessions = join(other, 'sessions');
    mkdirSync(sessions);
    const record = sessionFile(sessions, '77.json', '{"pid": 77}');
    const key = join(sessions, '77.abc.key');
    writeFileSync(key, 'k', { mode: 0o644 });
    const moved = await moveToTrash(record.path, record.stamp, meta, trash, Date.now, [key, join(sessions, '77.gone.key')]);
    expect(moved.movedAlong).toEqual([key]);
    expect(moved.left).toEqual([]);
    expect(readdirSync(sessions)).toEqual([]); // no staging name left beside them
    expect(readdirSync(moved.entryDir).sort()).toEqual(['77.abc.key', '77.json']);
    expect(statSync(join(moved.entryDir, '77.abc.key')).mode & 0o777).toBe(0o600);
    expect((JSON.parse(readFileSync(moved.metaPath, 'utf8')) as TrashMeta).files).toEqual([
      { name: '77.json', originalPath: record.path },
      { name: '77.abc.key', originalPath: key },
    ]);
  });
  it('across filesystems, a record replaced before the move and again once it was taken is kept in the entry its note names, never left under the hidden name beside the sessions', async (ctx) => {
    const other = otherFilesystem();
    if (typeof other !== 'string') return ctx.skip(other.reason);
    const trash = join(temp(), 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const sessions = join(other, 'sessions');
    mkdirSync(sessions);
    const { path, stamp } = sessionFile(sessions, '42.json', '{"pid": 42, "old": true}');
    const replace = (text: string): void => {
      writeFileSync(join(other, 'new.tmp'), text);
      renameSync(join(other, 'new.tmp'), path);
    };
    // Pid reuse: a new process writes its record as the note is written, and again once the move took that one away.
    let step = 0;
    const noted = watch(trash, (_event, name) => {
      if (step === 0 && name?.endsWith('.meta.json')) {
        step = 1;
        replace('{"pid": 42, "new": 1}');
      }
    });
    const taken = watch(sessions, (_event, name) => {
      if (step === 1 && name?.startsWith('.42.json.ghostwatch-')) {
        step = 2;
        replace('{"pid": 42, "new": 2}');
      }
    });
    let error: unknown;
    try {
      error = await moveToTrash(path, stamp, meta, trash).catch((e: unknown) => e);
    } finally {
      noted.close();
      taken.close();
    }
    expect(step).toBe(2);
    expect(error).toBeInstanceOf(FileChanged);
    const keptAt = (error as FileChanged).keptAt!;
    expect(readFileSync(keptAt, 'utf8')).toBe('{"pid": 42, "new": 1}');
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 42, "new": 2}');
    expect(readdirSync(sessions)).toEqual(['42.json']);
    expect((await listTrash(trash)).map((i) => [i.trashPath, i.present])).toEqual([[keptAt, true]]);
  });
});

describe('moveToTrash racing a process that keeps replacing the record (pid reuse)', () => {
  it('45 trials: every version ever placed at the name is still there, in the trash or where the writer put it; only the record judged is ever moved as evicted', async () => {
    await raceTrials(temp, 45);
  }, 120_000);

  it('60 trials across filesystems (the trash on another one: renamed beside itself, checked, copied): the same', async (ctx) => {
    const other = otherFilesystem();
    if (typeof other !== 'string') return ctx.skip(other.reason);
    await raceTrials(temp, 60, () => temp(other));
  }, 120_000);
});

describe('moveToTrash with companions', () => {
  it('a companion that is a symlink stays where it is and is named in `left`; the note names only what moved', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root, '78.json');
    writeFileSync(join(root, 'secret'), 's');
    const link = join(root, '78.x.key');
    symlinkSync(join(root, 'secret'), link);
    const moved = await moveToTrash(path, stamp, meta, trash, Date.now, [link]);
    expect(moved).toMatchObject({ movedAlong: [], left: [{ path: link, why: 'not a regular file (a symlink?)' }] });
    expect(existsSync(link)).toBe(true);
    expect((JSON.parse(readFileSync(moved.metaPath, 'utf8')) as TrashMeta).files).toEqual([{ name: '78.json', originalPath: path }]);
  });
});

describe('listTrash and restoreFromTrash', () => {
  it('lists newest first, marks a note whose file never arrived as not present, and ignores other files', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const a = sessionFile(root, 'a.json');
    const b = sessionFile(root, 'b.json');
    const c = sessionFile(root, 'c.json');
    await moveToTrash(a.path, a.stamp, { ...meta, id: 'a' }, trash, at('2026-01-01T00:00:00.000Z'));
    await moveToTrash(c.path, c.stamp, { ...meta, id: 'c' }, trash, at('2026-01-03T00:00:00.000Z'));
    const middle = await moveToTrash(b.path, b.stamp, { ...meta, id: 'b', kind: 'claim' }, trash, at('2026-01-02T00:00:00.000Z'));
    rmSync(middle.trashPath); // as if the move had crashed after the note
    writeFileSync(join(trash, 'stray.txt'), 'not a note');

    const items = await listTrash(trash);
    expect(items.map((i) => [i.id, i.kind, i.present])).toEqual([
      ['c', 'session', true],
      ['b', 'claim', false],
      ['a', 'session', true],
    ]);
    expect(items[1]).toMatchObject({ originalPath: b.path, trashPath: middle.trashPath, metaPath: middle.metaPath });
  });

  it('an entry of an older release (version 1: one file beside its note) is still listed and restored', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const original = join(root, 'sessions', 'old.json');
    writeFileSync(join(trash, 'T-old.json'), '{"pid": 3}');
    const note = { version: 1, source: 'claude', kind: 'session', id: 'old', originalPath: original, trashName: 'T-old.json', trashedAt: '2026-01-01T00:00:00.000Z' };
    writeFileSync(join(trash, 'T-old.json.meta.json'), JSON.stringify(note));
    const [item] = await listTrash(trash);
    expect(item).toMatchObject({ id: 'old', present: true, trashPath: join(trash, 'T-old.json'), entryFiles: [{ originalPath: original, present: true }] });
    expect(await restoreFromTrash(item!)).toEqual([original]);
    expect(readFileSync(original, 'utf8')).toBe('{"pid": 3}');
    expect(readdirSync(trash)).toEqual([]);
  });

  it('a trash folder that does not exist yet lists as empty', async () => {
    expect(await listTrash(join(temp(), 'never-made'))).toEqual([]);
  });

  it('restore puts the file back, into its folder made anew, and clears the trash of it and its note', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const folder = join(root, 'projects', 'p1');
    mkdirSync(folder, { recursive: true });
    const { path, stamp } = sessionFile(folder, 's.json', '{"pid": 9}');
    await moveToTrash(path, stamp, meta, trash);
    rmSync(join(root, 'projects'), { recursive: true });

    const [item] = await listTrash(trash);
    await restoreFromTrash(item!);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 9}');
    expect(readdirSync(trash)).toEqual([]);
    expect(await listTrash(trash)).toEqual([]);
  });

  it('restore never overwrites a file that is at the original path now: EEXIST, both files and the note stay', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root, 's.json', 'old');
    const { trashPath, metaPath } = await moveToTrash(path, stamp, meta, trash);
    writeFileSync(path, 'new');

    const [item] = await listTrash(trash);
    await expect(restoreFromTrash(item!)).rejects.toMatchObject({ code: 'EEXIST', message: `${path} exists now; it was not overwritten` });
    expect(readFileSync(path, 'utf8')).toBe('new');
    expect(readFileSync(trashPath, 'utf8')).toBe('old');
    expect(existsSync(metaPath)).toBe(true);
  });
});


describe('what the trash reads back', () => {
  it('lives in the state folder by default', () => {
    expect(defaultTrashDir()).toBe(join(ghostwatchStateDir(process.env, homedir()), 'trash'));
    expect(defaultTrashDir({ XDG_STATE_HOME: '/s' }, '/h')).toBe('/s/ghostwatch/trash');
  });

  it('lists only notes of its own shape: not JSON objects, missing fields, other kinds and versions, file names that climb out are passed over', async () => {
    const trash = join(temp(), 'trash');
    mkdirSync(trash, { mode: 0o700 });
    const good = { version: 2, source: 'claude', kind: 'session', id: 'x', originalPath: '/o/1.json', trashName: 'e1', trashedAt: '2026-11-27T00:00:00.000Z', files: [{ name: '1.json', originalPath: '/o/1.json' }] };
    const notes: Record<string, unknown> = {
      'array.meta.json': [good],
      'no-id.meta.json': { ...good, id: 7 },
      'kind.meta.json': { ...good, kind: 'lock' },
      'v3.meta.json': { ...good, version: 3 },
      'no-files.meta.json': { ...good, files: [] },
      'climbs.meta.json': { ...good, files: [{ name: '../1.json', originalPath: '/o/1.json' }] },
      'dots.meta.json': { ...good, files: [{ name: '..', originalPath: '/o/1.json' }] },
      'not-a-file-entry.meta.json': { ...good, files: ['1.json'] },
    };
    for (const [name, body] of Object.entries(notes)) writeFileSync(join(trash, name), JSON.stringify(body));
    writeFileSync(join(trash, 'broken.meta.json'), '{"version": 2,');
    expect(await listTrash(trash)).toEqual([]);
    // Two good entries of the same moment: the later name first.
    writeFileSync(join(trash, 'a.meta.json'), JSON.stringify({ ...good, trashName: 'e-a' }));
    writeFileSync(join(trash, 'b.meta.json'), JSON.stringify({ ...good, trashName: 'e-b' }));
    expect((await listTrash(trash)).map((i) => [i.trashName, i.present])).toEqual([['e-b', false], ['e-a', false]]);
  });

  it('restores nothing from an entry whose folder is not a folder any more', async () => {
    const root = temp();
    const trash = join(root, 'trash');
    const { path, stamp } = sessionFile(root);
    const moved = await moveToTrash(path, stamp, meta, trash);
    const [item] = await listTrash(trash);
    rmSync(moved.entryDir, { recursive: true });
    writeFileSync(moved.entryDir, 'not a folder');
    await expect(restoreFromTrash(item!)).rejects.toBeInstanceOf(UnsafePath);
    expect(existsSync(path)).toBe(false);
  });
});

const planting = plantingRequirement();
const withOtherUser = planting === undefined || process.env.CI === 'true' ? describe : describe.skip;

withOtherUser('a trash another user could have written to', () => {
  /** A version 2 note of the shape ghostwatch writes, for an entry folder holding one file. */
  const noteOf = (root: string, id: string) => ({
    version: 2,
    source: 'claude',
    kind: 'session',
    id,
    originalPath: join(root, 'restored-here.json'),
    trashName: `entry-${id}`,
    trashedAt: '2026-11-27T00:00:00.000Z',
    files: [{ name: 'restored-here.json', originalPath: join(root, 'restored-here.json') }],
  });
  const entryOf = (trash: string, id: string): string => {
    mkdirSync(join(trash, `entry-${id}`), { mode: 0o700 });
    writeFileSync(join(trash, `entry-${id}`, 'restored-here.json'), '{"planted": true}');
    return join(trash, `entry-${id}`);
  };
  const root755 = (): string => {
    const root = temp();
    chmodSync(root, 0o755); // uid 65534 plants below it
    return root;
  };

  // The plantings where the note itself is not ours; a trash folder of ours that is loose is tightened first (above).
  it.each(PLANTINGS.filter((p) => !p.how.startsWith('ours')))('a note $how is passed over with one warning: nothing to restore', async ({ plant, why }) => {
    if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
    const root = root755();
    const trash = join(root, 'trash');
    const metaPath = plant(trash, 'planted.meta.json', JSON.stringify(noteOf(root, 'planted')));
    entryOf(trash, 'planted');
    await checkTrashDir(trash); // what restore does first: a loose folder of ours is made 0700
    const warnings: string[] = [];
    expect(await listTrash(trash, (w) => warnings.push(w))).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^the trash note ${metaPath} is passed over: `));
    expect(warnings[0]).toMatch(why);
  });

  it('a note of ours whose entry folder belongs to uid 65534 is passed over, and restore refuses that folder', async () => {
    const root = root755();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    writeFileSync(join(trash, 'x.meta.json'), JSON.stringify(noteOf(root, 'x')), { mode: 0o600 });
    const entry = entryOf(trash, 'x');
    const [item] = await listTrash(trash);
    expect(item?.present).toBe(true);
    chownSync(entry, OTHER_UID, OTHER_UID);
    const warnings: string[] = [];
    expect(await listTrash(trash, (w) => warnings.push(w))).toEqual([]);
    expect(warnings).toEqual([`the trash entry ${entry} is passed over: its folder belongs to uid 65534, not to uid 0 (the user running ghostwatch)`]);
    await expect(restoreFromTrash(item!)).rejects.toThrow(`${entry} belongs to uid 65534, not to uid 0 (the user running ghostwatch); it is not restored`);
    expect(existsSync(join(root, 'restored-here.json'))).toBe(false);
  });

  it('a trash folder of uid 65534 is neither listed nor written to: the file to evict stays where it is', async () => {
    const root = root755();
    const trash = join(root, 'trash');
    mkdirSync(trash, { mode: 0o700 });
    chownSync(trash, OTHER_UID, OTHER_UID);
    const why = `the trash folder ${trash} belongs to uid 65534, not to uid 0 (the user running ghostwatch); refusing to use it`;
    await expect(checkTrashDir(trash)).rejects.toThrow(why);
    await expect(listTrash(trash)).rejects.toThrow(why);
    const { path, stamp } = sessionFile(root);
    await expect(moveToTrash(path, stamp, meta, trash)).rejects.toThrow(why);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 1}');
    expect(readdirSync(trash)).toEqual([]);
  });

  it('a trash folder of ours left writable by others is not listed until it is tightened', async () => {
    const root = root755();
    const trash = join(root, 'trash');
    mkdirSync(trash);
    chmodSync(trash, 0o777);
    await expect(listTrash(trash)).rejects.toThrow(`the trash folder ${trash} is writable by others (mode 0777; chmod go-w makes it usable); refusing to use it`);
    await checkTrashDir(trash);
    expect(await listTrash(trash)).toEqual([]);
  });
});

/**
 * `trials` moves of a ghost's record `4242.json` while a real process (test/support/record-writer.mjs)
 * keeps replacing it with new versions, each a new inode, as a new process that got the pid would.
 * After each trial every version that was on disk at the name, the judged one included, is found by
 * its bytes at the name, in the trash or among what the writer displaced; nothing is left under
 * another name beside it; the trash holds only what a note names; a move that resolved moved the
 * judged record, nothing else; and a move that was refused left nothing in the trash, unless it
 * says where it kept what it could not put back (FileChanged.keptAt, not the judged record).
 */
async function raceTrials(temp: () => string, trials: number, trashBase: () => string = temp): Promise<void> {
  const writer = spawn(process.execPath, [join(import.meta.dirname, '../support/record-writer.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  createInterface({ input: writer.stdout! }).on('line', (l) => lines.push(l));
  try {
    await until(() => lines.includes('ready'), 10_000, 'the writer to start');
    for (let trial = 0; trial < trials; trial++) {
      const folder = temp();
      for (const d of ['records', 'witness', 'graveyard']) mkdirSync(join(folder, d));
      const record = join(folder, 'records', '4242.json');
      const ghost = JSON.stringify(claudeRecord(4242, 'the-ghost-session'));
      writeFileSync(record, ghost);
      linkSync(record, join(folder, 'witness', 'v0'));
      const judged = lstatSync(record);
      const trash = join(trashBase(), 'trash');

      lines.length = 0;
      // A third of the trials the writer is at work through the whole move, a third it starts
      // anywhere in it or after, a third the moment the move touches the record.
      writer.stdin!.write(`go ${folder} ${['2', '40', 'pounce'][trial % 3]}\n`);
      const result = await moveToTrash(record, fileStamp(judged), meta, trash).then(
        (moved) => ({ moved }),
        (error: unknown) => ({ error }),
      );
      writer.stdin!.write('stop\n');
      const stopped = await until(() => lines.find((l) => l.startsWith('stopped ')), 10_000, 'the writer to stop');
      const placed = Number(stopped.slice('stopped '.length));

      // Every version ever at the name, the ghost's and each one the writer placed, by its bytes
      // (each is unique; across filesystems the trash holds a copy, a new inode).
      const versions = readdirSync(join(folder, 'witness')).map((v) => ({ v, bytes: readFileSync(join(folder, 'witness', v), 'utf8') }));
      expect(versions.length).toBe(placed + 1);
      const found = new Set<string>();
      const look = (path: string): void => void found.add(readFileSync(path, 'utf8'));
      if (existsSync(record)) look(record);
      for (const g of readdirSync(join(folder, 'graveyard'))) look(join(folder, 'graveyard', g));
      const items = await listTrash(trash);
      const trashFiles = existsSync(trash) ? readdirSync(trash, { recursive: true, encoding: 'utf8' }).map((n) => join(trash, n)).filter((p) => lstatSync(p).isFile() && !p.endsWith('.meta.json')) : [];
      for (const p of trashFiles) look(p);
      const lost = versions.filter((x) => !found.has(x.bytes)).map((x) => x.v);
      expect(lost, `trial ${trial}: versions on disk that are nowhere now`).toEqual([]);
      // Nor under another name in the record's folder (a staging name left behind hides a file).
      expect(readdirSync(join(folder, 'records')).filter((n) => n !== '4242.json')).toEqual([]);
      // Nothing in the trash that no note names.
      expect(trashFiles.sort()).toEqual(items.filter((i) => i.present).map((i) => i.trashPath).sort());

      if ('moved' in result) {
        // Reported moved (evicted): it is the record judged, whole, and the trash's only entry.
        expect(readFileSync(result.moved.trashPath, 'utf8')).toBe(ghost);
        expect(items.map((i) => i.trashPath)).toEqual([result.moved.trashPath]);
        continue;
      }
      const error = result.error as FileChanged & NodeJS.ErrnoException;
      // Refused (FileChanged) or gone (the writer between taking one version away and placing the next).
      if (error.code !== 'ENOENT') expect(error).toBeInstanceOf(FileChanged);
      if (error.keptAt === undefined) {
        expect(items).toEqual([]);
      } else {
        // Another version, moved and unable to go back (its name taken again): kept, named by its note.
        expect(readFileSync(error.keptAt, 'utf8')).not.toBe(ghost);
        expect(items.map((i) => i.trashPath)).toEqual([error.keptAt]);
      }
    }
  } finally {
    await killAndReap(writer);
  }
}

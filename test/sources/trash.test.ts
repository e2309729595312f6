// The trash folder with real files: never written through a symlink, tightened when loose, its
// notes created exclusively and validated when read back, only regular files moved or restored.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnsafePath } from '../../src/os/safe-file.js';
import { moveToTrash } from '../../src/sources/trash-move.js';
import { checkTrashDir, fileStamp, listTrash, restoreFromTrash } from '../../src/sources/trash.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-trash-'));
  dirs.push(d);
  return d;
}
const meta = { source: 'claude', kind: 'session', id: 'abc' } as const;

function sessionFile(root: string, name = 'a.json'): { path: string; stamp: string } {
  const path = join(root, name);
  writeFileSync(path, '{"pid": 1}');
  return { path, stamp: fileStamp(statSync(path)) };
}

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

// Creating files without being led elsewhere: exclusive creation never writes through a planted
// symlink, atomic replacement leaves only the target (0600), a private folder is refused when a
// symlink and tightened when loose.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNew, ensurePrivateDir, tempNameFor, UnsafePath, writeFileAtomicSync } from '../../src/os/safe-file.js';

const dirs: string[] = [];
function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'gw-safe-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('safe file creation', () => {
  it('a new file is never created through a symlink planted at its name', async () => {
    const root = temp();
    const victim = join(root, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(root, 'new.json'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling.json'));
    await expect(createNew(join(root, 'new.json'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(createNew(join(root, 'dangling.json'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readdirSync(root).sort()).toEqual(['dangling.json', 'new.json', 'victim']);
    const made = await createNew(join(root, 'fresh.json'));
    await made.close();
    expect(statSync(join(root, 'fresh.json')).mode & 0o777).toBe(0o600);
  });

  it('atomic replacement: a fresh temp name beside the target, 0600, nothing left behind', () => {
    const root = temp();
    const target = join(root, 'state.json');
    writeFileSync(target, 'old', { mode: 0o644 });
    expect(tempNameFor(target).startsWith(join(root, '.state.json.tmp-'))).toBe(true);
    expect(tempNameFor(target)).not.toBe(tempNameFor(target));
    writeFileAtomicSync(target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(root)).toEqual(['state.json']);
  });

  it('a failed replacement leaves the target as it was and no temp file', () => {
    const root = temp();
    const target = join(root, 'state.json');
    mkdirSync(target); // rename of a file over a folder fails
    expect(() => writeFileAtomicSync(target, 'x')).toThrow();
    expect(readdirSync(root)).toEqual(['state.json']);
    expect(statSync(target).isDirectory()).toBe(true);
  });

  it('a private folder: created 0700, refused when a symlink, tightened (with a warning) when loose', async () => {
    const root = temp();
    expect(await ensurePrivateDir(join(root, 'a', 'trash'), 'the trash folder')).toEqual([]);
    expect(statSync(join(root, 'a', 'trash')).mode & 0o777).toBe(0o700);
    expect(await ensurePrivateDir(join(root, 'none'), 'the trash folder', { create: false })).toEqual([]);
    expect(() => lstatSync(join(root, 'none'))).toThrow();

    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o755 });
    chmodSync(elsewhere, 0o755);
    symlinkSync(elsewhere, join(root, 'linked'));
    const refused = ensurePrivateDir(join(root, 'linked'), 'the trash folder');
    await expect(refused).rejects.toBeInstanceOf(UnsafePath);
    await expect(refused).rejects.toThrow(/^the trash folder .*linked is a symbolic link ghostwatch did not make; refusing to write through it$/);
    expect(statSync(elsewhere).mode & 0o777).toBe(0o755);

    const loose = join(root, 'loose');
    mkdirSync(loose);
    chmodSync(loose, 0o777);
    expect(await ensurePrivateDir(loose, 'the trash folder')).toEqual([`the trash folder ${loose} was mode 0777; tightened to 0700`]);
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });
});

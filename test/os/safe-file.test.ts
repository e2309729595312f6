// Creating files without being led elsewhere: exclusive creation never writes through a planted
// symlink, atomic replacement leaves only the target (0600), a private folder is refused when a
// symlink or another user's and tightened when loose. Reading back what ghostwatch keeps: only a
// regular file of ours, in a folder of ours, that nobody else may write (readOwnFileSync).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNew, ensurePrivateDir, readOwnFileSync, tempNameFor, UnsafePath, writeFileAtomicSync } from '../../src/os/safe-file.js';
import { OTHER_UID, ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';

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

const planting = plantingRequirement();
const withOtherUser = planting === undefined || process.env.CI === 'true' ? describe : describe.skip;

withOtherUser('reading back a file ghostwatch keeps (readOwnFileSync)', () => {
  it.each(PLANTINGS)('a file $how is refused in one clause, never read', ({ plant, why }) => {
    if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
    const root = temp();
    chmodSync(root, 0o755); // uid 65534 plants below it
    const path = plant(join(root, 'kept'), 'file.json', '{"planted": true}');
    expect(() => readOwnFileSync(path, 1024)).toThrow(UnsafePath);
    expect(() => readOwnFileSync(path, 1024)).toThrow(why);
  });

  it('our own 0600 file in our 0700 folder is read whole; one of 0644 in a 0755 folder too (nobody else may write either)', () => {
    const root = temp();
    expect(readOwnFileSync(ownFile(join(root, 'kept'), 'file.json', '{"ours": true}'), 1024).toString()).toBe('{"ours": true}');
    mkdirSync(join(root, 'shared'), { mode: 0o755 });
    writeFileSync(join(root, 'shared', 'file.json'), 'readable', { mode: 0o644 });
    expect(readOwnFileSync(join(root, 'shared', 'file.json'), 1024).toString()).toBe('readable');
  });

  it('a file of ours in a folder of uid 65534 is refused: whoever owns the folder can swap what is in it', () => {
    const root = temp();
    const path = ownFile(join(root, 'theirs'), 'file.json', '{}');
    chownSync(join(root, 'theirs'), OTHER_UID, OTHER_UID);
    expect(() => readOwnFileSync(path, 1024)).toThrow(`its folder ${join(root, 'theirs')} belongs to uid 65534, not to uid 0 (the user running ghostwatch)`);
  });

  it('nothing there is ENOENT; a FIFO is refused without waiting for a writer; a file over the bound is not read', () => {
    const root = temp();
    expect(() => readOwnFileSync(join(root, 'none.json'), 1024)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    execFileSync('mkfifo', ['-m', '600', join(root, 'fifo')]);
    expect(() => readOwnFileSync(join(root, 'fifo'), 1024)).toThrow('it is not a regular file');
    writeFileSync(join(root, 'big.json'), 'x'.repeat(2000), { mode: 0o600 });
    expect(() => readOwnFileSync(join(root, 'big.json'), 1024)).toThrow('it is larger than 1024 bytes (2000)');
  });

  it('a private folder of another user is refused, not tightened', async () => {
    const root = temp();
    const theirs = join(root, 'theirs');
    mkdirSync(theirs, { mode: 0o777 });
    chmodSync(theirs, 0o777);
    chownSync(theirs, OTHER_UID, OTHER_UID);
    await expect(ensurePrivateDir(theirs, 'the trash folder')).rejects.toThrow(`the trash folder ${theirs} belongs to uid 65534, not to uid 0 (the user running ghostwatch); refusing to use it`);
    expect(statSync(theirs).mode & 0o777).toBe(0o777);
  });
});

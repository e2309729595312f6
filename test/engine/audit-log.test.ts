// Where the audit log lives and how it is written: appended, one JSON object a line, private;
// never through a symlink, tightened when loose, whole lines only (a partial one is repaired on
// open, a short write on a full disk leaves nothing), and no eviction without its intent on disk.
// The start-up check of a log that is not there creates nothing; a log that is not a regular file
// (a FIFO) is refused in one line; a partial last line too long to keep is ended where it is and
// noted; an error is reported in one line.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { auditError, AuditLog, defaultAuditLogPath } from '../../src/engine/audit-log.js';
import { parseClaudeSession } from '../../src/sources/claude/formats.js';
import { FileSource } from '../../src/sources/claude/index.js';
import { deadPid, engineFor, HOST, tempDir, until } from './helpers.js';
import { UnsafePath } from '../../src/os/safe-file.js';
import { OTHER_UID, plantingRequirement } from '../support/planted-files.js';

const dirs: string[] = [];
const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) execFileSync('umount', [m]);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function temp(): string {
  const root = mkdtempSync(join(tmpdir(), 'gw-audit-'));
  dirs.push(root);
  return root;
}

const lines = (path: string): unknown[] => readFileSync(path, 'utf8').split('\n').slice(0, -1).map((l) => JSON.parse(l) as unknown);

describe('audit log', () => {
  it('lives under $XDG_STATE_HOME, else ~/.local/state (a relative XDG_STATE_HOME is ignored)', () => {
    expect(defaultAuditLogPath({ XDG_STATE_HOME: '/var/st' }, '/home/u')).toBe('/var/st/ghostwatch/evictions.jsonl');
    expect(defaultAuditLogPath({}, '/home/u')).toBe('/home/u/.local/state/ghostwatch/evictions.jsonl');
    expect(defaultAuditLogPath({ XDG_STATE_HOME: 'rel' }, '/home/u')).toBe('/home/u/.local/state/ghostwatch/evictions.jsonl');
  });

  it('creates 0700 directories and a 0600 file, and appends without rewriting', async () => {
    const root = temp();
    const path = join(root, 'a', 'b', 'evictions.jsonl');
    const log = new AuditLog(path);
    await log.append({ kind: 'intent', id: '1' });
    await log.append({ kind: 'outcome', id: '1', outcome: 'evicted' });
    expect(readFileSync(path, 'utf8')).toBe('{"kind":"intent","id":"1"}\n{"kind":"outcome","id":"1","outcome":"evicted"}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'a', 'b')).mode & 0o777).toBe(0o700);
    expect(log.warnings).toEqual([]);
  });

  it('is never written through a symlink it did not make: refused in one line, the target untouched', async () => {
    const root = temp();
    const victim = join(root, 'victim');
    writeFileSync(victim, 'precious\n', { mode: 0o644 });
    const path = join(root, 'evictions.jsonl');
    symlinkSync(victim, path);
    const log = new AuditLog(path);
    const failed = await log.append({ kind: 'intent', id: '1' }).then(() => 'appended', (e: unknown) => auditError(e));
    expect(failed).toBe(`the audit log ${path} is a symbolic link ghostwatch did not make; refusing to write through it`);
    await expect(log.check()).rejects.toThrow(/symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);

    // A dangling one would have been created at its target.
    const dangling = join(root, 'dangling.jsonl');
    symlinkSync(join(root, 'made-by-us'), dangling);
    await expect(new AuditLog(dangling).append({ kind: 'x' })).rejects.toThrow(/symbolic link/);
    expect(existsSync(join(root, 'made-by-us'))).toBe(false);
  });

  it('a log of another user (uid 65534) is neither read back nor written: refused in one line, its bytes untouched', async (ctx) => {
    const needs = plantingRequirement();
    if (needs !== undefined && process.env.CI !== 'true') return ctx.skip(needs);
    if (needs !== undefined) throw new Error(`CI=true and this test ${needs}`);
    const root = temp();
    const path = join(root, 'evictions.jsonl');
    // A partial last line: the repair would read it back and write it into our log.
    writeFileSync(path, '{"kind":"intent","id":"planted"', { mode: 0o644 });
    chownSync(path, OTHER_UID, OTHER_UID);
    const log = new AuditLog(path);
    const failed = await log.append({ kind: 'intent', id: '1' }).then(() => 'appended', (e: unknown) => auditError(e));
    expect(failed).toBe(`the audit log ${path} belongs to uid 65534, not to uid 0 (the user running ghostwatch); refusing to write to it`);
    await expect(log.check()).rejects.toBeInstanceOf(UnsafePath);
    expect(readFileSync(path, 'utf8')).toBe('{"kind":"intent","id":"planted"');
    expect(statSync(path).mode & 0o777).toBe(0o644);
  });

  it('a log readable by others is tightened to 0600 on start, with a warning', async () => {
    const root = temp();
    const path = join(root, 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent","id":"0"}\n');
    chmodSync(path, 0o644);
    const seen: string[] = [];
    const log = new AuditLog(path, { warn: (l) => seen.push(l) });
    expect(await log.check()).toEqual([`the audit log ${path} was mode 0644; tightened to 0600`]);
    expect(seen).toEqual([`the audit log ${path} was mode 0644; tightened to 0600`]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await log.check()).toEqual([]);
    // Without a warn callback the warning is kept for whoever owns the log.
    chmodSync(path, 0o666);
    const quiet = new AuditLog(path);
    await quiet.append({ kind: 'outcome', id: '0' });
    expect(quiet.warnings).toEqual([`the audit log ${path} was mode 0666; tightened to 0600`]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a partial last line (no newline) is repaired on open: the next line is whole, every line parses, nothing is lost', async () => {
    const root = temp();
    const path = join(root, 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"outcome","id":"1","outc', { mode: 0o600 });
    const seen: string[] = [];
    const log = new AuditLog(path, { warn: (l) => seen.push(l), now: () => Date.UTC(2026, 0, 1) });
    await log.append({ kind: 'intent', id: '2' });
    expect(lines(path)).toEqual([
      { kind: 'intent', id: '1' },
      { ts: '2026-01-01T00:00:00.000Z', kind: 'repair', detail: expect.stringMatching(/partial last line/), partial: '{"kind":"outcome","id":"1","outc' },
      { kind: 'intent', id: '2' },
    ]);
    expect(seen).toEqual([expect.stringMatching(/ended in a partial line \(32 bytes\); it was moved into a repair line$/)]);
    // A log that is all one partial line.
    writeFileSync(path, '{"kind":"int');
    await new AuditLog(path).append({ kind: 'intent', id: '3' });
    expect(lines(path)).toEqual([expect.objectContaining({ kind: 'repair', partial: '{"kind":"int' }), { kind: 'intent', id: '3' }]);
  });
});

describe('the audit log written by two ghostwatch processes at once', () => {
  const appender = new URL('../support/audit-appender.mjs', import.meta.url).pathname;
  const run = (path: string, tag: string) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [appender, path, tag, '300', '3500'], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(err) : reject(new Error(`appender ${tag} exited ${String(code)}: ${err}`))));
    });

  it('keeps every line of both: a line still on its way is not taken for a torn one and cut', async () => {
    const path = join(temp(), 'evictions.jsonl');
    // Lines of 3.5 KiB reach the file a page at a time: the other process reads the first part.
    const warned = await Promise.all([run(path, 'a'), run(path, 'b')]);
    const written = lines(path) as { kind: string; tag?: string; i?: number }[];
    expect(written.filter((l) => l.kind === 'repair')).toEqual([]);
    expect(warned).toEqual(['', '']);
    for (const tag of ['a', 'b']) {
      expect(written.filter((l) => l.tag === tag).map((l) => l.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    }
  }, 30_000);

  it('a line written slowly, a part every 200 ms for 1.4 s, is waited for as long as it grows: never cut', async () => {
    const path = join(temp(), 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind"', { mode: 0o600 });
    const parts = [':"outcome"', ',"id":"1"', ',"outcome"', ':"evicted"', ',"n":1', ',"m":2', '}\n'];
    const seen: string[] = [];
    const appended = new AuditLog(path, { warn: (l) => seen.push(l) }).append({ kind: 'intent', id: '2' });
    for (const part of parts) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      writeFileSync(path, part, { flag: 'a' });
    }
    await appended;
    expect(lines(path)).toEqual([{ kind: 'intent', id: '1' }, { kind: 'outcome', id: '1', outcome: 'evicted', n: 1, m: 2 }, { kind: 'intent', id: '2' }]);
    expect(seen).toEqual([]);
  });

  it('a torn line another process is repairing (its lock held) is left to it; a lock left by the dead is taken over', async () => {
    const path = join(temp(), 'evictions.jsonl');
    const lock = `${path}.repairing`;
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"outc', { mode: 0o600 });
    mkdirSync(lock, { mode: 0o700 });
    const seen: string[] = [];
    const appended = new AuditLog(path, { warn: (l) => seen.push(l) }).append({ kind: 'intent', id: '2' });
    // The other process's repair, after our wait has called the line torn.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"repair","partial":"{\\"kind\\":\\"outc"}\n');
    rmSync(lock, { recursive: true });
    await appended;
    expect(lines(path)).toEqual([{ kind: 'intent', id: '1' }, { kind: 'repair', partial: '{"kind":"outc' }, { kind: 'intent', id: '2' }]);
    expect(seen).toEqual([]);

    // A lock 20 s old: its process died repairing. The repair is ours, and the lock goes with it.
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"outc');
    mkdirSync(lock, { mode: 0o700 });
    utimesSync(lock, new Date(Date.now() - 20_000), new Date(Date.now() - 20_000));
    await new AuditLog(path, { warn: (l) => seen.push(l) }).append({ kind: 'intent', id: '3' });
    expect(lines(path)).toEqual([{ kind: 'intent', id: '1' }, expect.objectContaining({ kind: 'repair', partial: '{"kind":"outc' }), { kind: 'intent', id: '3' }]);
    expect(seen).toEqual([expect.stringMatching(/ended in a partial line \(13 bytes\); it was moved into a repair line$/)]);
    expect(existsSync(lock)).toBe(false);
  });

  it('a torn line is still repaired, once it has stayed torn, and both processes keep every line', async () => {
    const path = join(temp(), 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"outcome","id":"1","outc', { mode: 0o600 });
    const warned = await Promise.all([run(path, 'a'), run(path, 'b')]);
    const written = lines(path) as { kind: string; tag?: string; i?: number; partial?: string }[];
    expect(written.filter((l) => l.kind === 'repair')).toEqual([expect.objectContaining({ partial: '{"kind":"outcome","id":"1","outc' })]);
    expect(warned.join('')).toMatch(/^the audit log .* ended in a partial line \(32 bytes\); it was moved into a repair line\n$/);
    for (const tag of ['a', 'b']) {
      expect(written.filter((l) => l.tag === tag).map((l) => l.i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    }
  }, 30_000);
});

/** A tmpfs of 64 KiB, for filling up (root only). Undefined when it cannot be mounted here. */
function tinyDisk(): string | undefined {
  const dir = temp();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  mounts.push(dir);
  return dir;
}

/** Whether a tmpfs can be mounted here; under CI it must be (a skip there would hide a fault). */
function canMountTmpfs(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'gw-audit-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir]);
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error('CI: cannot mount a tmpfs, and the full-disk tests need one (run as root)');
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler'), 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

describe('audit log on a full disk', () => {
  const maybe = canMountTmpfs() ? it : it.skip;

  maybe('a short write leaves no partial line: the append fails and the log ends as it was', async () => {
    const disk = tinyDisk()!;
    const path = join(disk, 'evictions.jsonl');
    const first = `${JSON.stringify({ kind: 'intent', id: '0', pad: 'x'.repeat(4000) })}\n`;
    writeFileSync(path, first, { mode: 0o600 });
    fill(disk);
    const log = new AuditLog(path);
    await expect(log.append({ kind: 'intent', id: '1', pad: 'y'.repeat(500) })).rejects.toThrow(/short write \(\d+ of \d+ bytes/);
    expect(readFileSync(path, 'utf8')).toBe(first);
    await expect(log.append({ kind: 'intent', id: '2', pad: 'z'.repeat(500) })).rejects.toThrow(/short write|ENOSPC/);
    rmSync(join(disk, 'filler'));
    await log.append({ kind: 'intent', id: '3' });
    expect(lines(path)).toEqual([expect.objectContaining({ id: '0' }), { kind: 'intent', id: '3' }]);
  });

  maybe('no eviction is sent when its intent line could not be written', async () => {
    const root = temp();
    const sessions = join(root, 'sessions');
    mkdirSync(sessions);
    const pid = await deadPid();
    const session = join(sessions, `${pid}.json`);
    writeFileSync(session, JSON.stringify({ pid, sessionId: 'ghost-1', cwd: '/w', startedAt: 1, kind: 'interactive', pad: 'p'.repeat(600) }));
    const disk = tinyDisk()!;
    const path = join(disk, 'evictions.jsonl');
    const first = `${JSON.stringify({ kind: 'intent', id: '0', pad: 'x'.repeat(4000) })}\n`;
    writeFileSync(path, first, { mode: 0o600 });
    fill(disk);
    const trash = join(root, 'trash');
    const source = new FileSource({ name: 'claude', dir: sessions, accept: (n) => n.endsWith('.json'), parse: parseClaudeSession, host: HOST, trashDir: trash });
    const engine = engineFor([source], { auditLogPath: path });
    const ghost = await until(() => engine.getSnapshot().findings.find((f) => f.id === 'ghost-1' && f.verdict === 'ghost'), 5000, 'ghost seen');
    const result = await engine.evict({ selection: [ghost], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/^cannot write the audit log .*short write/) });
    expect(existsSync(session)).toBe(true);
    expect(existsSync(trash) ? readdirSync(trash) : []).toEqual([]);
    expect(readFileSync(path, 'utf8')).toBe(first);
  });
});

const TS = Date.UTC(2026, 0, 1);

describe('the audit log: the start-up check, a FIFO, long partial lines, errors in one line', () => {
  it('the start-up check of a log that does not exist: no warnings, nothing created', async () => {
    const path = join(tempDir(), 'state', 'evictions.jsonl');
    const log = new AuditLog(path);
    await expect(log.check()).resolves.toEqual([]);
    expect(existsSync(path)).toBe(false);
  });

  it('the start-up check of a loose log: tightened, the warning returned (and kept when there is no warn callback)', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent"}\n', { mode: 0o644 });
    const log = new AuditLog(path);
    const found = await log.check();
    expect(found).toEqual([`the audit log ${path} was mode 0644; tightened to 0600`]);
    expect(log.warnings).toEqual(found);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe('{"kind":"intent"}\n');
  });

  it('a log that is not a regular file (a FIFO) is refused, in one line naming it', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    execFileSync('mkfifo', ['-m', '600', path]);
    const log = new AuditLog(path);
    const err = await log.append({ kind: 'intent' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnsafePath);
    expect(auditError(err)).toBe(`the audit log ${path} is not a regular file; refusing to write to it`);
    await expect(log.check()).rejects.toThrow('is not a regular file');
  });

  it('a partial last line longer than 1 MiB is ended where it is, with a repair line after it, and the next line is whole', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const huge = `{"kind":"intent","pad":"${'x'.repeat((1 << 20) + 10)}`;
    writeFileSync(path, huge, { mode: 0o600 });
    const seen: string[] = [];
    const log = new AuditLog(path, { warn: (l) => seen.push(l), now: () => TS });
    await log.append({ kind: 'intent', id: '2' });
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(huge)).toBe(true);
    expect(text.slice(huge.length).split('\n')).toEqual([
      '',
      JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', kind: 'repair', detail: 'the line before this one is partial (longer than 1048576 bytes); it was ended here' }),
      JSON.stringify({ kind: 'intent', id: '2' }),
      '',
    ]);
    expect(seen).toEqual([`the audit log ${path} ended in a partial line too long to keep; it was ended with a newline`]);
    expect(log.warnings).toEqual([]);
  });

  it('a partial line after whole ones, within the window: cut off into a repair line, the warning exact', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent","id":"1"}\n{"kind":"outc', { mode: 0o600 });
    const log = new AuditLog(path, { now: () => TS });
    await log.append({ kind: 'intent', id: '2' });
    expect(readFileSync(path, 'utf8')).toBe(
      [
        '{"kind":"intent","id":"1"}',
        JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', kind: 'repair', detail: 'a partial last line was found (an append cut short); it is kept here, not as a line of its own', partial: '{"kind":"outc' }),
        '{"kind":"intent","id":"2"}',
        '',
      ].join('\n'),
    );
    expect(log.warnings).toEqual([`the audit log ${path} ended in a partial line (13 bytes); it was moved into a repair line`]);
  });

  it('a log over 1 MiB whose partial last line is short: only that line is moved into a repair line', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const whole = `${JSON.stringify({ kind: 'intent', pad: 'x'.repeat(1 << 20) })}\n`;
    writeFileSync(path, `${whole}{"kind":"outc`, { mode: 0o600 });
    const log = new AuditLog(path, { now: () => TS });
    await log.append({ kind: 'intent', id: '2' });
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(whole)).toBe(true);
    expect(text.slice(whole.length).split('\n')).toEqual([
      JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', kind: 'repair', detail: 'a partial last line was found (an append cut short); it is kept here, not as a line of its own', partial: '{"kind":"outc' }),
      JSON.stringify({ kind: 'intent', id: '2' }),
      '',
    ]);
  });

  it('a partial line of exactly 1 MiB, alone in the log: still within the window, moved whole into a repair line', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const partial = `{"kind":"intent","pad":"${'x'.repeat((1 << 20) - 24)}`;
    expect(Buffer.byteLength(partial)).toBe(1 << 20);
    writeFileSync(path, partial, { mode: 0o600 });
    const log = new AuditLog(path, { now: () => TS });
    await log.append({ kind: 'intent', id: '2' });
    const [repair, next, end, ...rest] = readFileSync(path, 'utf8').split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(repair!)).toEqual({ ts: '2026-01-01T00:00:00.000Z', kind: 'repair', detail: 'a partial last line was found (an append cut short); it is kept here, not as a line of its own', partial });
    expect([next, end]).toEqual([JSON.stringify({ kind: 'intent', id: '2' }), '']);
    expect(log.warnings).toEqual([`the audit log ${path} ended in a partial line (${1 << 20} bytes); it was moved into a repair line`]);
  });

  it('a partial line one byte short of 1 MiB after whole ones: its newline is the first byte looked at, and it is moved whole into a repair line', async () => {
    const path = join(tempDir(), 'evictions.jsonl');
    const whole = `${JSON.stringify({ kind: 'intent', id: '1' })}\n`;
    const partial = `{"kind":"intent","pad":"${'x'.repeat((1 << 20) - 25)}`;
    expect(Buffer.byteLength(partial)).toBe((1 << 20) - 1);
    writeFileSync(path, `${whole}${partial}`, { mode: 0o600 });
    const log = new AuditLog(path, { now: () => TS });
    await log.append({ kind: 'intent', id: '2' });
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(whole)).toBe(true);
    const [repair, next, end, ...rest] = text.slice(whole.length).split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(repair!)).toMatchObject({ kind: 'repair', partial });
    expect([next, end]).toEqual([JSON.stringify({ kind: 'intent', id: '2' }), '']);
    expect(log.warnings).toEqual([`the audit log ${path} ended in a partial line (${(1 << 20) - 1} bytes); it was moved into a repair line`]);
  });

  it('a log path that is a directory: the error as the OS says it, not called a symbolic link', async () => {
    const path = tempDir();
    const err = await new AuditLog(path).append({ kind: 'intent' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(UnsafePath);
    expect(auditError(err)).toMatch(/^EISDIR: illegal operation on a directory/);
  });

  it('auditError: the first line of an error, a thrown non-error as text, an UnsafePath message whole (its control characters made visible)', () => {
    expect(auditError(new Error('EACCES: permission denied, open x\n    at open'))).toBe('EACCES: permission denied, open x');
    expect(auditError('plain words')).toBe('plain words');
    expect(auditError(new UnsafePath('the audit log /a\nb is a symbolic link'))).toBe('the audit log /a^Jb is a symbolic link');
  });
});

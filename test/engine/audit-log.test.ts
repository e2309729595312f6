// Where the audit log lives and how it is written: appended, one JSON object a line, private;
// never through a symlink, tightened when loose, whole lines only (a partial one is repaired on
// open, a short write on a full disk leaves nothing), and no eviction without its intent on disk.
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, auditError, defaultAuditLogPath } from '../../src/engine/audit-log.js';
import { parseClaudeSession } from '../../src/sources/claude/formats.js';
import { FileSource } from '../../src/sources/claude/index.js';
import { deadPid, engineFor, HOST, until } from './helpers.js';

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

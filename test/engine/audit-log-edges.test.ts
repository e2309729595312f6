// The audit log's edges: the start-up check of a log that is not there creates nothing; a log
// that is not a regular file (a FIFO) is refused in one line; a partial last line too long to
// keep is ended where it is and noted; an error is reported in one line.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog, auditError } from '../../src/engine/audit-log.js';
import { UnsafePath } from '../../src/os/safe-file.js';
import { tempDir } from './helpers.js';

const TS = Date.UTC(2026, 0, 1);

describe('audit log edges', () => {
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

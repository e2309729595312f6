// Where the audit log lives and how it is written: appended, one JSON object a line, private.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog, defaultAuditLogPath } from '../../src/engine/audit-log.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('audit log', () => {
  it('lives under $XDG_STATE_HOME, else ~/.local/state (a relative XDG_STATE_HOME is ignored)', () => {
    expect(defaultAuditLogPath({ XDG_STATE_HOME: '/var/st' }, '/home/u')).toBe('/var/st/ghostwatch/evictions.jsonl');
    expect(defaultAuditLogPath({}, '/home/u')).toBe('/home/u/.local/state/ghostwatch/evictions.jsonl');
    expect(defaultAuditLogPath({ XDG_STATE_HOME: 'rel' }, '/home/u')).toBe('/home/u/.local/state/ghostwatch/evictions.jsonl');
  });

  it('creates 0700 directories and a 0600 file, and appends without rewriting', async () => {
    const root = mkdtempSync(join(tmpdir(), 'gw-audit-'));
    dirs.push(root);
    const path = join(root, 'a', 'b', 'evictions.jsonl');
    const log = new AuditLog(path);
    await log.append({ kind: 'intent', id: '1' });
    await log.append({ kind: 'outcome', id: '1', outcome: 'evicted' });
    expect(readFileSync(path, 'utf8')).toBe('{"kind":"intent","id":"1"}\n{"kind":"outcome","id":"1","outcome":"evicted"}\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'a', 'b')).mode & 0o777).toBe(0o700);
  });
});

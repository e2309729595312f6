// What the audit log check finds on start (a looser mode tightened, a partial line repaired)
// reaches the person: in the engine's snapshot, which the status line and `reap` show.
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { engineFor, tempDir, until } from './helpers.js';

describe('audit log notices', () => {
  it('a world-readable audit log is tightened on start, and the snapshot says so', async () => {
    const dir = join(tempDir(), 'audit');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent"}\n');
    chmodSync(path, 0o644);
    const engine = engineFor([], { auditLogPath: path });
    const notices = await until(() => engine.getSnapshot().os.notices, 3000, 'a notice');
    expect(notices.join('\n')).toMatch(/0?644|permission|tighten/i);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('a healthy audit log gives no notice', async () => {
    const dir = join(tempDir(), 'audit');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, 'evictions.jsonl');
    writeFileSync(path, '{"kind":"intent"}\n', { mode: 0o600 });
    const engine = engineFor([], { auditLogPath: path });
    await new Promise((r) => setTimeout(r, 300));
    expect(engine.getSnapshot().os.notices).toBeUndefined();
  });
});

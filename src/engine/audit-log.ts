// The eviction audit log: JSONL, appended and synced, never rewritten. An intent line is on disk
// before anything is sent, so nothing evicted is ever lost (design.md, "Rules that protect users").
// The file holds full registry entries (paths, ids), hence 0600 inside a 0700 directory.

import { mkdir, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ghostwatchStateDir } from '../os/state-dir.js';

/** $XDG_STATE_HOME/ghostwatch/evictions.jsonl (see ghostwatchStateDir). */
export function defaultAuditLogPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(ghostwatchStateDir(env, home), 'evictions.jsonl');
}

export class AuditLog {
  constructor(readonly path: string) {}

  /** Resolves once the line is durably appended; rejects with why it could not be. */
  async append(record: Readonly<Record<string, unknown>>): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const file = await open(this.path, 'a', 0o600);
    try {
      const { bytesWritten } = await file.write(line);
      if (bytesWritten !== line.length) throw new Error(`short write (${bytesWritten} of ${line.length} bytes)`);
      await file.datasync();
    } finally {
      await file.close();
    }
  }
}

/** One line for a failed append, e.g. "ENOTDIR: not a directory, mkdir '/x/y'". */
export function auditError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}

// The eviction audit log: JSONL, appended and synced, never rewritten. An intent line is on disk
// before anything is sent, so nothing evicted is ever lost (design.md, "Rules that protect users").
// The file holds full registry entries (paths, ids), hence 0600 inside a 0700 directory.
//
// Each line goes down in one write(2) on an O_APPEND descriptor. A write that lands only in part
// (a full disk) is taken back at once, and a partial last line left by a crash is repaired when
// the log is next opened: it is cut off and kept, as text, in a `repair` line, so every line of the
// log parses and the next line starts on a line of its own. The log is never written through a
// symlink (O_NOFOLLOW) nor into another user's file (its tail is read back and rewritten), and a
// log of ours found readable by others is tightened to 0600, with a warning.
//
// Another ghostwatch (a second pane, a cron `reap`) may append to the same log at the same moment,
// and a line of a few KiB reaches the file a page at a time: its first part can be read back
// before the rest is there. So a last line without its newline is cut off only once it has stayed
// so, the file's size unchanged, for TORN_AFTER_MS; a line that is still being written ends with
// its newline well before that and is left alone. One process repairs it (a lock directory beside
// the log); the others wait for its repair line as for any line. Appends take no lock (Node has no
// portable file lock), so what remains is a torn line (a crash) repaired in the very microseconds
// another process appends.

import { constants } from 'node:fs';
import { mkdir, open, rmdir, type FileHandle } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { sanitize } from '../core/sanitize.js';
import { lstatIfAny, octal, ourUid, UnsafePath, whyNotOurs } from '../os/safe-file.js';
import { ghostwatchStateDir } from '../os/state-dir.js';

/** $XDG_STATE_HOME/ghostwatch/evictions.jsonl (see ghostwatchStateDir). */
export function defaultAuditLogPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(ghostwatchStateDir(env, home), 'evictions.jsonl');
}

/** How far back from the end a partial last line is looked for (longer ones are skipped, not cut). */
const REPAIR_WINDOW = 1 << 20;

const OPEN_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface AuditLogOptions {
  /** Where warnings go (a looser mode tightened, a partial line repaired); else they collect in `warnings`. */
  readonly warn?: (line: string) => void;
  readonly now?: () => number;
}

/**
 * How long a last line must stay without its newline, the size unchanged, before it is called
 * torn: far longer than a write(2) of a line takes, even paused by the kernel's writeback
 * throttle (≤ 200 ms).
 */
const TORN_AFTER_MS = 1_000;
/** How often a last line without its newline is looked at again while it may still be written. */
const TORN_POLL_MS = 20;

export class AuditLog {
  /** Warnings not given to `warn` (none was), oldest first. */
  readonly warnings: string[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly path: string,
    private readonly opts: AuditLogOptions = {},
  ) {}

  /**
   * The start-up look at an existing log: refuses a symlink (rejects with UnsafePath), tightens a
   * looser mode, repairs a partial last line. Creates nothing. Resolves with the warnings.
   */
  check(): Promise<string[]> {
    return this.serial(async () => {
      if (!(await lstatIfAny(this.path))) return [];
      const found: string[] = [];
      const file = await this.openChecked(found);
      await file.close();
      return found;
    });
  }

  /** Resolves once the line is durably appended; rejects with why it could not be (nothing half-written stays). */
  append(record: Readonly<Record<string, unknown>>): Promise<void> {
    return this.serial(async () => {
      const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      const file = await this.openChecked([]);
      try {
        await writeLine(file, line);
        await file.datasync();
      } finally {
        await file.close();
      }
    });
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private say(line: string, found: string[]): void {
    const text = sanitize(line, 300);
    found.push(text);
    if (this.opts.warn) this.opts.warn(text);
    else this.warnings.push(text);
  }

  /** The log, opened for appending: a regular file of ours, 0600, ending in a whole line. */
  private async openChecked(found: string[]): Promise<FileHandle> {
    let file: FileHandle;
    try {
      file = await open(this.path, OPEN_FLAGS, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafePath(`the audit log ${this.path} is a symbolic link ghostwatch did not make; refusing to write through it`);
      throw err;
    }
    try {
      const s = await file.stat();
      if (!s.isFile()) throw new UnsafePath(`the audit log ${this.path} is not a regular file; refusing to write to it`);
      if (s.uid !== ourUid()) throw new UnsafePath(`${whyNotOurs(s, `the audit log ${this.path}`)}; refusing to write to it`);
      if ((s.mode & 0o077) !== 0) {
        await file.chmod(0o600);
        this.say(`the audit log ${this.path} was mode ${octal(s.mode)}; tightened to 0600`, found);
      }
      if (s.size > 0) await this.repairTail(file, s.size, found);
      return file;
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  /**
   * The size at which the log ends in a torn line: one without its newline that stayed so, the
   * size unchanged, for TORN_AFTER_MS. Undefined when it ends in a whole line (at once, or once
   * another process's line is all there).
   */
  private async tornAt(file: FileHandle, size: number): Promise<number | undefined> {
    let waited = 0;
    for (;;) {
      if (size === 0 || (await lastByte(file, size)) === 0x0a) return undefined;
      if (waited >= TORN_AFTER_MS) return size;
      await new Promise((resolve) => setTimeout(resolve, TORN_POLL_MS));
      const now = (await file.stat()).size;
      waited = now === size ? waited + TORN_POLL_MS : 0;
      size = now;
    }
  }

  /** A torn last line: cut off and kept, as text, in a repair line of its own, by one process alone. */
  private async repairTail(file: FileHandle, seen: number, found: string[]): Promise<void> {
    // Past this, the lock is neither released nor stale (not a directory of ours): no line is appended.
    const giveUpAt = Date.now() + STALE_LOCK_MS + 2 * TORN_AFTER_MS;
    for (let size = await this.tornAt(file, seen); size !== undefined; size = await this.tornAt(file, (await file.stat()).size)) {
      // Another process repairs it (its repair line is on its way, like any line), or wrote since: look again.
      if (!(await takeLock(this.repairLock))) {
        if (Date.now() > giveUpAt) throw new UnsafePath(`the audit log ${this.path} ends in a torn line, and ${this.repairLock} keeps it from being repaired; remove it if no ghostwatch is running`);
        continue;
      }
      try {
        if ((await file.stat()).size === size && (await lastByte(file, size)) !== 0x0a) return await this.repair(file, size, found);
      } finally {
        await rmdir(this.repairLock).catch(() => undefined);
      }
    }
  }

  /** Held, as a directory beside the log, by the one process repairing its torn line. */
  private get repairLock(): string {
    return `${this.path}.repairing`;
  }

  private async repair(file: FileHandle, size: number, found: string[]): Promise<void> {
    const span = Math.min(size, REPAIR_WINDOW);
    const tail = Buffer.alloc(span);
    const { bytesRead } = await file.read(tail, 0, span, size - span);
    const nl = tail.subarray(0, bytesRead).lastIndexOf(0x0a);
    const ts = new Date((this.opts.now ?? Date.now)()).toISOString();
    if (nl < 0 && size > span) {
      // Longer than anything ghostwatch writes: end it where it is, note it, and go on.
      await writeLine(file, Buffer.from(`\n${JSON.stringify({ ts, kind: 'repair', detail: `the line before this one is partial (longer than ${REPAIR_WINDOW} bytes); it was ended here` })}\n`));
      await file.datasync();
      this.say(`the audit log ${this.path} ended in a partial line too long to keep; it was ended with a newline`, found);
      return;
    }
    const start = size - span + nl + 1;
    const partial = tail.subarray(nl + 1, bytesRead).toString('utf8');
    await file.truncate(start);
    const repair = { ts, kind: 'repair', detail: 'a partial last line was found (an append cut short); it is kept here, not as a line of its own', partial };
    await writeLine(file, Buffer.from(`${JSON.stringify(repair)}\n`, 'utf8'));
    await file.datasync();
    this.say(`the audit log ${this.path} ended in a partial line (${size - start} bytes); it was moved into a repair line`, found);
  }
}

/** A repair lock older than this was left by a process that died repairing (a repair takes milliseconds). */
const STALE_LOCK_MS = 10_000;

/** Takes the lock (a new directory), or says another process holds it; one left by the dead is taken over. */
async function takeLock(path: string): Promise<boolean> {
  try {
    await mkdir(path, { mode: 0o700 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const held = await lstatIfAny(path);
  if (held?.isDirectory() && Date.now() - held.mtimeMs > STALE_LOCK_MS && (await rmdir(path).then(() => true, () => false))) return takeLock(path);
  return false;
}

/** The byte at size - 1 (0 when the file is shorter by now: not a newline, so it is looked at again). */
async function lastByte(file: FileHandle, size: number): Promise<number | undefined> {
  const last = Buffer.alloc(1);
  await file.read(last, 0, 1, size - 1);
  return last[0];
}

/** One write(2) of the whole line; a write that lands in part is taken back, so no partial line stays. */
async function writeLine(file: FileHandle, line: Buffer): Promise<void> {
  const start = (await file.stat()).size;
  const { bytesWritten } = await file.write(line, 0, line.length);
  if (bytesWritten === line.length) return;
  // Cut back to where it was, unless another writer appended meanwhile (the next open repairs that).
  try {
    if ((await file.stat()).size === start + bytesWritten) await file.truncate(start);
  } catch {
    // Left for the repair on the next open.
  }
  throw new Error(`short write (${bytesWritten} of ${line.length} bytes, is the disk full?); nothing of it was kept`);
}

/** One line for a failed append, e.g. "ENOTDIR: not a directory, mkdir '/x/y'". */
export function auditError(err: unknown): string {
  if (err instanceof UnsafePath) return sanitize(err.message, 300);
  const text = err instanceof Error ? err.message : String(err);
  return sanitize(text.split('\n')[0] ?? text, 300);
}

/** Who runs ghostwatch, for the actor an audit line names. */
export function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    // No passwd entry (some containers): the uid still says who.
    return process.env.USER ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}

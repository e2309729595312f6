// One directory of JSON files, watched (inotify/FSEvents through fs.watch), not rescanned on a
// timer. A change event leads to one rescan that reads only the files whose inode, size or
// mtime moved. A file that fails to parse is read once more a moment later (a writer may be
// half-way through) before it becomes a warning; until then, and after, its last good reading
// stands. A file that vanishes mid-read is simply gone. A missing directory is "absent" and is
// looked for every few seconds, the only polling there is.
//
// Only regular files are read: a symlink is not followed (it could lead anywhere out of the
// folder; lstat, then O_NOFOLLOW) and is a warning. The files are small JSON objects, so one
// larger than `maxBytes` is a warning too and is not read: its size is learnt from fstat, and
// no more than `maxBytes + 1` bytes of any file are ever read.

import { constants, watch, type FSWatcher } from 'node:fs';
import { lstat, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileStamp } from '../trash.js';

export interface FileReading<T> {
  readonly name: string;
  readonly path: string;
  readonly stamp: string;
  readonly mtimeMs: number;
  /** The last good parse of this file (possibly of an earlier version of it). */
  readonly value: T | undefined;
  /** Why the current version does not parse, once it failed twice. */
  readonly warning: string | undefined;
}

export interface WatchedDirOptions<T> {
  readonly dir: string;
  readonly accept: (name: string) => boolean;
  /** Throws an Error whose message says what is wrong (one line). */
  readonly parse: (text: string, name: string) => T;
  /** Called after a rescan that changed what files() returns, or the directory's presence. */
  readonly onChange: () => void;
  readonly retryMs?: number;
  readonly absentPollMs?: number;
  readonly debounceMs?: number;
  /** A file larger than this is not read (default 1 MiB: the session files are small JSON objects). */
  readonly maxBytes?: number;
}

export const DEFAULT_MAX_FILE_BYTES = 1 << 20;

/** What one bounded read found: the text, or why there is none. */
type Read = { readonly text: string; readonly stamp: string; readonly mtimeMs: number } | { readonly skip: 'gone' | 'symlink' | { readonly tooLarge: number; readonly stamp: string; readonly mtimeMs: number } };

export class WatchedDir<T> {
  private readonly opts: Required<WatchedDirOptions<T>>;
  private readings = new Map<string, FileReading<T>>();
  private watcher: FSWatcher | undefined;
  private absentTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Stamps that failed to parse once: the next failure of the same stamp becomes a warning. */
  private readonly failedOnce = new Set<string>();
  private scanning: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  present: boolean | undefined;
  /** Why the directory itself cannot be read (not ENOENT), one line. */
  error: string | undefined;
  /** Bytes of file content read so far (a debug counter: what the bound on reads is measured by). */
  bytesRead = 0;

  constructor(options: WatchedDirOptions<T>) {
    this.opts = { retryMs: 200, absentPollMs: 2_000, debounceMs: 20, maxBytes: DEFAULT_MAX_FILE_BYTES, ...options };
  }

  files(): ReadonlyMap<string, FileReading<T>> {
    return this.readings;
  }

  /** The first scan; a file that failed to parse is given its second read before this resolves. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.rescan();
    if (this.retryTimer) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
      await new Promise((resolve) => setTimeout(resolve, this.opts.retryMs));
      await this.rescan();
    }
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    for (const t of [this.absentTimer, this.debounceTimer, this.retryTimer]) if (t) clearTimeout(t);
    this.absentTimer = this.debounceTimer = this.retryTimer = undefined;
  }

  /** Read what changed; concurrent calls share one scan and ask for one more after it. */
  rescan(): Promise<void> {
    if (this.scanning) {
      this.again = true;
      return this.scanning;
    }
    this.scanning = (async () => {
      do {
        this.again = false;
        await this.scanOnce();
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.scanning = undefined;
    });
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.opts.dir)).filter(this.opts.accept);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      this.goneDir(code === 'ENOENT' || code === 'ENOTDIR' ? undefined : `${this.opts.dir}: cannot read it (${code ?? (error as Error).message})`);
      return;
    }
    if (this.stopped) return;
    const wasPresent = this.present;
    this.present = true;
    this.error = undefined;
    if (this.absentTimer) clearInterval(this.absentTimer);
    this.absentTimer = undefined;
    this.ensureWatcher();

    let changed = wasPresent !== true;
    let retry = false;
    const next = new Map<string, FileReading<T>>();
    for (const name of names.sort()) {
      const path = join(this.opts.dir, name);
      const old = this.readings.get(name);
      const read = await this.readOne(name, path, old);
      if (read === 'gone') continue;
      if (read === 'retry') retry = true;
      const reading = read === 'retry' ? old : read;
      if (!reading) continue;
      next.set(name, reading);
      if (reading !== old) changed = true;
    }
    if (next.size !== this.readings.size) changed = true;
    this.readings = next;
    if (retry && !this.retryTimer && !this.stopped) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        void this.rescan();
      }, this.opts.retryMs);
    }
    if (changed && !this.stopped) this.opts.onChange();
  }

  /** The file's reading: unchanged (the old object), a new one, 'retry' (a first parse failure), or 'gone'. */
  private async readOne(name: string, path: string, old: FileReading<T> | undefined): Promise<FileReading<T> | 'retry' | 'gone'> {
    let read: Read;
    try {
      read = await this.readBounded(path, old?.stamp);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'gone';
      return { name, path, stamp: 'unreadable', mtimeMs: 0, value: old?.value, warning: `${name}: cannot read it (${code ?? (error as Error).message})` };
    }
    if ('skip' in read) {
      if (read.skip === 'gone') return 'gone';
      if (read.skip === 'symlink') {
        const warning = `${name}: a symbolic link, not followed (a session file is a regular file in the folder)`;
        return old?.stamp === 'symlink' ? old : { name, path, stamp: 'symlink', mtimeMs: 0, value: undefined, warning };
      }
      const { tooLarge, stamp, mtimeMs } = read.skip;
      if (old && old.stamp === stamp) return old;
      const warning = `${name}: too large for a session file (${tooLarge} bytes, over ${this.opts.maxBytes}); not read`;
      return { name, path, stamp, mtimeMs, value: undefined, warning };
    }
    const { text, stamp, mtimeMs } = read;
    if (old && old.stamp === stamp) return old;
    try {
      const value = this.opts.parse(text, name);
      this.failedOnce.delete(stamp);
      return { name, path, stamp, mtimeMs, value, warning: undefined };
    } catch (error) {
      if (!this.failedOnce.has(stamp)) {
        this.failedOnce.add(stamp);
        return 'retry';
      }
      return { name, path, stamp, mtimeMs, value: old?.value, warning: `${name}: ${(error as Error).message}` };
    }
  }

  /**
   * A regular file's text, read through a descriptor opened O_NOFOLLOW|O_NONBLOCK (no symlink, no
   * blocking on a FIFO) and stamped by that descriptor's fstat; at most maxBytes + 1 bytes are read.
   * Nothing is read when the stamp is `known` (unchanged since the last read).
   */
  private async readBounded(path: string, known: string | undefined): Promise<Read> {
    const l = await lstat(path);
    if (l.isSymbolicLink()) return { skip: 'symlink' };
    if (!l.isFile()) return { skip: 'gone' };
    // Unchanged since the last read (same inode, size and mtime): not opened again. A rescan of a
    // folder of 1,000 records where one changed costs one lstat for each of the others.
    const seen = fileStamp(l);
    if (seen === known) return { text: '', stamp: seen, mtimeMs: l.mtimeMs };
    let file;
    try {
      file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      // Swapped for a symlink between the lstat and the open.
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') return { skip: 'symlink' };
      throw error;
    }
    try {
      const s = await file.stat();
      if (!s.isFile()) return { skip: 'gone' };
      const stamp = fileStamp(s);
      const max = this.opts.maxBytes;
      if (s.size > max) return { skip: { tooLarge: s.size, stamp, mtimeMs: s.mtimeMs } };
      if (stamp === known) return { text: '', stamp, mtimeMs: s.mtimeMs };
      const buf = Buffer.alloc(Math.min(s.size, max) + 1);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await file.read(buf, got, buf.length - got, got);
        if (bytesRead === 0) break;
        got += bytesRead;
        this.bytesRead += bytesRead;
      }
      // Grown past the bound since the fstat: too large all the same.
      if (got > max) return { skip: { tooLarge: got, stamp, mtimeMs: s.mtimeMs } };
      return { text: buf.subarray(0, got).toString('utf8'), stamp, mtimeMs: s.mtimeMs };
    } finally {
      await file.close();
    }
  }

  private ensureWatcher(): void {
    if (this.watcher || this.stopped) return;
    try {
      this.watcher = watch(this.opts.dir, { persistent: false }, (_event, filename) => {
        if (filename !== null && !this.opts.accept(String(filename)) && filename !== '') {
          // Another file in a shared directory (~/.claude holds much more than ours).
          return;
        }
        this.scheduleRescan();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
        this.scheduleRescan();
      });
    } catch (error) {
      this.error = `${this.opts.dir}: cannot watch it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
  }

  private scheduleRescan(): void {
    if (this.debounceTimer || this.stopped) return;
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      void this.rescan();
    }, this.opts.debounceMs);
  }

  /** The directory is not there (or not readable): drop its files, look for it now and then. */
  private goneDir(error: string | undefined): void {
    this.watcher?.close();
    this.watcher = undefined;
    const changed = this.present !== false || this.readings.size > 0 || this.error !== error;
    this.present = false;
    this.error = error;
    this.readings = new Map();
    if (!this.absentTimer && !this.stopped) {
      this.absentTimer = setInterval(() => {
        stat(this.opts.dir).then(
          () => void this.rescan(),
          () => undefined,
        );
      }, this.opts.absentPollMs);
      this.absentTimer.unref?.();
    }
    if (changed && !this.stopped) this.opts.onChange();
  }
}

// One directory of JSON files, watched (inotify/FSEvents through fs.watch), not rescanned on a
// timer. A change event leads to one rescan that reads only the files whose inode, size or
// mtime moved. A file that fails to parse is read once more a moment later (a writer may be
// half-way through) before it becomes a warning; until then, and after, its last good reading
// stands. A file that vanishes mid-read is simply gone. A missing directory is "absent" and is
// looked for every few seconds, the only polling there is.

import { watch, type FSWatcher } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
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
}

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

  constructor(options: WatchedDirOptions<T>) {
    this.opts = { retryMs: 200, absentPollMs: 2_000, debounceMs: 20, ...options };
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
    let stamp: string;
    let mtimeMs: number;
    let text: string;
    try {
      const s = await stat(path);
      if (!s.isFile()) return 'gone';
      stamp = fileStamp(s);
      mtimeMs = s.mtimeMs;
      if (old && old.stamp === stamp) return old;
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'gone';
      return { name, path, stamp: 'unreadable', mtimeMs: 0, value: old?.value, warning: `${name}: cannot read it (${code ?? (error as Error).message})` };
    }
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

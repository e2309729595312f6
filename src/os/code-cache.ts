// Loading the bundle's files with V8's code cache (Node 20 has no module compile cache; 22 does,
// for ES modules only). Each file of dist/bundle/ is an async function expression (scripts/
// bundle.mjs wraps it: no import statements, its exports returned), compiled with vm.Script and
// the cached data of an earlier run: V8 then skips parsing and compiling what that run compiled,
// the functions it called included. The data is V8's own; what we add is the check that it
// belongs to this very file under this very Node and V8 flags, and where it lives.
//
// - Cache files: $XDG_CACHE_HOME/ghostwatch/code/<name>.v8 (~/.cache by default), folder 0700.
//   Each starts with one line, the key: the build's hash of the file (its first line, written by
//   the bundler), the file's size and mtime, Node's and V8's versions, the platform and arch and
//   the V8 flags given. Any difference, or V8 refusing the data (cachedDataRejected), and the
//   file compiles from source as it would without a cache; the data is made anew.
// - Made once per miss, after the code has run: at exit, or `settleMs` after the load (a monitor
//   runs for hours; its cache should hold what start-up compiled, not everything since), with
//   script.createCachedData(), written atomically (temp file + rename, 0600).
// - Read only as a regular file, never through a symlink, bounded. Every failure to read or write
//   is silent: the cache only ever saves time.
import { fstatSync, openSync, closeSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { ownFolderSync, readBoundedSync, writeFileAtomicSync } from './safe-file.js';
import { ghostwatchCacheDir } from './state-dir.js';

/** The bundler's first line of every wrapped file: `//gw-build <hash>`. */
export const BUILD_HASH_PREFIX = '//gw-build ';
const MAGIC = 'ghostwatch-v8-cache-1';
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

export type ChunkExports = Record<string, unknown>;
/** Loads one file of the bundle by its name (`main`, `monitor`, ...) and resolves with its exports. */
export type ChunkLoad = (name: string) => Promise<ChunkExports>;

export interface ChunkLoaderOptions {
  /** The folder of the wrapped files (dist/bundle). */
  readonly dir: string;
  /** Where the cached data goes; undefined: no cache (compiled from source every time). */
  readonly cacheDir: string | undefined;
  /**
   * V8 flags for every file after the first one loaded (the dispatcher, main): set with
   * v8.setFlagsFromString just before the second file compiles, and part of the keys of the
   * files loaded from then on. A run that loads only the first file (a status line, --version)
   * never loads node:v8 (~2 ms of its start).
   */
  readonly flags?: readonly string[];
  /** Node's createRequire; the launcher gives Module.createRequire, so node:module is not loaded. */
  readonly createRequire?: (path: string) => NodeJS.Require;
  /** Milliseconds after a load at which its data is made, if the process still runs. */
  readonly settleMs?: number;
  /** What happened to each load (tests, benches): `hit`, `miss`, `rejected`, `written`, `write-failed`. */
  readonly onEvent?: (name: string, event: CacheEvent) => void;
}

export type CacheEvent = 'hit' | 'miss' | 'rejected' | 'written' | 'write-failed';

/** $XDG_CACHE_HOME/ghostwatch/code (a relative XDG_CACHE_HOME is ignored, per the XDG spec); undefined without a home. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env, home: () => string = homedir): string | undefined {
  const dir = ghostwatchCacheDir(env, home);
  return dir === undefined ? undefined : join(dir, 'code');
}

/** The key a file's cached data must carry: what makes V8's data and this source belong together. */
export function cacheKey(source: string, size: number, mtimeMs: number, flags: readonly string[]): string {
  const firstLine = source.slice(0, source.indexOf('\n') >>> 0);
  const hash = firstLine.startsWith(BUILD_HASH_PREFIX) ? firstLine.slice(BUILD_HASH_PREFIX.length).trim() : 'unhashed';
  // JSON: one line whatever the flags hold.
  return JSON.stringify([MAGIC, hash, size, Math.trunc(mtimeMs), process.version, process.versions.v8, process.platform, process.arch, process.execArgv, flags]);
}

/** The cached data stored under `path` for `key`, or undefined (none, another key, unsafe, unreadable). */
export function readCachedData(path: string, key: string): Buffer | undefined {
  try {
    const bytes = readBoundedSync(path, MAX_CACHE_BYTES, { noFollow: true });
    const header = Buffer.from(`${key}\n`, 'utf8');
    if (bytes.length <= header.length || !bytes.subarray(0, header.length).equals(header)) return undefined;
    return bytes.subarray(header.length);
  } catch {
    return undefined;
  }
}

/** Stores `data` under `path` for `key`, atomically; the folder is made 0700 when missing. False when it could not. */
export function writeCachedData(path: string, key: string, data: Buffer): boolean {
  try {
    // Never write into a folder that is a symlink or open to others: the data becomes code.
    if (!ownFolderSync(join(path, '..'))) return false;
    writeFileAtomicSync(path, Buffer.concat([Buffer.from(`${key}\n`, 'utf8'), data]));
    return true;
  } catch {
    return false;
  }
}

/** The size and mtime of the file at `path`, from the same open as its read. */
function readSource(path: string): { source: string; size: number; mtimeMs: number } {
  const fd = openSync(path, 'r');
  try {
    const st = fstatSync(fd);
    return { source: readFileSync(fd, 'utf8'), size: st.size, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/**
 * A loader of the bundle's wrapped files: each file is loaded once (later calls share the
 * promise), runs with `require` relative to itself, its own file URL in place of import.meta.url
 * and this loader for the files it loads lazily.
 */
export function createChunkLoader(opts: ChunkLoaderOptions): ChunkLoad {
  const loaded = new Map<string, Promise<ChunkExports>>();
  const lateFlags = opts.flags ?? [];
  /** The flags set so far: none until a file after the first one loads. */
  let flags: readonly string[] = [];
  let first = true;
  const pending: (() => void)[] = [];
  let exitHooked = false;
  const load: ChunkLoad = (name) => {
    let p = loaded.get(name);
    if (p === undefined) {
      p = Promise.resolve().then(() => run(name));
      loaded.set(name, p);
    }
    return p;
  };
  const run = (name: string): Promise<ChunkExports> => {
    if (!first && flags !== lateFlags) {
      if (lateFlags.length > 0) {
        // The data of the files loaded so far is made now, under the flags they were compiled
        // with: V8 refuses data made under other flags, and the next run that loads only the
        // first file compiles it without them.
        for (const save of pending) save();
        const { setFlagsFromString } = (opts.createRequire ?? createRequire)(join(opts.dir, 'loader'))('node:v8') as typeof import('node:v8');
        for (const flag of lateFlags) setFlagsFromString(flag);
      }
      flags = lateFlags;
    }
    first = false;
    const path = join(opts.dir, `${name}.js`);
    const { source, size, mtimeMs } = readSource(path);
    const cachePath = opts.cacheDir === undefined ? undefined : join(opts.cacheDir, `${name}.v8`);
    const key = cacheKey(source, size, mtimeMs, flags);
    const cachedData = cachePath === undefined ? undefined : readCachedData(cachePath, key);
    const script = new Script(source, { filename: path, ...(cachedData ? { cachedData } : {}) });
    const event: CacheEvent = cachedData === undefined ? 'miss' : script.cachedDataRejected === true ? 'rejected' : 'hit';
    opts.onEvent?.(name, event);
    if (cachePath !== undefined && event !== 'hit') {
      let done = false;
      const save = (): void => {
        if (done) return;
        done = true;
        const ok = writeCachedData(cachePath, key, script.createCachedData());
        opts.onEvent?.(name, ok ? 'written' : 'write-failed');
      };
      pending.push(save);
      setTimeout(save, opts.settleMs ?? 1_000).unref();
      if (!exitHooked) {
        exitHooked = true;
        process.once('exit', () => {
          for (const s of pending) s();
        });
      }
    }
    const wrapped = script.runInThisContext() as (require: NodeJS.Require, url: string, load: ChunkLoad) => Promise<ChunkExports>;
    return wrapped((opts.createRequire ?? createRequire)(path), pathToFileURL(path).href, load);
  };
  return load;
}

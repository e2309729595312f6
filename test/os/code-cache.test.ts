// The bundle's loader with V8's code cache (src/os/code-cache.ts), on real files in a temp folder:
// the data is made after a first load and taken by the next, belongs to one file under one key,
// is never read through a symlink nor written into a folder others may write, and any bad data
// only costs a compile from source.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILD_HASH_PREFIX, cacheKey, codeCacheDir, createChunkLoader, readCachedData } from '../../src/os/code-cache.js';

let dir: string;
let bundle: string;
let cache: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-code-cache-'));
  bundle = join(dir, 'bundle');
  cache = join(dir, 'cache', 'code');
  mkdirSync(bundle);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A file as scripts/bundle.mjs writes it: the hash line, then an async function expression. */
function writeChunk(name: string, body: string, hash = 'a'.repeat(64)): string {
  const path = join(bundle, `${name}.js`);
  writeFileSync(path, `${BUILD_HASH_PREFIX}${hash}\n(async function(require,__gwUrl,__gwLoad){${body}\n})\n`);
  return path;
}

const MAIN = `const { basename } = require('node:path'); function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }
  const other = await __gwLoad('other');
  return { sum: work(10), url: __gwUrl, base: basename(__gwUrl), other: other.value };`;
const OTHER = `return { value: 'other ' + (await Promise.resolve(42)) };`;

// Each load in a process of its own: V8 keeps compiled scripts per process, and a second compile
// of the same source in this one would never look at the cached data.
const BUILT = join(new URL('../..', import.meta.url).pathname, 'dist/src/os/code-cache.js');
const CHILD = `
const { createChunkLoader } = await import(process.argv[1]);
const [bundle, cache, flags] = process.argv.slice(2);
const events = [];
const load = createChunkLoader({ dir: bundle, cacheDir: cache, flags: JSON.parse(flags), settleMs: 0, onEvent: (name, e) => events.push(name + ':' + e) });
const exports = await load('main');
await new Promise((r) => setTimeout(r, 20));
process.stdout.write(JSON.stringify({ exports, events, v8: process.moduleLoadList.includes('NativeModule v8') }));
`;

/** Loads `main` in a new process, waits for its data to be written (settleMs 0), returns what happened. */
async function loadOnce(flags: readonly string[] = []): Promise<{ exports: Record<string, unknown>; events: string[]; v8: boolean }> {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, BUILT, bundle, cache, JSON.stringify(flags)], { encoding: 'utf8', timeout: 20_000 });
  if (run.status !== 0) throw new Error(`loader child failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as { exports: Record<string, unknown>; events: string[]; v8: boolean };
}

describe('createChunkLoader', () => {
  it('runs a file with require, its own URL and the loader; a second load of a name is the same run', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    const load = createChunkLoader({ dir: bundle, cacheDir: undefined });
    const exports = await load('main');
    expect(exports).toEqual({ sum: 45, url: pathToFileURL(join(bundle, 'main.js')).href, base: 'main.js', other: 'other 42' });
    expect(await load('main')).toBe(exports);
    expect(existsSync(cache)).toBe(false);
  });

  it('a first load makes the data (0600 in a 0700 folder, under its key), the next takes it', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    const first = await loadOnce();
    expect(first.events.sort()).toEqual(['main:miss', 'main:written', 'other:miss', 'other:written']);
    const file = join(cache, 'main.v8');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const st = statSync(join(bundle, 'main.js'));
    const bytes = readFileSync(file);
    const header = bytes.subarray(0, bytes.indexOf(10)).toString();
    const [magic, hash, size, mtime, node, v8, platform, arch, , flags] = JSON.parse(header) as unknown[];
    expect([magic, hash, size, mtime, node, v8, platform, arch, flags]).toEqual(['ghostwatch-v8-cache-1', 'a'.repeat(64), st.size, Math.trunc(st.mtimeMs), process.version, process.versions.v8, process.platform, process.arch, []]);
    expect(readCachedData(file, header)?.length).toBe(bytes.length - header.length - 1);
    expect(readCachedData(file, cacheKey('', 0, 0, []))).toBeUndefined();

    const second = await loadOnce();
    expect(second.events.sort()).toEqual(['main:hit', 'other:hit']);
    expect(second.exports).toEqual(first.exports);
  });

  it('another build of the file, the same file touched, or other V8 flags: not taken (compiled from source, data made anew)', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    await loadOnce();
    // Same length, same code, another build hash: the key differs.
    writeChunk('main', MAIN, 'b'.repeat(64));
    expect((await loadOnce()).events).toContain('main:miss');
    expect((await loadOnce()).events).toContain('main:hit');
    // Edited in place, the build hash line kept: its mtime differs.
    const path = join(bundle, 'main.js');
    const later = new Date(Date.now() + 5_000);
    utimesSync(path, later, later);
    const touched = await loadOnce();
    expect(touched.events).toEqual(expect.arrayContaining(['main:miss', 'main:written', 'other:hit']));
    // Other flags set at run time: they are the later files' (main, the first, runs without them).
    expect((await loadOnce(['--heap-growing-percent=20'])).events).toEqual(expect.arrayContaining(['main:hit', 'other:miss', 'other:written']));
  });

  it('sets the V8 flags only as the second file loads, after making the first file\'s data: a run of the first alone never loads node:v8 and takes that data', async () => {
    const flags = ['--heap-growing-percent=20'];
    writeChunk('main', `if (process.env.GW_TEST_SECOND === '1') await __gwLoad('other'); return { alone: process.env.GW_TEST_SECOND !== '1' };`);
    writeChunk('other', OTHER);
    process.env.GW_TEST_SECOND = '1';
    try {
      const both = await loadOnce(flags);
      expect(both.v8).toBe(true);
      // main's data was written before other compiled, under main's own (flagless) key.
      expect(both.events).toEqual(['main:miss', 'main:written', 'other:miss', 'other:written']);
    } finally {
      delete process.env.GW_TEST_SECOND;
    }
    const alone = await loadOnce(flags);
    expect(alone.exports).toEqual({ alone: true });
    expect(alone.events).toEqual(['main:hit']);
    expect(alone.v8).toBe(false);
  });

  it('data V8 refuses (the right key, garbage after it): the file still runs, the data is made anew', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    const { exports } = await loadOnce();
    const file = join(cache, 'main.v8');
    const bytes = readFileSync(file);
    const headerEnd = bytes.indexOf(10) + 1;
    writeFileSync(file, Buffer.concat([bytes.subarray(0, headerEnd), Buffer.alloc(bytes.length - headerEnd, 7)]), { mode: 0o600 });
    const bad = await loadOnce();
    expect(bad.events).toEqual(expect.arrayContaining(['main:rejected', 'main:written']));
    expect(bad.exports).toEqual(exports);
    expect((await loadOnce()).events).toContain('main:hit');
  });

  it('never reads data through a symlink, and never writes into a folder others may write', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    await loadOnce();
    const file = join(cache, 'main.v8');
    const elsewhere = join(dir, 'planted.v8');
    const planted = readFileSync(file);
    writeFileSync(elsewhere, planted);
    rmSync(file);
    symlinkSync(elsewhere, file);
    const viaLink = await loadOnce();
    expect(viaLink.events).toEqual(expect.arrayContaining(['main:miss', 'main:written']));
    // Written by rename over the link: the link is replaced, what it pointed to is untouched.
    expect(statSync(file).isFile()).toBe(true);
    expect(readFileSync(elsewhere).equals(planted)).toBe(true);

    rmSync(cache, { recursive: true });
    mkdirSync(cache, { recursive: true });
    chmodSync(cache, 0o777);
    const open = await loadOnce();
    expect(open.events).toEqual(expect.arrayContaining(['main:miss', 'main:write-failed']));
    expect(existsSync(file)).toBe(false);
  });

  it('a missing or unwritable cache folder costs nothing but the cache', async () => {
    writeChunk('main', MAIN);
    writeChunk('other', OTHER);
    writeFileSync(join(dir, 'cache'), 'a file where the folder should be');
    const { exports, events } = await loadOnce();
    expect(exports.sum).toBe(45);
    expect(events).toEqual(expect.arrayContaining(['main:miss', 'main:write-failed']));
  });
});

describe('codeCacheDir', () => {
  it('$XDG_CACHE_HOME/ghostwatch/code, else ~/.cache/ghostwatch/code; a relative XDG_CACHE_HOME is ignored; GHOSTWATCH_CODE_CACHE=0: none', () => {
    expect(codeCacheDir({ XDG_CACHE_HOME: '/x/cache' }, () => '/home/u')).toBe('/x/cache/ghostwatch/code');
    expect(codeCacheDir({ XDG_CACHE_HOME: 'rel' }, () => '/home/u')).toBe('/home/u/.cache/ghostwatch/code');
    expect(codeCacheDir({}, () => '/home/u')).toBe('/home/u/.cache/ghostwatch/code');
    expect(codeCacheDir({ GHOSTWATCH_CODE_CACHE: '0', XDG_CACHE_HOME: '/x' }, () => '/home/u')).toBeUndefined();
    expect(codeCacheDir({}, () => '')).toBeUndefined();
  });
});

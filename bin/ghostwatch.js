#!/usr/bin/env node
// The launcher: the environment the CLI expects, then the built CLI (dist/bundle/, scripts/bundle.mjs).
import { lstatSync, mkdirSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

// Ink colours through chalk, which ignores NO_COLOR (no-color.org) but honours FORCE_COLOR=0.
if ((process.env.NO_COLOR ?? '') !== '' || process.argv.includes('--no-color')) process.env.FORCE_COLOR = '0';
// React's development build records every render and keeps the records: run the production build.
process.env.NODE_ENV ??= 'production';

/**
 * Node 22.1+ keeps compiled modules between runs (module.enableCompileCache), and loads the
 * bytecode it finds in the folder unchecked. Its default folder is in the shared temp folder,
 * where another user can make it first, so it is never used: the cache lives in
 * $XDG_CACHE_HOME/ghostwatch/compile-cache (default ~/.cache/...), and only when that folder and
 * the one above it are ours, real folders (no symlink) and writable by no one else. Otherwise, or
 * on Node 20, no cache.
 */
function privateCompileCache() {
  const uid = process.geteuid?.();
  if (uid === undefined) return undefined;
  const xdg = process.env.XDG_CACHE_HOME;
  const base = join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'ghostwatch');
  const dir = join(base, 'compile-cache');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const d of [base, dir]) {
      const st = lstatSync(d);
      if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return undefined;
    }
    return dir;
  } catch {
    return undefined; // a read-only home, no home: start without the cache
  }
}

if (typeof module.enableCompileCache === 'function') {
  const dir = privateCompileCache();
  if (dir) {
    try {
      module.enableCompileCache(dir);
    } catch {
      // the cache is an optimisation: start without it
    }
  }
}
await import('../dist/bundle/main.js');

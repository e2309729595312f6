#!/usr/bin/env node
// Ink colours through chalk, which ignores NO_COLOR (no-color.org) but honours FORCE_COLOR=0.
// Translate before chalk is first imported; --no-color gets the same treatment.
if ((process.env.NO_COLOR ?? '') !== '' || process.argv.includes('--no-color')) {
  process.env.FORCE_COLOR = '0';
}
// Memory (issue 14: RSS at 10,000 sessions <= 100 MB). The live heap of a 10,000-row monitor is
// ~25 MB; the rest of its RSS was garbage collector slack: V8 grows the young generation to
// 2 x 16 MB under the start-up's allocation and keeps it, and lets the old generation fill with the
// dead findings of earlier recomputes up to ~4x what is live before it collects. Keep the young
// generation at its start size and let the old one grow by a fifth between full collections. Set
// before the command's own code runs (the bundle's loader sets them as it loads the first file
// after the dispatcher, so a status line never loads node:v8); V8 reads both on each collection.
// The CPU cost stays in the noise (bench: idle_cpu_pct, startup_first_frame_ms).
const V8_FLAGS = ['--semi-space-growth-factor=1', '--heap-growing-percent=20'];
// React's development build records every render with performance.measure and keeps the records:
// with 10,000 rows that grows the heap by ~100 MB a second. Run the production build.
process.env.NODE_ENV ??= 'production';
// The bundle (one file per lazily loaded command) starts far faster than ~150 separate modules,
// and its loader compiles each file with V8's code cache of an earlier run (src/os/code-cache.ts,
// in $XDG_CACHE_HOME/ghostwatch/code; GHOSTWATCH_CODE_CACHE=0 turns it off). This file is
// CommonJS (bin/package.json), like the loader: Node then starts without its ES module loader
// (~5 ms of every run). The unbundled build is the fallback when only `tsc` ran.
const { join } = require('node:path');
const bundle = join(__dirname, '../dist/bundle');
let loader;
try {
  loader = require(join(bundle, 'loader.cjs'));
} catch (error) {
  if (error?.code !== 'MODULE_NOT_FOUND') throw error;
}
if (loader !== undefined) {
  const { codeCacheDir, createChunkLoader } = loader;
  // Module.createRequire, from this file's module object: node:module itself need not load.
  createChunkLoader({ dir: bundle, cacheDir: codeCacheDir(), flags: V8_FLAGS, createRequire: module.constructor.createRequire })('main').catch((error) => {
    throw error;
  });
} else {
  const { setFlagsFromString } = require('node:v8');
  for (const flag of V8_FLAGS) setFlagsFromString(flag);
  // Node 22.1+ can keep compiled modules between runs (in the OS temp folder): for the unbundled
  // fallback only (the bundle has its own code cache, and a status line must not load node:module).
  // Node 20 has no such cache.
  try {
    if (Number(process.versions.node.split('.')[0]) >= 22) require('node:module').enableCompileCache?.();
  } catch {
    // a read-only temp folder: start without the cache
  }
  import('../dist/src/cli/main.js').catch((error) => {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/src/cli/main.js')) {
      console.error('ghostwatch: not built yet; run `npm run build` in the ghostwatch folder');
      process.exit(2);
    }
    throw error;
  });
}

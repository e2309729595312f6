#!/usr/bin/env node
// The launcher: the environment the CLI expects, then the built CLI (dist/bundle/, scripts/bundle.mjs).
import module from 'node:module';

// Ink colours through chalk, which ignores NO_COLOR (no-color.org) but honours FORCE_COLOR=0.
if ((process.env.NO_COLOR ?? '') !== '' || process.argv.includes('--no-color')) process.env.FORCE_COLOR = '0';
// React's development build records every render and keeps the records: run the production build.
process.env.NODE_ENV ??= 'production';
// Node 22.1+ keeps compiled modules between runs (in the OS temp folder); Node 20 has no such cache.
try {
  module.enableCompileCache?.();
} catch {
  // a read-only temp folder: start without the cache
}
await import('../dist/bundle/main.js');

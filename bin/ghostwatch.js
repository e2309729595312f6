#!/usr/bin/env node
// The launcher: the environment the CLI expects, then the built CLI (dist/bundle/, scripts/bundle.mjs).

// Ink colours through chalk, which ignores NO_COLOR (no-color.org) but honours FORCE_COLOR=0.
if ((process.env.NO_COLOR ?? '') !== '' || process.argv.includes('--no-color')) process.env.FORCE_COLOR = '0';
// React's development build records every render and keeps the records: run the production build.
process.env.NODE_ENV ??= 'production';
// No compile cache (module.enableCompileCache): Node keeps it in the shared temp folder, in a folder
// another user can make first, and loads the bytecode it finds there unchecked.
await import('../dist/bundle/main.js');

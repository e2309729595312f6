// The CLI as ES modules (dist/bundle/): esbuild bundles src/cli/main.ts with its dependencies
// (Ink, React, ws) into main.js and shared chunks. Each command that main.ts loads with import()
// stays a chunk of its own, loaded only when that command runs, so `--version` and `status` never
// load Ink or React. bin/ghostwatch.js imports main.js; nothing else loads these files.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const outdir = new URL('../dist/bundle/', import.meta.url).pathname;

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { main: new URL('../src/cli/main.ts', import.meta.url).pathname },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // React and Ink pick their production builds by this; the launcher sets it too.
  define: { 'process.env.NODE_ENV': '"production"' },
  // The optional native add-ons ws and Ink try (and do without): never bundled.
  external: ['bufferutil', 'utf-8-validate', 'react-devtools-core'],
  // The bundled CommonJS dependencies (React, ws) call require() for Node's built-ins.
  banner: { js: "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);" },
  // Whitespace and syntax only: identifiers keep their names, so stack traces and CPU profiles read.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});

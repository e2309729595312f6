// One ESM bundle of the CLI (dist/bundle/), so a start resolves and compiles a few files instead
// of some 150 modules of Ink, React and friends: start-up to the first frame is mostly module
// loading. Lazy command imports stay lazy (code splitting). The unbundled dist/src stays for the
// tests and benchmarks that import modules one by one.
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
  // Whitespace and syntax only: identifiers keep their names, so stack traces and CPU profiles read.
  minifyWhitespace: true,
  minifySyntax: true,
  // React and Ink pick their production builds by this; the launcher sets it too.
  define: { 'process.env.NODE_ENV': '"production"' },
  // ws loads these optional native add-ons only if present; yoga and friends are plain JS/wasm.
  external: ['bufferutil', 'utf-8-validate', 'react-devtools-core'],
  // CommonJS packages inside an ESM bundle still call require(): give them one.
  banner: { js: "import { createRequire as __gwCreateRequire } from 'node:module'; const require = __gwCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});

// The CLI as ESM bundles (dist/bundle/), so a start resolves and compiles a few files instead of
// some 150 modules of Ink, React and friends: start-up is mostly module loading, and each file
// the ESM loader resolves, reads and links costs ~0.4 ms before any of its code runs.
//
// Two builds into one folder:
// - main.js, one file, no chunks: the dispatcher, the options, --version/--help and the whole of
//   `status` (the line a tmux status bar runs every few seconds). Modules it imports lazily are
//   inlined and evaluated only when used.
// - the heavy commands (the monitor with Ink and React, the engine with ws and ps-list, check,
//   reap, restore, serve, demo), code-split among themselves. main.js loads them by their fixed
//   file names, only when a command needs them. They carry their own copy of the small shared
//   modules (args, settings, core): nothing with identity crosses from one build to the other but
//   plain data and errors (UsageError is recognised by its brand, not its class object).
// The unbundled dist/src stays for the tests and benchmarks that import modules one by one.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';

const src = (path) => new URL(`../src/${path}`, import.meta.url).pathname;
const outdir = new URL('../dist/bundle/', import.meta.url).pathname;

/** What main.js reaches only through import() of these files: each is an entry of the heavy build. */
const HEAVY = {
  monitor: 'cli/monitor.ts',
  'engine-setup': 'cli/engine-setup.ts',
  check: 'cli/check.ts',
  reap: 'cli/reap.ts',
  restore: 'cli/restore.ts',
  serve: 'cli/serve.ts',
  demo: 'cli/demo.ts',
};
const heavyByPath = new Map(Object.entries(HEAVY).map(([name, path]) => [src(path).replace(/\.ts$/, ''), name]));

const common = {
  bundle: true,
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
};

/** In main.js, `import('./monitor.js')` and friends stay imports, of the heavy build's files. */
const heavyExternal = {
  name: 'heavy-external',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const target = new URL(args.path, `file://${args.importer}`).pathname.replace(/\.js$/, '');
      const name = heavyByPath.get(target);
      return name === undefined ? undefined : { path: `./${name}.js`, external: true };
    });
  },
};

/**
 * Every `import … from 'string-width'` (Ink's, wrap-ansi's older copy, ours) gets
 * src/ui/lazy-width.ts around that same copy, which is then loaded (require: evaluated on first
 * call) only for a string that is not printable ASCII. No first frame of printable ASCII pays
 * for string-width's Segmenter and Unicode-property regular expressions.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.namespace === 'lazy-string-width') return undefined;
      const real = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, namespace: 'lazy-string-width' });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: [
        `import { lazyStringWidth } from ${JSON.stringify(src('ui/lazy-width.ts'))};`,
        // Resolved from string-width's own folder: the strip-ansi copy that string-width uses.
        `import stripAnsi from 'strip-ansi';`,
        `export default lazyStringWidth(() => require(${JSON.stringify(args.path)}).default, stripAnsi);`,
      ].join('\n'),
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
await Promise.all([
  build({ ...common, entryPoints: { main: src('cli/main.ts') }, outdir, splitting: false, plugins: [heavyExternal, lazyStringWidth] }),
  build({
    ...common,
    entryPoints: Object.fromEntries(Object.entries(HEAVY).map(([name, path]) => [name, src(path)])),
    outdir,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    plugins: [lazyStringWidth],
  }),
]);

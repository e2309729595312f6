// The CLI as bundles (dist/bundle/), so a start compiles a few files instead of some 150 modules
// of Ink, React and friends, and compiles them from V8's code cache once it has run before.
//
// - main.js: the dispatcher, the options, --version/--help and the whole of `status` (the line a
//   tmux status bar runs every few seconds). Modules it imports lazily are inlined and evaluated
//   only when used.
// - the heavy commands (the monitor with Ink and React, the engine with ws and ps-list, check,
//   reap, restore, serve, demo), one file each, loaded by name only when a command needs them.
//   Each carries its own copy of the small shared modules (args, settings, core): nothing with
//   identity crosses from one file to another but plain data, the engine object and errors
//   (UsageError is recognised by its brand, not its class object).
// - loader.js (src/os/code-cache.ts): the launcher's loader of the files above. Each of them is an
//   async function expression compiled with vm.Script, which takes V8's cached data (Node 20
//   has no module compile cache; ES modules cannot be given cached data there).
// The unbundled dist/src stays for the tests and benchmarks that import modules one by one.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** The first line of every wrapped file (src/os/code-cache.ts reads it). */
const BUILD_HASH_PREFIX = '//gw-build ';

const src = (path) => new URL(`../src/${path}`, import.meta.url).pathname;
const outdir = new URL('../dist/bundle/', import.meta.url).pathname;

/** What main.js (or another of these) reaches only through import() of them: each a file of its own. */
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

/** Node's built-ins, and the optional add-ons ws and Ink try: required at run time, never bundled. */
const RUNTIME_REQUIRED = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`), 'bufferutil', 'utf-8-validate', 'react-devtools-core']);

const common = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Whitespace and syntax only: identifiers keep their names, so stack traces and CPU profiles read.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};

/**
 * Built-ins that cost a few ms each to load and that neither a status line nor a first frame
 * needs: child_process (Ink's terminal-size fallback, the tmux and process-table probes, which
 * run after it), crypto (eviction ids, temp names), fs/promises (the trash, the audit log, the
 * state file; the config is read synchronously), module (createRequire: the launcher hands the
 * loader its own, from the CommonJS module object), https and tls (ws requires both as it loads;
 * only a wss:// registry uses them). Their importers get an object whose names load them on first
 * use.
 */
const LAZY_BUILTINS = ['child_process', 'crypto', 'fs/promises', 'module', 'https', 'tls'];

/** Built-ins whose exports are plain functions and constants (no getter with an effect, none reassigned later). */
const PLAIN_BUILTINS = ['fs', 'path', 'os', 'net', 'url', 'vm'];

/**
 * `import … from 'node:fs'` becomes a require() through the wrapper's `require` (a file compiled
 * by vm.Script has no import statements), evaluated where the importing module is.
 */
const requireAtRunTime = {
  name: 'require-at-run-time',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) => {
      if (!RUNTIME_REQUIRED.has(args.path)) return undefined;
      if (args.namespace === 'run-time' || args.namespace === 'run-time-esm') return { path: args.path, external: true };
      // An import statement of a plain built-in: its names as an ES module. A require() call (a
      // CommonJS dependency's) keeps the module object itself, as Node gives it.
      const plain = args.kind === 'import-statement' && PLAIN_BUILTINS.includes(args.path.replace(/^node:/, ''));
      return { path: args.path, namespace: plain ? 'run-time-esm' : 'run-time' };
    });
    // An ES module of the built-in's names, each read once where the bundle imports it and dropped
    // where nothing does (a pure call): no copy of every name and getter (esbuild's __toESM of a
    // CommonJS module) at each start. Only for modules whose names are plain functions and
    // constants, so reading one at import instead of at use changes nothing.
    b.onLoad({ filter: /.*/, namespace: 'run-time-esm' }, async (args) => {
      const names = Object.keys(await import(args.path)).filter((n) => n !== 'default' && /^[A-Za-z_$][\w$]*$/.test(n));
      const exports = names.map((n) => `export const ${n} = /* @__PURE__ */ (() => m.${n})();`);
      return { contents: [`const m = require(${JSON.stringify(args.path)});`, 'export default m;', ...exports].join('\n'), loader: 'js' };
    });
    b.onLoad({ filter: /.*/, namespace: 'run-time' }, async (args) => {
      const id = args.path.replace(/^node:/, '');
      if (!LAZY_BUILTINS.includes(id)) return { contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' };
      // An object of the module's names whose getters load it on first use: importing it costs nothing.
      const names = Object.keys(await import(`node:${id}`)).filter((n) => n !== 'default');
      return {
        contents: [
          `let real;`,
          `const lazy = {};`,
          `for (const name of ${JSON.stringify(names)}) Object.defineProperty(lazy, name, { enumerable: true, get: () => (real ??= require(${JSON.stringify(`node:${id}`)}))[name] });`,
          `module.exports = lazy;`,
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

/** `import('./monitor.js')` and friends stay imports here; wrap() turns them into the loader's calls. */
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

/**
 * src/ui/ink-output.ts finds Ink's Output class (which Ink's exports do not name) at run time, by
 * a dynamic import of a computed path; here it becomes a static import of the file of the Ink the
 * bundle inlines, so the class it patches (src/ui/ink-output-cache.ts) is the one Ink draws with.
 */
const inkOutput = {
  name: 'ink-output',
  setup(b) {
    const file = src('ui/ink-output.ts');
    b.onLoad({ filter: /[\\/]ui[\\/]ink-output\.ts$/ }, async (args) => {
      if (args.path !== file) return undefined;
      const ink = await b.resolve('ink', { kind: 'import-statement', resolveDir: dirname(file) });
      if (ink.errors.length > 0) return { errors: ink.errors };
      return { contents: `export { default as InkOutput } from ${JSON.stringify(join(dirname(ink.path), 'output.js'))};`, resolveDir: dirname(file), loader: 'js' };
    });
  },
};

/**
 * One esbuild output as the loader runs it (src/os/code-cache.ts): an async function expression
 * of (require, the file's URL, the loader) that returns the exports, under a first line with the
 * hash of the text. Async, so the top-level awaits of yoga and Ink stay as they are.
 */
function wrap(name, text) {
  let body = text;
  let returned = '{}';
  const at = body.lastIndexOf('export{');
  if (at >= 0) {
    const m = /^export\{([^}]*)\};?/.exec(body.slice(at));
    if (!m) throw new Error(`${name}: cannot read its export statement`);
    body = body.slice(0, at) + body.slice(at + m[0].length);
    const pairs = m[1].split(',').map((part) => part.trim().split(/\s+as\s+/));
    returned = `{${pairs.map(([local, exported]) => `${JSON.stringify(exported ?? local)}:${local}`).join(',')}}`;
  }
  body = body.replace(/\bimport\("\.\/([\w-]+)\.js"\)/g, (_, heavy) => {
    if (!(heavy in HEAVY)) throw new Error(`${name}: import() of ${heavy}.js, which is not a file of the bundle`);
    return `__gwLoad(${JSON.stringify(heavy)})`;
  });
  const wrapped = `(async function(require,__gwUrl,__gwLoad){${body}\nreturn ${returned};})\n`;
  // No import or export statement, no import.meta is left: the text compiles as a script.
  new Script(wrapped, { filename: `${name}.js` });
  return `${BUILD_HASH_PREFIX}${createHash('sha256').update(wrapped).digest('hex')}\n${wrapped}`;
}

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const entries = { main: 'cli/main.ts', ...HEAVY };
const [commands] = await Promise.all([
  build({
    ...common,
    // React and Ink pick their production builds by this; the launcher sets it too.
    define: { 'process.env.NODE_ENV': '"production"', 'import.meta.url': '__gwUrl' },
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, src(path)])),
    outdir,
    splitting: false,
    write: false,
    // Each file's own copy of core/sanitize.ts learns the locale's ellipsis (src/cli/locale.ts).
    inject: [src('cli/locale.ts')],
    plugins: [requireAtRunTime, heavyExternal, lazyStringWidth, inkOutput],
  }),
  // The loader itself: CommonJS, like the launcher that requires it (no ES module loader at start).
  build({
    ...common,
    format: 'cjs',
    define: { 'import.meta.url': '__gwLoaderUrl' },
    banner: { js: "const __gwLoaderUrl = require('node:url').pathToFileURL(__filename).href;" },
    entryPoints: { loader: src('os/code-cache.ts') },
    outdir,
    outExtension: { '.js': '.cjs' },
    plugins: [requireAtRunTime],
  }),
]);
for (const file of commands.outputFiles) writeFileSync(file.path, wrap(basename(file.path, '.js'), file.text));

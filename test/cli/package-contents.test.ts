// What the CLI tests run is what `npm pack` ships: the launcher, every file it can load (main.js,
// the chunks main.js imports, the commands it imports on use), and nothing outside the package
// but Node's own modules and the optional add-ons ws and Ink try. A usage mistake in a command
// loaded on use still reads as one line: UsageError is one class shared by every chunk.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { BIN, ROOT } from '../support/tmux.js';

const env = { ...process.env, XDG_CONFIG_HOME: '/nonexistent', XDG_STATE_HOME: '/nonexistent', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
const OPTIONAL_ADDONS = new Set(['bufferutil', 'utf-8-validate', 'react-devtools-core']);
const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/** The specifiers a built file imports, statically or with import(). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  // A specifier is a path or a package name; `from "${…}"` in a message is neither.
  const found = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["']([\w@./:-]+)["']/g)].map((m) => m[1]!);
  return [...new Set(found)];
}

/** Every file the launcher can load, from the package root, and every bare specifier on the way. */
function loadable(): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string): void => {
    const rel = relative(ROOT, file);
    if (files.has(rel)) return;
    files.add(rel);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(join(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(BIN);
  return { files, bare };
}

function packedFiles(): Set<string> {
  // --ignore-scripts: `prepare` (the build) is not what is asked here.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  return new Set(pack!.files.map((f) => f.path));
}

describe('the package as npm packs it', () => {
  it('holds the launcher and every file it can load; the CLI needs no other package', () => {
    const packed = packedFiles();
    const { files, bare } = loadable();
    expect(files.has('bin/ghostwatch.js')).toBe(true);
    expect(files.has('dist/bundle/main.js')).toBe(true);
    for (const file of files) expect(packed.has(file), `${file} is loaded but not packed`).toBe(true);
    expect([...bare].filter((spec) => !BUILTINS.has(spec) && !OPTIONAL_ADDONS.has(spec))).toEqual([]);
    // Every built file is reachable from the launcher: no stale chunk of an older build is shipped.
    const built = readdirSync(join(ROOT, 'dist/bundle')).map((f) => `dist/bundle/${f}`);
    expect(built.filter((f) => !files.has(f))).toEqual([]);
  });

  it('ships the demo agent the demo starts, and no test or source file', () => {
    const packed = packedFiles();
    expect(packed.has('dist/src/demo/agent.js')).toBe(true);
    expect([...packed].filter((f) => /^(test|src|scripts)\//.test(f) || /\.test\.js$/.test(f))).toEqual([]);
  });

  it('main.js loads Ink, React and ws only through import() of a command', () => {
    const staticClosure = new Set<string>();
    const visit = (file: string): void => {
      if (staticClosure.has(file)) return;
      staticClosure.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*)["'](\.[^"']+)["']/g)) visit(join(dirname(file), m[1]!));
    };
    visit(join(ROOT, 'dist/bundle/main.js'));
    const text = [...staticClosure].map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(text).toMatch(/\bUsageError\b/);
    expect(text).not.toMatch(/react-reconciler|yoga|Sec-WebSocket-Key/);
  });

  it.each(['check', 'reap', 'restore', 'serve', 'demo', 'status', 'watch'])('`%s --bogus`: one usage line, exit 2', async (command) => {
    const run = await runCli([command, '--bogus'], env);
    // serve names itself in its own usage lines (it prints them as a long-running server would).
    expect(run.stderr).toMatch(/^ghostwatch( serve)?: unknown option --bogus\n$/);
    expect(run.code).toBe(2);
  });
});

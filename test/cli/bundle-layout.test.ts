// The launcher runs two builds (scripts/bundle.mjs): main.js (dispatcher, options, status) and the
// heavy commands, each with its own copy of the small shared modules. A usage mistake thrown in
// a heavy command must still read as one line, as it does from main.js itself, not as an
// internal error with a stack (UsageError crosses the builds by its brand).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const BUNDLE = join(ROOT, 'dist/bundle');
// HOME with no registry in it: status reads hypivisor alone, on its fast path.
const env = { ...process.env, HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent', XDG_STATE_HOME: '/nonexistent', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };

describe('the bundled CLI', () => {
  it.each(['check', 'reap', 'restore', 'serve', 'demo', 'status', 'watch'])('`%s --bogus`: one usage line, exit 2', async (command) => {
    const run = await runCli([command, '--bogus'], env);
    // serve names itself in its own usage lines (it prints them as a long-running server would).
    expect(run.stderr).toMatch(/^ghostwatch( serve)?: unknown option --bogus\n$/);
    expect(run.code).toBe(2);
  });

  it('main.js is one file that loads the heavy files only through the loader: no Ink, React or ws in it', () => {
    expect(existsSync(join(BUNDLE, 'main.js'))).toBe(true);
    const main = readFileSync(join(BUNDLE, 'main.js'), 'utf8');
    // A script for vm.Script (src/os/code-cache.ts): a hash line, then one async function expression.
    expect(main).toMatch(/^\/\/gw-build [0-9a-f]{64}\n\(async function\(require,__gwUrl,__gwLoad\)\{/);
    expect(main).not.toMatch(/(?:^|[;}\s])import\s*(?:[\w{},*\s]+from\s*)?"[^"]+"/);
    expect(main).not.toMatch(/\bimport\(|import\.meta/);
    expect(main).not.toMatch(/react-reconciler|yoga|createWebSocketStream/);
    const loaded = new Set([...main.matchAll(/__gwLoad\("([^"]+)"\)/g)].map((m) => m[1]));
    expect([...loaded].sort()).toEqual(['check', 'demo', 'engine-setup', 'monitor', 'reap', 'restore', 'serve']);
    const files = new Set(readdirSync(BUNDLE));
    for (const f of loaded) expect(files.has(`${f!}.js`)).toBe(true);
  });

  it('--version and status load neither child_process, crypto, http, fs/promises, v8 nor module (each is a ms or more of every status line)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-builtins-'));
    try {
      // Which of Node's own modules the run loaded, printed as the process exits.
      const probe = join(dir, 'probe.cjs');
      writeFileSync(probe, `process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(process.moduleLoadList.filter((m) => /^NativeModule (crypto|child_process|http|https|fs[/]promises|v8|module)$/.test(m)).map((m) => m.slice(13)).sort()) + '\\n'));`);
      const loaded = (args: string[]): string[] => {
        const run = spawnSync(process.execPath, ['--require', probe, join(ROOT, 'bin/ghostwatch.js'), ...args], { env: { ...env, XDG_CACHE_HOME: join(dir, 'cache') }, encoding: 'utf8', timeout: 20_000 });
        const line = /LOADED (.*)\n/.exec(run.stderr)?.[1];
        expect(line, run.stderr).toBeDefined();
        return JSON.parse(line!) as string[];
      };
      // Twice each: the first run makes the code cache (its temp name draws on crypto at exit), the second is what a status bar runs.
      for (const _ of [1, 2]) {
        expect(loaded(['--version'])).toEqual([]);
        expect(loaded(['status', '--format', 'tmux'])).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

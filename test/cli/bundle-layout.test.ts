// The launcher runs two builds (scripts/bundle.mjs): main.js (dispatcher, options, status) and the
// heavy commands, each with its own copy of the small shared modules. A usage mistake thrown in
// a heavy command must still read as one line, as it does from main.js itself, not as an
// internal error with a stack (UsageError crosses the builds by its brand).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const BUNDLE = join(ROOT, 'dist/bundle');
const env = { ...process.env, XDG_CONFIG_HOME: '/nonexistent', XDG_STATE_HOME: '/nonexistent', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };

describe('the bundled CLI', () => {
  it.each(['check', 'reap', 'restore', 'serve', 'demo', 'status', 'watch'])('`%s --bogus`: one usage line, exit 2', async (command) => {
    const run = await runCli([command, '--bogus'], env);
    // serve names itself in its own usage lines (it prints them as a long-running server would).
    expect(run.stderr).toMatch(/^ghostwatch( serve)?: unknown option --bogus\n$/);
    expect(run.code).toBe(2);
  });

  it('main.js is one file that loads the heavy builds only by import(): no Ink, React or ws in it', () => {
    expect(existsSync(join(BUNDLE, 'main.js'))).toBe(true);
    const main = readFileSync(join(BUNDLE, 'main.js'), 'utf8');
    const staticImports = [...main.matchAll(/(?:^|[;}\s])import\s*(?:[\w{},*\s]+from\s*)?"([^"]+)"/g)].map((m) => m[1]);
    expect(staticImports.filter((s) => !s!.startsWith('node:'))).toEqual([]);
    expect(main).not.toMatch(/react-reconciler|yoga|createWebSocketStream/);
    const dynamic = new Set([...main.matchAll(/import\("\.\/([^"]+)"\)/g)].map((m) => m[1]));
    expect([...dynamic].sort()).toEqual(['check.js', 'demo.js', 'engine-setup.js', 'monitor.js', 'reap.js', 'restore.js', 'serve.js']);
    const files = new Set(readdirSync(BUNDLE));
    for (const f of dynamic) expect(files.has(f!)).toBe(true);
  });

  it('main.js loads neither child_process nor crypto at start (each is a few ms of every status line)', () => {
    const main = readFileSync(join(BUNDLE, 'main.js'), 'utf8');
    expect(main).not.toMatch(/from\s*"node:(child_process|crypto|http|https)"/);
  });
});

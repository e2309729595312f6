// Real tmux for the end-to-end tests: a private server per test file (-L), the built CLI, and
// an environment the TUI accepts (Ink renders nothing live when CI is set).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const BIN = join(ROOT, 'bin/ghostwatch.js');
export const BUILT = existsSync(join(ROOT, 'dist/src/cli/main.js'));
export const HAS_TMUX = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The test process's environment without CI and CI_*, plus `extra`. */
export function tuiEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  return { ...env, TERM: 'xterm-256color', NO_COLOR: '', ...extra };
}

export function tmuxOn(socket: string): { run: (...args: string[]) => string; capture: (target?: string) => string } {
  const run = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  return { run, capture: (target = 'gw') => run('capture-pane', '-p', '-t', target) };
}

// Real tmux for the end-to-end tests: a private server per test file (-L), the built CLI, and
// an environment the TUI accepts (Ink renders nothing live when CI is set).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './wait.js';

export const ROOT = new URL('../..', import.meta.url).pathname;
export const BIN = join(ROOT, 'bin/ghostwatch.js');
export const BUILT = existsSync(join(ROOT, 'dist/bundle/main.js'));
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

/** sh's prompt ('$ ', or '# ' for root) alone on the last used line. */
export const SHELL_PROMPT = /^[$#] ?$/m;

/**
 * Types `command` into the pane's sh once sh has printed its first prompt. Typed sooner, the tty
 * echoes the line before sh starts, sh prints its prompt below it, and the prompt sh prints when
 * the command ends lands on that same line ("# # "): a loaded CI saw it as no prompt at all.
 */
export async function typeAtPrompt(run: (...args: string[]) => string, capture: (target?: string) => string, command: string, target = 'gw'): Promise<void> {
  await until(() => SHELL_PROMPT.test(capture(target)), 5_000, () => `sh's first prompt:\n${capture(target)}`);
  run('send-keys', '-t', target, command, 'Enter');
}

/**
 * A real tmux client attached to `session` of the server on `socket`: a second private server
 * (its own pty) runs `tmux attach` in its pane, so commands like switch-client have a client to
 * move. Returns the client's name (its tty) and how to stop it (the outer server goes, the inner
 * one stays).
 */
export async function attachClient(socket: string, session: string, env: NodeJS.ProcessEnv = tuiEnv({})): Promise<{ name: string; stop: () => void }> {
  const outer = `${socket}-outer`;
  const { TMUX: _tmux, TMUX_PANE: _pane, ...clean } = env;
  execFileSync('tmux', ['-L', outer, '-f', '/dev/null', 'new-session', '-d', '-s', 'client', '-x', '160', '-y', '40', `tmux -L ${socket} attach -t ${session}`], { env: clean });
  const stop = (): void => {
    try {
      execFileSync('tmux', ['-L', outer, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  };
  const end = Date.now() + 5000;
  for (;;) {
    const names = execFileSync('tmux', ['-L', socket, 'list-clients', '-F', '#{client_name}'], { encoding: 'utf8' }).trim();
    if (names !== '') return { name: names.split('\n')[0]!, stop };
    if (Date.now() > end) {
      stop();
      throw new Error(`no tmux client attached to ${session} on ${socket}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

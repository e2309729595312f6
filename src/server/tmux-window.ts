// A new tmux window for an agent that spawn_agent starts, when serve itself runs inside tmux ($TMUX
// set): `tmux new-window` with every argument as argv, never through a shell. Two things in tmux
// reach past argv: an argument ending in ';' ends the command (the rest would run as another tmux
// command), and the window name is expanded as a format (`#{…}`, and `#(…)` runs a shell command).
// So every argument goes through tmuxArg, and the name keeps only letters, digits and a few marks.
import { execFile } from 'node:child_process';
import { sanitize } from '../core/sanitize.js';
import { errorCode } from '../os/liveness.js';

/** A window name longer than this is cut: the status bar shows a handful of them side by side. */
export const WINDOW_NAME_MAX = 32;
/** tmux answers new-window within milliseconds; a hung server must not hold the spawn forever. */
const TMUX_TIMEOUT_MS = 5_000;

/** serve runs inside a tmux client's pane: tmux commands it runs reach that server and session. */
export function insideTmux(env: NodeJS.ProcessEnv): boolean {
  return typeof env.TMUX === 'string' && env.TMUX !== '';
}

/**
 * The window name for an agent started in `folder`: its last component, with every run of
 * characters other than letters, digits, marks and `_+@=,-` made one '-' (no '#': tmux would
 * expand it; no ';', '.' or ':': they end commands or split a target), trimmed, at most
 * WINDOW_NAME_MAX characters; `agent` when nothing is left.
 */
export function windowName(folder: string): string {
  const last = folder.split('/').filter((part) => part !== '').pop() ?? '';
  const kept = last.replace(/[^\p{L}\p{N}\p{M}_+@=,-]+/gu, '-').replace(/^-+|-+$/g, '');
  const cut = [...kept].slice(0, WINDOW_NAME_MAX).join('').replace(/-+$/, '');
  return cut === '' ? 'agent' : cut;
}

/** An argument as tmux must get it to take it whole: a trailing ';' (a command separator) as '\;'. */
export function tmuxArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

/** The pane the new window holds. */
export interface TmuxWindow {
  /** `%N`, stable while the pane lives. */
  readonly paneId: string;
  /** The pane's own process: what the window runs. */
  readonly panePid: number;
  /** `session:index`, as a person types it after `tmux select-window -t` (sanitized). */
  readonly target: string;
}

export interface NewWindowOptions {
  readonly name: string;
  /** The pane's command and its arguments: run by tmux as argv (two or more words: never through a shell). */
  readonly argv: readonly [string, string, ...string[]];
  /** The tmux client's working directory: a window given no -c starts there. */
  readonly cwd: string;
  /** The environment the tmux client runs in ($TMUX and $TMUX_PANE say which server and session). */
  readonly env: NodeJS.ProcessEnv;
  /** The tmux binary. Default `tmux`. */
  readonly command?: string;
}

const FORMAT = '#{pane_id} #{pane_pid} #{session_name}:#{window_index}';

/**
 * Opens a window in the current session of serve's tmux, in the background (-d: the person's
 * window stays the one shown). The directory is the client's own (no -c, whose value tmux would
 * expand as a format).
 */
export function openTmuxWindow(opts: NewWindowOptions): Promise<TmuxWindow | { error: string }> {
  const args = ['new-window', '-d', '-P', '-F', FORMAT, '-n', opts.name, '--', ...opts.argv].map(tmuxArg);
  return new Promise((resolve) => {
    execFile(opts.command ?? 'tmux', args, { cwd: opts.cwd, env: opts.env, timeout: TMUX_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const said = String(stderr ?? '').trim().split('\n')[0] ?? '';
        const why = errorCode(err) === 'ENOENT' ? 'tmux is not installed' : said || (err as Error).message;
        return resolve({ error: `tmux new-window: ${sanitize(why, 200)}` });
      }
      const m = /^(%\d+) (\d+) (.+)$/.exec(stdout.trim());
      if (!m) return resolve({ error: `tmux new-window: unexpected answer ${JSON.stringify(sanitize(stdout, 80))}` });
      resolve({ paneId: m[1]!, panePid: Number(m[2]), target: sanitize(m[3], 80) });
    });
  });
}

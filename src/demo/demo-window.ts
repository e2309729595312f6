// The demo's own tmux window (issue 27): when the demo runs inside tmux, its agents run in panes of
// one window, `gw-demo`, opened in the background in the current session, so that each agent's
// PANE is its own and `o` shows it. The first agent opens the window; each next one splits the
// largest pane, and the panes are tiled again. tmux keeps panes at a minimum size: when no pane can
// be split, open() says there is no room (the caller starts that agent elsewhere). A window whose
// agents have all ended is closed by tmux; the next agent opens a new one.
// Every tmux command is argv (the pane's command two or more words: tmux runs it without a shell),
// the pane's command through tmuxArg, every other argument fixed here (tmux expands a window name
// as a format: the name is a constant).
import { execFile, execFileSync } from 'node:child_process';
import { sanitize } from '../core/sanitize.js';
import { errorCode } from '../os/liveness.js';
import { tmuxArg } from '../server/tmux-window.js';

export const DEMO_WINDOW_NAME = 'gw-demo';
/** tmux answers within milliseconds; a hung server must not hold the demo forever. */
const TMUX_TIMEOUT_MS = 5_000;
const PANE_FORMAT = '#{window_id} #{pane_id} #{pane_pid}';

/** A pane opened for an agent: its process is the agent. */
export interface DemoPane {
  readonly windowId: string;
  /** `%N`. */
  readonly paneId: string;
  /** The pane's process: the command given to open(), once it has exec'd. */
  readonly pid: number;
}

export type PaneOpening = DemoPane | { readonly noRoom: string } | { readonly error: string };

export interface DemoWindowOptions {
  /** The environment tmux runs in: $TMUX (and $TMUX_PANE) say which server and session. */
  readonly env: NodeJS.ProcessEnv;
  /** The tmux binary. Default `tmux`. */
  readonly command?: string;
  /** Put before every tmux command (`-L name`): a server of its own, for tests. */
  readonly serverArgs?: readonly string[];
}

interface RunResult {
  readonly ok: boolean;
  readonly stdout: string;
  readonly error: string;
}

/** The window options set on the demo's window (never globally): each pane's title on its border, no dead panes kept. */
const WINDOW_OPTIONS: readonly (readonly [string, string])[] = [
  ['remain-on-exit', 'off'],
  ['pane-border-status', 'top'],
  // A fixed format: the title (the agent sets it, OSC 2) is shown, never expanded again.
  ['pane-border-format', ' #{pane_title} '],
];

export class DemoWindow {
  private windowId: string | undefined;

  constructor(private readonly opts: DemoWindowOptions) {}

  /** The window's id (`@N`) while it is open. */
  get id(): string | undefined {
    return this.windowId;
  }

  /** Starts `argv` in a new pane of the window (opening the window first when there is none). Never concurrently. */
  async open(argv: readonly string[]): Promise<PaneOpening> {
    // One word tmux would run with `sh -c`: a pane's command is always two or more.
    if (argv.length < 2) return { error: 'a pane command needs two words or more' };
    const command = argv.map(tmuxArg); // a word ending in ';' would end the tmux command there
    if (this.windowId !== undefined) {
      const id = this.windowId;
      const target = await this.largestPane(id);
      if (target !== undefined) {
        const split = await this.run(['split-window', '-d', '-t', target, '-P', '-F', PANE_FORMAT, '--', ...command]);
        if (split.ok) {
          await this.run(['select-layout', '-t', id, 'tiled']);
          return parsePane(split.stdout);
        }
        if ((await this.largestPane(id)) !== undefined) return { noRoom: split.error };
      }
      this.windowId = undefined; // closed: its agents ended, or a person closed it
    }
    const opened = await this.run(['new-window', '-d', '-P', '-F', PANE_FORMAT, '-n', DEMO_WINDOW_NAME, '--', ...command]);
    if (!opened.ok) return { error: opened.error };
    const pane = parsePane(opened.stdout);
    if ('error' in pane) return pane;
    this.windowId = pane.windowId;
    const set = WINDOW_OPTIONS.flatMap(([name, value], i) => [...(i > 0 ? [';'] : []), 'set-option', '-w', '-t', pane.windowId, name, value]);
    await this.run(set); // cosmetic but for remain-on-exit, which is off unless a person set it on
    return pane;
  }

  /** Closes the window, whatever still runs in it (tmux hangs up its panes). */
  async close(): Promise<void> {
    const id = this.windowId;
    this.windowId = undefined;
    if (id !== undefined) await this.run(['kill-window', '-t', id]);
  }

  /** Synchronous last resort (process 'exit'). */
  closeSync(): void {
    const id = this.windowId;
    this.windowId = undefined;
    if (id === undefined) return;
    try {
      execFileSync(this.opts.command ?? 'tmux', [...(this.opts.serverArgs ?? []), 'kill-window', '-t', id], { env: this.opts.env, stdio: 'ignore', timeout: TMUX_TIMEOUT_MS });
    } catch {
      // gone already, or tmux is: nothing to close
    }
  }

  /** The pane of `windowId` with the most cells, or undefined when the window is gone. */
  private async largestPane(windowId: string): Promise<string | undefined> {
    const listed = await this.run(['list-panes', '-t', windowId, '-F', '#{pane_id} #{pane_width} #{pane_height}']);
    if (!listed.ok) return undefined;
    let best: { id: string; cells: number } | undefined;
    for (const line of listed.stdout.split('\n')) {
      const m = /^(%\d+) (\d+) (\d+)$/.exec(line);
      if (!m) continue;
      const cells = Number(m[2]) * Number(m[3]);
      if (best === undefined || cells > best.cells) best = { id: m[1]!, cells };
    }
    return best?.id;
  }

  private run(args: readonly string[]): Promise<RunResult> {
    const argv = [...(this.opts.serverArgs ?? []), ...args];
    return new Promise((resolve) => {
      execFile(this.opts.command ?? 'tmux', argv, { env: this.opts.env, timeout: TMUX_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (!err) return resolve({ ok: true, stdout, error: '' });
        const said = String(stderr ?? '').trim().split('\n')[0] ?? '';
        const why = errorCode(err) === 'ENOENT' ? 'tmux is not installed' : said || (err as Error).message;
        resolve({ ok: false, stdout: '', error: `tmux ${args[0]}: ${sanitize(why, 200)}` });
      });
    });
  }
}

function parsePane(stdout: string): DemoPane | { error: string } {
  const m = /^(@\d+) (%\d+) (\d+)$/.exec(stdout.trim());
  if (!m) return { error: `tmux: unexpected answer ${JSON.stringify(sanitize(stdout, 80))}` };
  return { windowId: m[1]!, paneId: m[2]!, pid: Number(m[3]) };
}

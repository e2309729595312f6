// tmux, asked by this machine's provider: which pane each agent runs in (one `list-panes -a` per
// lookup, whatever the number of agents; the parent chains read from /proc, or from ps elsewhere),
// and switching the tmux client to a pane. Without tmux, or without a tmux server, a lookup costs
// nothing and says so once: the answer is kept (no server: for NO_SERVER_RETRY_MS; not installed:
// for good), never an error per refresh.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import psList from 'ps-list';
import { LIST_PANES_FORMAT, matchPanes, MAX_ANCESTRY, parseListPanes, type TmuxPane } from '../core/tmux.js';
import { sanitize } from '../core/sanitize.js';
import { errorCode, parseProcStat, throwIfAborted } from './liveness.js';

export type { TmuxPane };

/** One lookup: every pane of the server, and the pane of each pid that runs in one. */
export type PaneLookup =
  | { readonly available: true; readonly panes: readonly TmuxPane[]; readonly byPid: ReadonlyMap<number, TmuxPane> }
  | { readonly available: false; readonly why: string };

/** What `o` did, in one line for the status line. */
export interface PaneJump {
  readonly ok: boolean;
  readonly text: string;
}

export interface TmuxOptions {
  /** The tmux binary. Default `tmux`. */
  readonly command?: string;
  /** Put before every tmux command: `-L name` or `-S path` for a server of its own (tests). */
  readonly serverArgs?: readonly string[];
  /** The environment tmux runs in; $TMUX says whether this process is inside a tmux client. Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** The monotonic clock of the no-server retry. Default performance.now. */
  readonly monotonic?: () => number;
}

/** After tmux said "no server", no list-panes for this long. */
export const NO_SERVER_RETRY_MS = 15_000;
/** tmux answers within milliseconds; one that does not is treated as absent this time. */
const TMUX_TIMEOUT_MS = 2_000;

export interface TmuxControl {
  /** The pane of each of `pids` (those that run in one), from one list-panes. Throws only on abort. */
  findPanes(pids: readonly number[], opts?: { readonly signal?: AbortSignal }): Promise<PaneLookup>;
  /** Switch this process's tmux client to the pane; from outside tmux, say how to attach to it. */
  jumpToPane(pane: TmuxPane): Promise<PaneJump>;
}

interface RunResult {
  readonly ok: boolean;
  readonly stdout: string;
  /** The first line tmux said on stderr, or why it could not run. */
  readonly error: string;
  readonly missing: boolean;
}

export function createTmux(opts: TmuxOptions = {}): TmuxControl {
  const command = opts.command ?? 'tmux';
  const serverArgs = opts.serverArgs ?? [];
  const env = opts.env ?? process.env;
  const monotonic = opts.monotonic ?? (() => performance.now());
  let missing = false;
  let quietUntil = -Infinity;

  const run = (args: readonly string[], signal?: AbortSignal): Promise<RunResult> =>
    new Promise((resolve) => {
      execFile(command, [...serverArgs, ...args], { env, timeout: TMUX_TIMEOUT_MS, signal, encoding: 'utf8', maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
        if (!err) return resolve({ ok: true, stdout, error: '', missing: false });
        const code = errorCode(err);
        const said = String(stderr ?? '').trim().split('\n')[0] ?? '';
        resolve({ ok: false, stdout: '', error: sanitize(said || code || (err as Error).message, 160), missing: code === 'ENOENT' });
      });
    });

  return {
    async findPanes(pids, { signal } = {}) {
      throwIfAborted(signal);
      if (missing) return { available: false, why: 'tmux is not installed' };
      if (monotonic() < quietUntil) return { available: false, why: 'no tmux server' };
      const listed = await run(['list-panes', '-a', '-F', LIST_PANES_FORMAT], signal);
      throwIfAborted(signal);
      if (!listed.ok) {
        if (listed.missing) missing = true;
        else quietUntil = monotonic() + NO_SERVER_RETRY_MS;
        return { available: false, why: listed.missing ? 'tmux is not installed' : listed.error };
      }
      const panes = parseListPanes(listed.stdout);
      if (panes.length === 0 || pids.length === 0) return { available: true, panes, byPid: new Map() };
      const parents = await readParents(pids, new Set(panes.map((p) => p.pid)), signal);
      return { available: true, panes, byPid: matchPanes(pids, parents, panes) };
    },

    async jumpToPane(pane) {
      if (!env.TMUX) return { ok: false, text: `not inside tmux: attach to it with  tmux attach -t ${shellWord(pane.target)}` };
      // switch-client brings the client to the pane's session; select-window and select-pane make
      // that pane the one shown, whatever the session showed last.
      const r = await run(['switch-client', '-t', pane.id, ';', 'select-window', '-t', pane.id, ';', 'select-pane', '-t', pane.id]);
      if (r.ok) return { ok: true, text: `switched to tmux pane ${pane.target}` };
      return { ok: false, text: `cannot switch to tmux pane ${pane.target}: ${r.missing ? 'tmux is not installed' : r.error}` };
    },
  };
}

/** A target as the person would type it after `tmux attach -t`: quoted when it holds more than plain characters. */
function shellWord(text: string): string {
  return /^[\w.:%@/+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * pid → ppid for the pids and their ancestors, up to a pane's process (`stopAt`) or init. From
 * /proc on Linux (only the chains wanted are read, each process once); elsewhere one ps listing.
 */
export async function readParents(pids: readonly number[], stopAt: ReadonlySet<number>, signal?: AbortSignal): Promise<Map<number, number>> {
  const parents = new Map<number, number>();
  if (process.platform !== 'linux') {
    for (const p of await psList()) parents.set(p.pid, p.ppid);
    throwIfAborted(signal);
    return parents;
  }
  for (const pid of pids) {
    let at = pid;
    for (let step = 0; step < MAX_ANCESTRY && at > 1 && !stopAt.has(at) && !parents.has(at); step++) {
      const ppid = readPpid(at);
      if (ppid === undefined) break;
      parents.set(at, ppid);
      at = ppid;
    }
  }
  throwIfAborted(signal);
  return parents;
}

function readPpid(pid: number): number | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.ppid;
  } catch {
    return undefined;
  }
}

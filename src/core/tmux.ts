// Which tmux pane an agent runs in, and the words tmux's status bar reads: pure. The OS layer
// hands in the output of one `tmux list-panes -a -F LIST_PANES_FORMAT` and a pid → parent map;
// an agent is in the pane whose process (the pane's shell, usually) is the agent or one of its
// ancestors.
import { sanitize } from './sanitize.js';

/** One tmux pane: its process, where it is (`work:2.1`) and its stable id (`%7`). */
export interface TmuxPane {
  /** The pane's own process: the shell or command it was started with. */
  readonly pid: number;
  /** `session:window.pane`, as typed after `tmux attach -t` (sanitized). */
  readonly target: string;
  /** `%N`: stays the same while the pane lives, whatever its window is renumbered to. */
  readonly id: string;
}

/** What `list-panes -a -F` prints per pane: pid first, id last, the target between (a session name may hold spaces). */
export const LIST_PANES_FORMAT = '#{pane_pid} #{session_name}:#{window_index}.#{pane_index} #{pane_id}';

/** How far up the parent chain an agent's pane is looked for: deeper than any real nesting, short of a loop. */
export const MAX_ANCESTRY = 64;

/** The panes of one `list-panes -a -F LIST_PANES_FORMAT`; lines that do not read as a pane are left out. */
export function parseListPanes(text: string): TmuxPane[] {
  const panes: TmuxPane[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+) (.+) (%\d+)$/.exec(line.replace(/\r$/, ''));
    if (!m) continue;
    const pid = Number(m[1]);
    if (!Number.isSafeInteger(pid) || pid < 1) continue;
    panes.push({ pid, target: sanitize(m[2], 80), id: m[3]! });
  }
  return panes;
}

/**
 * The pane `pid` runs in: the first pane whose process is `pid` or an ancestor of it, following
 * `parentOf` (pid → ppid). Stops at init (pid 1) or 0, at a pid whose parent is unknown, at a
 * loop, and after MAX_ANCESTRY steps.
 */
export function paneOf(pid: number, parentOf: ReadonlyMap<number, number>, panesByPid: ReadonlyMap<number, TmuxPane>): TmuxPane | undefined {
  const seen = new Set<number>();
  let at: number | undefined = pid;
  for (let step = 0; at !== undefined && at > 1 && step <= MAX_ANCESTRY; step++) {
    const pane = panesByPid.get(at);
    if (pane) return pane;
    if (seen.has(at)) return undefined;
    seen.add(at);
    at = parentOf.get(at);
  }
  return undefined;
}

/** Every pid's pane, for the pids that have one. */
export function matchPanes(pids: Iterable<number>, parentOf: ReadonlyMap<number, number>, panes: readonly TmuxPane[]): Map<number, TmuxPane> {
  const byPid = new Map(panes.map((p) => [p.pid, p]));
  const out = new Map<number, TmuxPane>();
  if (byPid.size === 0) return out;
  for (const pid of pids) {
    const pane = paneOf(pid, parentOf, byPid);
    if (pane) out.set(pid, pane);
  }
  return out;
}

/**
 * tmux's status bar in colour: each count in its colour, then back to the bar's own style
 * (`#[fg=red]2 ghost#[default]`). `parts` are [text, colour] pairs; colours are 16-colour names.
 * A `#` in a text is doubled, so tmux prints it instead of reading a style or a format.
 */
export function tmuxStyled(parts: readonly (readonly [string, string])[]): string {
  return parts.map(([text, colour]) => `#[fg=${colour}]${text.replace(/#/g, '##')}#[default]`).join(' ');
}

// What a demo agent shows in its own tmux pane (pane-agents.ts), for the person `o` brought there:
// who it is, its pid, what it is staged as, then each thing it does, one timestamped line each (its
// ports are in those lines). The pane's title (on the window's pane borders) says who it is too.
import { sanitize } from '../core/sanitize.js';

/** What each role is staged as, in the words of the verdict it earns. */
const STAGED_AS: Readonly<Record<string, string>> = {
  live: 'live: a healthy agent, registered the way pi-socket does',
  reused: 'reused: a live process whose entry says it started an hour before it did (a recycled pid)',
  superseded: 'superseded: one process, two sessions; the older one is superseded by the newer',
  pending: 'pending: a pending-<pid> id, live and resolving; it resolves after a while',
  offline: 'offline: registered, then closed its connection; the process lives on',
  supervisor: 'the ghost factory: it registers others and kills them (ghost, stale-claim, pending straggler, zombie, remote), a new ghost every 30 s',
};

/** The pane's title: who runs there, and its pid (short: tiled panes are narrow). */
export function paneTitle(role: string, name: string, pid: number): string {
  return sanitize(`${role} ${name} (${pid})`, 100);
}

/** The escape sequence that sets a terminal's (tmux: the pane's) title. */
export function titleSequence(title: string): string {
  return `\u001b]2;${sanitize(title, 100)}\u001b\\`;
}

/** The first lines of the pane. */
export function paneHeader(opts: { role: string; name: string; flags: readonly string[]; pid: number; url: string }): string[] {
  const stagedAs = STAGED_AS[opts.role] ?? opts.role;
  const claim = opts.flags.includes('--claim') ? '; it also holds a claim on its folder (held)' : '';
  return [
    sanitize(`ghostwatch demo agent: ${opts.role} ${opts.name}, pid ${opts.pid}`, 200),
    sanitize(`staged as ${stagedAs}${claim}`, 300),
    sanitize(`registry ${opts.url}; it runs until the demo ends`, 200),
    // `o` brought the person here from the monitor's window: the way back.
    "back to the monitor: tmux's last-window (the prefix, then l)",
    '',
  ];
}

/** One thing the agent did, as the pane shows it: `HH:MM:SS text`. */
export function paneLine(text: string, at: Date): string {
  const hms = [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return `${hms} ${sanitize(text, 500)}`;
}

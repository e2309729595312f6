// What the benches that run the built CLI in tmux panes share (idle, fleet): a private tmux server
// and its panes, waiting for what a pane shows, and a process's CPU time from /proc.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { linuxClock } from '../src/os/liveness.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(fn: () => T | undefined | false, timeoutMs: number, what: string, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** utime + stime of a process (with `children`, plus cutime + cstime: its reaped children), in seconds of CPU. Throws when it is gone. */
export function cpuSeconds(pid: number, children = false): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields 14 to 17 of stat; fields[0] is field 3.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const own = Number(f[11]) + Number(f[12]);
  return (children ? own + Number(f[13]) + Number(f[14]) : own) / (linuxClock()?.clkTck ?? 100);
}

export interface TmuxServer {
  run(...args: string[]): string;
  capture(target: string): string;
  /** A new session `name` running `command` in a columns × rows pane; returns the pane's pid (with `exec`, the command's own). */
  newPane(name: string, command: string): number;
  /** Kills the server, if it ever started, and removes its socket (kill-server leaves it behind). */
  close(): void;
}

/** A private tmux server (-L socket, no config file). */
export function tmuxServer(socket: string, columns: number, rows: number): TmuxServer {
  let socketPath: string | undefined;
  const run = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  return {
    run,
    capture: (target) => run('capture-pane', '-p', '-t', target),
    newPane(name, command) {
      run('-f', '/dev/null', 'new-session', '-d', '-s', name, '-x', String(columns), '-y', String(rows), command);
      socketPath ??= run('display', '-p', '#{socket_path}').trim();
      return Number(run('display', '-p', '-t', name, '#{pane_pid}').trim());
    },
    close() {
      try {
        execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
      } catch {
        // never started
      }
      if (socketPath) rmSync(socketPath, { force: true });
    },
  };
}

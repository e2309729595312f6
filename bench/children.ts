// Real child processes for the benches: live ones to probe, and dead ones made by SIGKILL.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export function spawnSleep(seconds = 300): Promise<ChildProcess & { pid: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('spawn', () => resolve(child as ChildProcess & { pid: number }));
  });
}

/** SIGKILL and wait for 'exit': by then Node has reaped the child, so its pid is truly gone. */
export function killAndReap(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** tmux is installed (the UI and flood figures drive the real monitor in it). */
export function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

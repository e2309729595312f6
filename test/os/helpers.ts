// Shared helpers for the OS tests: real child processes, no mocks.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export const isLinux = process.platform === 'linux';

export function spawnSleep(seconds = 30): ChildProcess & { pid: number } {
  const child = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
  if (child.pid === undefined) throw new Error('spawn sleep failed');
  return child as ChildProcess & { pid: number };
}

/** SIGKILL and wait for 'exit': Node has reaped the child by then, so its pid is really gone. */
export function killAndReap(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function pollUntil<T>(fn: () => T | undefined, timeoutMs: number): Promise<T | undefined> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined || Date.now() > end) return v;
    await sleepMs(20);
  }
}

/** Children of `pid`: /proc/<pid>/task/<pid>/children when the kernel has it, else a /proc scan. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    const found: number[] = [];
    for (const e of readdirSync('/proc')) {
      if (!/^\d+$/.test(e)) continue;
      try {
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[1]);
        if (ppid === pid) found.push(Number(e));
      } catch {
        // vanished mid-scan
      }
    }
    return found;
  }
}

/** A pid (not 1) owned by another user, or undefined. */
export function otherUsersPid(): number | undefined {
  const me = process.getuid?.();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || e === '1') continue;
    try {
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${e}/status`, 'utf8'))?.[1];
      if (uid !== undefined && Number(uid) !== me) return Number(e);
    } catch {
      // vanished mid-scan
    }
  }
  return undefined;
}

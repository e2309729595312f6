// Real processes for the tests, no mocks: a sleeper that stands for a live agent, a pid that was
// real a moment ago and is gone, a zombie, the children of a process, and a kill that waits until
// Node has reaped the child (so its pid is really gone).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, afterEach } from 'vitest';
import { stageZombie, type StagedZombie } from '../../src/demo/zombie.js';

export const isLinux = process.platform === 'linux';

export type LiveChild = ChildProcess & { pid: number };

/** kill(pid, 0): the process exists (EPERM too: another user's process is still a process). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A `sleep` child that the caller kills (killAndReap); see `sleeper` for one killed after the test. */
export function spawnSleep(seconds = 30): LiveChild {
  const child = spawn('sleep', [String(seconds)], { stdio: 'ignore' });
  if (child.pid === undefined) throw new Error('spawn sleep failed');
  return child as LiveChild;
}

/** SIGKILL and wait for 'exit': Node has reaped the child by then, so its pid is really gone. */
export function killAndReap(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

const afterThisTest: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(afterThisTest.splice(0).map(killAndReap));
});

/** A `sleep` child that is killed and reaped when the current test ends. */
export function sleeper(seconds = 30): LiveChild {
  const child = spawnSleep(seconds);
  afterThisTest.push(child);
  return child;
}

const afterThisFile: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(afterThisFile.splice(0).map(killAndReap));
});

/** A `sleep` child that lives until every test of the file has run (for what a beforeAll sets up). */
export function fileSleeper(seconds = 300): LiveChild {
  const child = spawnSleep(seconds);
  afterThisFile.push(child);
  return child;
}

/** A pid that was real a moment ago and is now gone: a child killed and reaped. */
export async function deadPid(): Promise<number> {
  const child = spawnSleep();
  await killAndReap(child);
  return child.pid;
}

/**
 * A real zombie (state Z): its parent is a `sleep` that never reaps it. The parent is killed when
 * the current test ends, and init reaps the zombie.
 */
export async function zombie(): Promise<StagedZombie> {
  const staged = await stageZombie();
  afterThisTest.push(staged.parent);
  return staged;
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

/**
 * A child that burns one core (a shell's busy loop), killed and reaped when the current test ends,
 * and ending by itself once its parent is gone. On a machine busy with other sessions' work the
 * scheduler shares the cores between sessions (autogroups), whatever a process's own nice: the
 * burner runs in a session of its own, and as root raises that session to nice -20, so that it
 * really gets most of a core.
 */
export function burner(): LiveChild {
  const script = `echo -20 > /proc/self/autogroup 2>/dev/null; p=$PPID; while kill -0 $p 2>/dev/null; do :; done`;
  const child = spawn('sh', ['-c', script], { stdio: 'ignore', detached: true });
  if (child.pid === undefined) throw new Error('spawn sh failed');
  afterThisTest.push(child);
  return child as LiveChild;
}

/**
 * A node child that holds `mib` MiB of memory it has written (resident, not just reserved), and
 * prints "ready" once it does; killed and reaped when the current test ends.
 */
export async function allocator(mib: number): Promise<LiveChild> {
  const script = `globalThis.kept = Buffer.alloc(${mib} * 1024 * 1024, 1); process.stdout.write('ready\\n'); setInterval(() => {}, 60000);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  if (child.pid === undefined) throw new Error('spawn node failed');
  afterThisTest.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => String(d).includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the allocator exited (${code}) before it was ready`)));
  });
  return child as LiveChild;
}

// A real zombie, on demand: `sh -c 'sleep 0.2 & exec sleep N'` backgrounds a child, then becomes
// a `sleep` that never calls wait(); when the child exits it stays defunct (state Z) for as long
// as its parent lives. Killing the parent hands the zombie to init, which reaps it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { childEnv } from './child-env.js';
import { readdirSync, readFileSync } from 'node:fs';
import { sleep } from './agent-context.js';

/** ~24 days: longer than any demo runs; short enough for any `sleep` (32-bit seconds). */
const PARENT_SECONDS = 2_147_483;

export interface StagedZombie {
  /** The defunct process. */
  readonly pid: number;
  /** Unix ms, just before its parent was spawned: the zombie started right after. */
  readonly startedAt: number;
  /** The `sleep` that never reaps it. */
  readonly parent: ChildProcess & { pid: number };
}

export async function stageZombie(timeoutMs = 5_000): Promise<StagedZombie> {
  const startedAt = Date.now();
  const parent = spawn('sh', ['-c', `sleep 0.2 & exec sleep ${PARENT_SECONDS}`], { stdio: 'ignore', env: childEnv(process.env) });
  if (parent.pid === undefined) throw new Error('could not start sh for the zombie');
  const staged = parent as ChildProcess & { pid: number };
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const zombie = childrenOf(staged.pid).find((c) => c.state === 'Z');
    if (zombie) return { pid: zombie.pid, startedAt, parent: staged };
    await sleep(50);
  }
  staged.kill('SIGKILL');
  throw new Error(`no zombie child of pid ${staged.pid} within ${timeoutMs} ms`);
}

interface Child {
  readonly pid: number;
  readonly state: string;
}

/** Children of `ppid` with their state: /proc on Linux (children file, else a ppid scan), else ps. */
export function childrenOf(ppid: number): Child[] {
  if (process.platform !== 'linux') return childrenFromPs(ppid);
  let pids: number[];
  try {
    pids = readFileSync(`/proc/${ppid}/task/${ppid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
  }
  const found: Child[] = [];
  for (const pid of pids) {
    const stat = procStat(pid);
    if (stat && stat.ppid === ppid) found.push({ pid, state: stat.state });
  }
  return found;
}

function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The name may hold spaces and parentheses: the fields start after the LAST ')'.
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return state !== undefined && ppid !== undefined ? { state, ppid: Number(ppid) } : undefined;
  } catch {
    return undefined; // gone between the listing and the read
  }
}

function childrenFromPs(ppid: number): Child[] {
  const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat='], { encoding: 'utf8', env: childEnv(process.env, { LC_ALL: 'C' }) });
  const found: Child[] = [];
  for (const line of out.split('\n')) {
    const [pid, parent, stat] = line.trim().split(/\s+/);
    if (parent !== undefined && Number(parent) === ppid && stat !== undefined) found.push({ pid: Number(pid), state: stat[0]! });
  }
  return found;
}

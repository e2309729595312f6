// OS-layer figures: liveness probe cost over 1,000 real pids (half alive, half dead), the
// cost of one process table scan with each strategy, and of finding the process behind a port.
import { killAndReap, spawnSleep } from './children.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { probePids } from '../src/os/liveness.js';
import { createOwnerHints, portOwners } from '../src/os/port-owner.js';
import { scanProcessTable, type ProcessTableStrategy } from '../src/os/process-table.js';

export type Figures = Record<string, { value: number; unit: string }>;

const LIVE = 500;
const DEAD = 500;
const PROBE_RUNS = 9;
const SCAN_RUNS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

/** Median wall time of `runs` calls after one warm-up call. */
async function timeIt(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return round(median(times));
}



/** Spawn `n` children, `width` at a time, so a slow fork never piles up thousands of pending spawns. */
async function spawnMany(n: number, into: ChildProcess[], width = 50): Promise<number[]> {
  const pids: number[] = [];
  for (let i = 0; i < n; i += width) {
    const batch = await Promise.all(Array.from({ length: Math.min(width, n - i) }, spawnSleep));
    into.push(...batch);
    pids.push(...batch.map((c) => c.pid));
  }
  return pids;
}

async function scanFigure(strategy: ProcessTableStrategy): Promise<{ ms: number; count: number } | undefined> {
  const first = await scanProcessTable({ strategy });
  if (!first.ok) return undefined;
  const ms = await timeIt(SCAN_RUNS, () => scanProcessTable({ strategy }));
  return { ms, count: first.processes.size };
}

/** A child listening on 127.0.0.1 (newest pid, so an unhinted walk reads nearly every process first). */
async function spawnListener(): Promise<{ child: ChildProcess; port: number }> {
  const script = "const s=require('node:net').createServer();s.listen({host:'127.0.0.1',port:0},()=>console.log(s.address().port))";
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`listener exited (${code})`)));
  });
  return { child, port: Number(line) };
}

/** portOwners of one port: walking the whole process table (no hints), and with the owner hinted. */
async function portOwnerFigures(figures: Figures): Promise<void> {
  if (process.platform !== 'linux') return;
  const { child, port } = await spawnListener();
  try {
    const found = await portOwners([port]);
    if (!found.ok || found.ports.get(port)?.owner?.pid !== child.pid) return;
    figures.port_owner_ms = { value: await timeIt(SCAN_RUNS, () => portOwners([port])), unit: 'ms' };
    const hints = createOwnerHints();
    figures.port_owner_hinted_ms = { value: await timeIt(PROBE_RUNS, () => portOwners([port], { hints })), unit: 'ms' };
  } finally {
    await killAndReap(child);
  }
}

export async function osFigures(): Promise<Figures> {
  const figures: Figures = {};

  // Scans first, at the machine's own process count (before we add 500 sleeps).
  const proc = process.platform === 'linux' ? await scanFigure('proc') : undefined;
  const pslist = await scanFigure('ps-list');
  if (proc) figures.proc_scan_ms = { value: proc.ms, unit: 'ms' };
  if (pslist) figures.pslist_scan_ms = { value: pslist.ms, unit: 'ms' };
  const count = proc?.count ?? pslist?.count;
  if (count !== undefined) figures.process_count = { value: count, unit: 'processes' };
  await portOwnerFigures(figures);

  const children: ChildProcess[] = [];
  try {
    const dead = await spawnMany(DEAD, children);
    await Promise.all(children.splice(0).map(killAndReap));
    const live = await spawnMany(LIVE, children);
    // Interleave so chunks mix live and dead pids, as a real registry would.
    const pids = live.flatMap((p, i) => [p, dead[i] as number]);

    figures.probe_1k_kill_ms = { value: await timeIt(PROBE_RUNS, () => probePids(pids)), unit: 'ms' };
    figures.probe_1k_full_ms = { value: await timeIt(PROBE_RUNS, () => probePids(pids, { full: true })), unit: 'ms' };
  } finally {
    await Promise.all(children.map(killAndReap));
  }
  return figures;
}

// A real `ghostwatch serve` (the built CLI) in a process of its own for the serve figures, its
// memory as /proc tells it, the nodes the figures register and a client that measures replies.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { MEASURED_BIN } from './paths.js';

export interface ServeProcess {
  readonly proc: ChildProcess;
  readonly url: string;
  readonly port: number;
  /** SIGTERM, and resolves once it has exited. */
  stop(): Promise<void>;
}

/** GHOSTWATCH_BENCH_BIN names another build to measure (an older commit's launcher). */
export async function startServe(extra: readonly string[] = []): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [MEASURED_BIN, 'serve', '--port', '0', '--ttl', '3600', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    proc.stderr!.setEncoding('utf8');
    proc.stderr!.on('data', (chunk: string) => {
      err += chunk;
      const m = /listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`serve exited (${code}): ${err}`)));
  });
  proc.stderr!.resume();
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  return { proc, url, port: Number(new URL(url).port), stop };
}

/** VmRSS (now) or VmHWM (the peak so far) of a process, in MB; NaN once it is gone. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
    return kb / 1024;
  } catch {
    return Number.NaN;
  }
}

/** The `i`th node of a registry of agents on five machines. */
export function params(i: number): Record<string, unknown> {
  const hex = i.toString(16).padStart(12, '0');
  return { id: `019a3f2c-7b1e-7c00-8000-${hex}`, machine: `devbox-${i % 5}`, cwd: `/home/dev/work/project-${i % 97}`, port: 1024 + (i % 60_000), status: 'active', pid: 10_000 + i };
}

/** The `i`th agent of the reconnect storm (on another machine: no pid of this host is read). */
export function stormAgent(i: number): Record<string, unknown> {
  const hex = i.toString(16).padStart(12, '0');
  return { id: `019a3f2c-7b1e-7c00-9000-${hex}`, machine: 'storm-box', cwd: `/home/dev/work/project-${i % 97}`, port: 8080 + i, status: 'active', pid: 400_000 + i };
}

/** A reading client that pings every 20 ms; resolves with every round trip in ms. */
export function pinger(url: string, until: Promise<void>): Promise<number[]> {
  const ws = new WebSocket(url);
  const times: number[] = [];
  let sentAt = 0;
  let serial = 0;
  let stopped = false;
  void until.then(() => (stopped = true));
  return new Promise((resolve, reject) => {
    const next = (): void => {
      if (stopped) {
        ws.terminate();
        resolve(times);
        return;
      }
      sentAt = performance.now();
      ws.send(JSON.stringify({ id: `p${++serial}`, method: 'ping' }));
    };
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: string };
      if (m.id !== `p${serial}`) return;
      times.push(performance.now() - sentAt);
      setTimeout(next, 20);
    });
    ws.once('open', () => setTimeout(next, 20));
    ws.once('close', () => resolve(times)); // closed by serve: what it measured so far
    ws.once('error', reject);
  });
}


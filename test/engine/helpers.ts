// Real parts for the engine tests: a real `ghostwatch serve` registry, agents that register the
// way pi-socket does (their own socket, kept open), real child processes and a real audit log.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import WebSocket from 'ws';
import type { Finding } from '../../src/core/types.js';
import { createEngine, type EngineOptions, type EngineSnapshot, type LiveEngine } from '../../src/engine/index.js';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import type { Source } from '../../src/sources/types.js';
import { childrenOf, killAndReap } from '../support/processes.js';
import { until } from '../support/wait.js';

export { childrenOf, deadPid, isLinux, killAndReap, sleeper, spawnSleep } from '../support/processes.js';
export { sleepMs, until } from '../support/wait.js';

export const HOST = hostname();

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
export function onCleanup(fn: () => unknown): void {
  cleanups.push(fn);
}

export async function serve(): Promise<RegistryServer> {
  const s = await startRegistryServer({ port: 0, log: () => {} });
  onCleanup(() => s.close());
  return s;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-engine-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A hypivisor source that re-syncs rarely: in these tests only the registry's events move it. */
export function source(url: string): HypivisorSource {
  return new HypivisorSource({ url, requestTimeoutMs: 2000, resyncIntervalMs: 60_000, backoffInitialMs: 20 });
}

export function engineFor(sources: Source[], opts: Partial<EngineOptions> = {}): LiveEngine {
  const engine = createEngine({ sources, hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), ...opts });
  onCleanup(() => engine.stop());
  engine.start();
  return engine;
}

export function track(child: ChildProcess): ChildProcess & { pid: number } {
  onCleanup(() => killAndReap(child));
  return child as ChildProcess & { pid: number };
}

let nextPort = 41_000 + Math.floor(Math.random() * 10_000);

/** A pi-socket-like agent: its own connection, registers itself, keeps the socket open. */
export async function agent(url: string, id: string, fields: Record<string, unknown> = {}): Promise<WebSocket> {
  const ws = new WebSocket(url);
  onCleanup(() => ws.terminate());
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  await register(ws, id, fields);
  return ws;
}

/** One `register` on an agent's socket (the registry evicts an older entry on the same machine:port). */
export async function register(ws: WebSocket, id: string, fields: Record<string, unknown> = {}): Promise<void> {
  const params = { id, machine: HOST, cwd: '/repo', port: nextPort++, status: 'active', ...fields };
  const answer = await call(ws, 'register', params);
  if (answer.error !== undefined) throw new Error(`register ${id}: ${answer.error}`);
}

export async function call(ws: WebSocket, method: string, params?: unknown): Promise<{ result?: unknown; error?: string }> {
  const id = `c-${Math.random()}`;
  return new Promise((resolve) => {
    const on = (data: WebSocket.RawData): void => {
      const m = JSON.parse(String(data)) as { id?: string; result?: unknown; error?: string };
      if (m.id !== id) return;
      ws.off('message', on);
      resolve(m);
    };
    ws.on('message', on);
    ws.send(JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }));
  });
}

/** The registry's own list, over a fresh connection: what is really there, not what we think. */
export async function listNodes(url: string): Promise<{ id: string; pid?: number }[]> {
  const ws = new WebSocket(url);
  await new Promise((resolve) => ws.once('open', resolve));
  const res = await call(ws, 'list_nodes');
  ws.terminate();
  return res.result as { id: string; pid?: number }[];
}

export function finding(snap: EngineSnapshot, id: string): Finding | undefined {
  return snap.findings.find((f) => f.id === id);
}

export function verdictOf(engine: LiveEngine, id: string): string | undefined {
  return finding(engine.getSnapshot(), id)?.verdict;
}

/** Counts publishes from now on. */
export function countPublishes(engine: LiveEngine): { readonly count: number } {
  const counter = { count: 0 };
  onCleanup(engine.subscribe(() => counter.count++));
  return counter;
}

/** The pid namespace inode of a process ("4026532178"), from /proc/<pid>/ns/pid. */
export function pidNamespaceOf(pid: number): string {
  return /\[(\d+)\]/.exec(readlinkSync(`/proc/${pid}/ns/pid`))![1]!;
}

/**
 * A pid namespace of its own, as a container has (unshare --pid: needs root): `sh` as its pid 1
 * and `sleep` as its pid 2. Their host pids and the namespace; killed at the end of the test.
 */
export async function inPidNamespace(): Promise<{ unshare: ChildProcess; shHost: number; sleepHost: number; ns: string }> {
  const unshare = spawn('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', 'sleep 300 & wait'], { stdio: 'ignore' });
  onCleanup(() => unshare.kill('SIGKILL'));
  const shHost = (await until(() => childrenOf(unshare.pid!)[0], 5_000)) as number;
  const sleepHost = (await until(() => childrenOf(shHost)[0], 5_000)) as number;
  onCleanup(() => {
    for (const pid of [sleepHost, shHost]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
  return { unshare, shHost, sleepHost, ns: pidNamespaceOf(sleepHost) };
}

/** Resolves once the child has exited (and been reaped by Node). */
export async function exited(child: ChildProcess): Promise<void> {
  await until(() => (child.exitCode !== null || child.signalCode !== null ? true : undefined), 5_000);
}

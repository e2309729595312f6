// Real TCP listeners in child processes for the port-owner tests, and a bundle of the module
// that other users (nobody) and other network namespaces can run.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

/** Outside CI a missing facility skips the test; under CI=true it fails it instead. */
export function skipOrFail(ctx: { skip: (note?: string) => never }, reason: string): never {
  if (process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0') {
    throw new Error(`cannot run under CI: ${reason}`);
  }
  return ctx.skip(reason);
}

/**
 * A child that listens on `argv[2]` port `argv[3]` (default 0), prints "port <n>" (or "error <code>"), closes its
 * server on "close" from stdin and then prints "closed".
 */
const LISTENER_JS = `
const net = require('node:net');
const server = net.createServer((c) => c.destroy());
server.once('error', (e) => { process.stdout.write('error ' + (e.code || e.message) + '\\n'); process.exit(3); });
server.listen({ host: process.argv[2], port: Number(process.argv[3] || 0) }, () => process.stdout.write('port ' + server.address().port + '\\n'));
process.stdin.on('data', (d) => { if (String(d).includes('close')) server.close(() => process.stdout.write('closed\\n')); });
`;

/**
 * Prints JSON { listeners: [{ host, pid, port }], result } from inside whatever network namespace
 * it runs in: its own listener children on argv[3..], then portOwners of their ports.
 */
const NETNS_PROBE_MJS = `
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
const { portOwners } = await import(process.argv[2]);
const children = [];
const listeners = [];
try {
  for (const host of process.argv.slice(3)) {
    const child = spawn(process.execPath, [new URL('./listener.cjs', import.meta.url).pathname, host], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    const line = await new Promise((resolve) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => resolve('exit ' + code));
    });
    listeners.push({ host, pid: child.pid, port: Number(String(line).split(' ')[1]), line });
  }
  const r = await portOwners(listeners.map((l) => l.port));
  process.stdout.write(JSON.stringify({ listeners, result: r.ok ? { ...r, ports: [...r.ports.values()] } : r }));
} finally {
  for (const c of children) c.kill('SIGKILL');
}
`;

/** Prints JSON of portOwners(argv[3..] as ports), from the bundle at argv[2]. */
const PROBE_MJS = `
const { portOwners } = await import(process.argv[2]);
const r = await portOwners(process.argv.slice(3).map(Number));
process.stdout.write(JSON.stringify(r.ok ? { ...r, ports: [...r.ports.values()] } : r));
`;

export interface Listener {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** Close the server; the process keeps running. */
  close(): Promise<void>;
}

export interface Workbench {
  /** A world-readable folder (nobody must reach it). */
  readonly dir: string;
  /** ESM bundle of src/os/port-owner.ts. */
  readonly bundle: string;
  readonly listenerScript: string;
  readonly netnsProbe: string;
  readonly probe: string;
  remove(): void;
}

export async function makeWorkbench(): Promise<Workbench> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-portowner-'));
  chmodSync(dir, 0o755);
  const bundle = join(dir, 'port-owner.mjs');
  await build({
    entryPoints: [new URL('../../src/os/port-owner.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    logLevel: 'silent',
  });
  const listenerScript = join(dir, 'listener.cjs');
  const netnsProbe = join(dir, 'netns-probe.mjs');
  writeFileSync(listenerScript, LISTENER_JS);
  const probe = join(dir, 'probe.mjs');
  writeFileSync(netnsProbe, NETNS_PROBE_MJS);
  writeFileSync(probe, PROBE_MJS);
  for (const f of [bundle, listenerScript, netnsProbe, probe]) chmodSync(f, 0o644);
  return { dir, bundle, listenerScript, netnsProbe, probe, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The child's stdout lines, as they come. */
function lines(child: ChildProcess): { next(): Promise<string> } {
  let buffered = '';
  const queue: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (d: string) => {
    buffered += d;
    let i: number;
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const w = waiting.shift();
      if (w) w(line);
      else queue.push(line);
    }
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.splice(0)) w(`exit ${code ?? signal}`);
  });
  return {
    next: () => {
      const l = queue.shift();
      if (l !== undefined) return Promise.resolve(l);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(`exit ${child.exitCode ?? child.signalCode}`);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/**
 * Start a listener child on `host` and `port` (0: any free one). Resolves with the port, or with the reason it
 * could not listen (e.g. "error EADDRNOTAVAIL" when there is no ::1) — the child is then gone.
 */
export async function startListener(wb: Workbench, host: string, into: ChildProcess[], port = 0): Promise<Listener | string> {
  const child = spawn(process.execPath, [wb.listenerScript, host, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  into.push(child);
  const out = lines(child);
  const first = await out.next();
  const bound = /^port (\d+)$/.exec(first)?.[1];
  if (bound === undefined || child.pid === undefined) return first;
  return {
    child,
    pid: child.pid,
    port: Number(bound),
    close: async () => {
      child.stdin?.write('close\n');
      const l = await out.next();
      if (l !== 'closed') throw new Error(`listener did not close: ${l}`);
    },
  };
}

export interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Set when the command itself could not be started (e.g. ENOENT). */
  readonly spawnError?: string;
}

function run(command: string, args: readonly string[], cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', (e: NodeJS.ErrnoException) => resolve({ code: null, stdout, stderr, spawnError: e.code ?? e.message }));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Run `args` under setpriv as nobody:nogroup with no supplementary groups. */
export const runAsNobody = (wb: Workbench, args: readonly string[]): Promise<Ran> =>
  run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...args], wb.dir);

/** Run `args` in a new network namespace of its own (unshare --net): only a loopback, down, exists there. */
export const runInNewNetns = (wb: Workbench, args: readonly string[]): Promise<Ran> =>
  run('unshare', ['--net', '--', ...args], wb.dir);

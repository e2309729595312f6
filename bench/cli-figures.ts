// Start-up figures of the CLI as a person runs it: `ghostwatch status` against a real registry
// (the line a tmux status bar waits for), beside a bare `node -e 0` measured in the same run.
import { execFile, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { startRegistryServer } from '../src/server/index.js';
import { type Figures, median } from './figures.js';

const BIN = fileURLToPath(new URL('../../bin/ghostwatch.js', import.meta.url));

/** Wall time of one run. Asynchronous: the registry answering it lives in this process. */
function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  // status exits 1 when it finds problems: only the time counts here.
  return new Promise((resolve) => execFile(process.execPath, args, { env }, () => resolve(performance.now() - t0)));
}

async function times(n: number, args: string[], env: NodeJS.ProcessEnv): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await timeRun(args, env));
  return out;
}

export async function cliFigures(): Promise<Figures> {
  const server = await startRegistryServer({ port: 0, log: () => {} });
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const ws = new WebSocket(server.url);
  try {
    await new Promise((r) => ws.once('open', r));
    for (let i = 0; i < 20; i++) {
      const answered = new Promise((r) => ws.once('message', r));
      ws.send(JSON.stringify({ id: `r${i}`, method: 'register', params: { id: `s${i}`, machine: hostname(), cwd: '/tmp', port: 30000 + i, status: 'active', pid: i % 2 ? child.pid : 999_999 } }));
      await answered;
    }
    const env = { ...process.env, HYPIVISOR_WS: server.url, XDG_CONFIG_HOME: '/nonexistent' };
    await timeRun([BIN, 'status'], env); // warm the file cache
    const status = await times(15, [BIN, 'status'], env);
    const bare = await times(15, ['-e', '0'], env);
    const s = median(status);
    const b = median(bare);
    return {
      status_ms: { value: Math.round(s), unit: 'ms', target: '< 200' },
      bare_node_ms: { value: Math.round(b), unit: 'ms' },
      status_vs_bare_node: { value: Math.round((s / b) * 100) / 100, unit: 'x' },
    };
  } finally {
    ws.terminate();
    child.kill('SIGKILL');
    await server.close();
  }
}

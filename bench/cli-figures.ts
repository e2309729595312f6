// Start-up figures of the CLI as a person runs it: `ghostwatch status --format tmux` against a
// real registry (the line a tmux status bar runs), the plain line and --version, beside a bare
// `node -e ''`, all interleaved in the same run so a busy machine weighs on each alike.
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
    const runs: Record<'tmux' | 'plain' | 'version' | 'bare', string[]> = {
      tmux: [BIN, 'status', '--format', 'tmux'],
      plain: [BIN, 'status', '--format', 'plain'],
      version: [BIN, '--version'],
      bare: ['-e', ''],
    };
    const ms: Record<keyof typeof runs, number[]> = { tmux: [], plain: [], version: [], bare: [] };
    for (const args of Object.values(runs)) await timeRun(args, env); // warm the file cache
    for (let i = 0; i < 21; i++) for (const [k, args] of Object.entries(runs) as [keyof typeof runs, string[]][]) ms[k].push(await timeRun(args, env));
    const b = median(ms.bare);
    const vs = (k: keyof typeof runs) => Math.round((median(ms[k]) / b) * 100) / 100;
    return {
      status_ms: { value: Math.round(median(ms.tmux)), unit: 'ms', target: '< 200' },
      status_plain_ms: { value: Math.round(median(ms.plain)), unit: 'ms' },
      version_ms: { value: Math.round(median(ms.version)), unit: 'ms' },
      bare_node_ms: { value: Math.round(b), unit: 'ms' },
      status_vs_bare_node: { value: vs('tmux'), unit: 'x', target: '<= 1.3' },
      status_plain_vs_bare_node: { value: vs('plain'), unit: 'x' },
      version_vs_bare_node: { value: vs('version'), unit: 'x' },
    };
  } finally {
    ws.terminate();
    child.kill('SIGKILL');
    await server.close();
  }
}

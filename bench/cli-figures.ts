// Start-up figures of the CLI as a person runs it: `ghostwatch status --format tmux` against a
// real registry (the line a tmux status bar runs), the plain line and --version, beside a bare
// `node -e ''`, all interleaved in the same run so a busy machine weighs on each alike. Each run's
// wall time and its CPU time (user + sys of the child, from bash's `time`, which takes them from
// wait4): on a busy machine the wall time is mostly the other processes' doing, the CPU time is
// ours. One warm-up run of each fills the file cache first.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { WebSocket } from 'ws';
import { startRegistryServer } from '../src/server/index.js';
import { type Figures, median } from './figures.js';

import { LAUNCHER as BIN } from './paths.js';

interface Run {
  readonly wallMs: number;
  /** user + sys of the child; undefined without bash. */
  readonly cpuMs: number | undefined;
}

const HAS_BASH = ((): boolean => {
  try {
    execFileSync('bash', ['-c', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** One run: wall and CPU time. Asynchronous: the registry answering it lives in this process. */
function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const t0 = performance.now();
  if (!HAS_BASH) return new Promise((resolve) => execFile(process.execPath, args, { env }, () => resolve({ wallMs: performance.now() - t0, cpuMs: undefined })));
  // status exits 1 when it finds problems: only the times count here.
  const script = 'TIMEFORMAT="%3R %3U %3S"; time "$@" >/dev/null 2>&1';
  return new Promise((resolve, reject) =>
    execFile('bash', ['-c', script, 'bash', process.execPath, ...args], { env }, (_error, _stdout, stderr) => {
      const m = /(\d+\.\d+) (\d+\.\d+) (\d+\.\d+)\s*$/.exec(stderr);
      if (!m) return reject(new Error(`bench: no times from bash: ${stderr}`));
      resolve({ wallMs: Number(m[1]) * 1000, cpuMs: (Number(m[2]) + Number(m[3])) * 1000 });
    }),
  );
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
    // A home with no other registry: the line a hypivisor user's status bar runs (the bench machine's own ~/.claude would add the engine's path).
    const env = { ...process.env, HOME: '/nonexistent', HYPIVISOR_WS: server.url, XDG_CONFIG_HOME: '/nonexistent' };
    const runs: Record<'tmux' | 'plain' | 'version' | 'bare', { args: string[]; env?: NodeJS.ProcessEnv }> = {
      tmux: { args: [BIN, 'status', '--format', 'tmux'] },
      plain: { args: [BIN, 'status', '--format', 'plain'] },
      version: { args: [BIN, '--version'] },
      bare: { args: ['-e', ''] },
    };
    type Name = keyof typeof runs;
    const times: Record<Name, Run[]> = { tmux: [], plain: [], version: [], bare: [] };
    const entries = Object.entries(runs) as [Name, (typeof runs)[Name]][];
    for (const [, r] of entries) await timeRun(r.args, r.env ?? env); // the file cache
    for (let i = 0; i < 21; i++) for (const [k, r] of entries) times[k].push(await timeRun(r.args, r.env ?? env));
    const wall = (k: Name) => median(times[k].map((t) => t.wallMs));
    const cpu = (k: Name) => (HAS_BASH ? median(times[k].map((t) => t.cpuMs ?? 0)) : null);
    const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100);
    const ms = (v: number | null) => (v === null ? null : Math.round(v));
    return {
      status_ms: { value: Math.round(wall('tmux')), unit: 'ms', target: '< 200' },
      status_plain_ms: { value: Math.round(wall('plain')), unit: 'ms' },
      version_ms: { value: Math.round(wall('version')), unit: 'ms' },
      bare_node_ms: { value: Math.round(wall('bare')), unit: 'ms' },
      status_vs_bare_node: { value: ratio(wall('tmux'), wall('bare')), unit: 'x (wall)' },
      status_plain_vs_bare_node: { value: ratio(wall('plain'), wall('bare')), unit: 'x (wall)' },
      version_vs_bare_node: { value: ratio(wall('version'), wall('bare')), unit: 'x (wall)' },
      status_cpu_ms: { value: ms(cpu('tmux')), unit: 'ms CPU' },
      version_cpu_ms: { value: ms(cpu('version')), unit: 'ms CPU' },
      bare_node_cpu_ms: { value: ms(cpu('bare')), unit: 'ms CPU' },
      status_cpu_vs_bare_node: { value: ratio(cpu('tmux'), cpu('bare')), unit: 'x (CPU)', target: '<= 1.5' },
      version_cpu_vs_bare_node: { value: ratio(cpu('version'), cpu('bare')), unit: 'x (CPU)' },
    };
  } finally {
    ws.terminate();
    child.kill('SIGKILL');
    await server.close();
  }
}

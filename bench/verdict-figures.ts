// first_verdict_ms: what a user waits for when the monitor starts. From the Enter that execs the
// built CLI in a real tmux pane (120x40) to the first output that shows a probed verdict (a ghost
// row: its pid was probed and found dead), against a real `ghostwatch serve` holding 1,000
// sessions (600 on live pids, 300 on dead ones, 100 on other machines). first_verdict_cpu_ms: the
// CPU the process spent until then (stopped with SIGSTOP when the row is seen, its threads' run
// time read from /proc). Measures the launcher GHOSTWATCH_BENCH_BIN names, so bench:compare runs
// this same figure against an older build. Each start gets a fresh XDG_CACHE_HOME that one run
// before the loop fills (a cache the build keeps, if any, is warm, as it is for a user).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RegistryServer } from '../src/server/index.js';
import { killAndReap } from './children.js';
import { type Figures, median } from './figures.js';
import { installed, registryOfProcesses, threadsCpuMs } from './idle-figures.js';
import { sleep, tmuxServer, until } from './panes.js';
import { MEASURED_BIN as BIN } from './paths.js';
import type { WireClient } from './registrations.js';

const LIVE = 600;
const DEAD = 300;
const REMOTE = 100;
const STARTS = 7;
/** Escape sequences (colours, cursor moves, erases) between the characters of a row. */
const ESCAPES = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** A row whose verdict needed a probe: a dead pid found dead. */
const PROBED_ROW = /ghost\s+agent-\d/;

export async function verdictFigures(): Promise<Figures> {
  if (process.platform !== 'linux' || !installed('tmux', '-V') || !existsSync(BIN)) {
    process.stderr.write('bench: verdict needs Linux, tmux and a built launcher: skipped\n');
    return {};
  }
  const panes = tmuxServer(`gw-bench-verdict-${process.pid}`, 120, 40);
  const { run: tmux, newPane } = panes;
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-verdict-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  Object.assign(env, { XDG_STATE_HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), XDG_CACHE_HOME: join(dir, 'cache'), TERM: 'xterm-256color' });
  const children: ChildProcess[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  try {
    ({ server, agents } = await registryOfProcesses({ live: LIVE, dead: DEAD, remote: REMOTE }, children));
    // tmux's server (and the environment of its panes) comes from the first session.
    newPane('keep', 'exec sleep 600');
    const command = `node '${BIN}' --registry ${server.url}`;

    const startOnce = async (name: string, lingerMs = 0): Promise<{ ms: number; cpuMs: number | undefined }> => {
      const out = join(dir, `${name}.out`);
      const pid = newPane(name, `read x; exec ${command}`);
      tmux('pipe-pane', '-o', '-t', name, `cat >> '${out}'`);
      await until(() => existsSync(out), 3_000, 'the pipe-pane file', 5);
      const start = performance.now();
      tmux('send-keys', '-t', name, 'Enter');
      await until(() => PROBED_ROW.test(readFileSync(out, 'latin1').replace(ESCAPES, '')), 30_000, `a probed verdict from ${name}`, 2);
      const ms = performance.now() - start;
      await sleep(lingerMs);
      process.kill(pid, 'SIGSTOP');
      const cpuMs = threadsCpuMs(pid);
      // A stopped process would sleep through the pane's SIGHUP: it goes with SIGKILL.
      process.kill(pid, 'SIGKILL');
      try {
        tmux('kill-session', '-t', name);
      } catch {
        // the pane closed with its process, and its session with it
      }
      return { ms, cpuMs };
    };
    // The file cache, and whatever the build keeps between runs.
    await startOnce('warm', 3_000);
    const runs: { ms: number; cpuMs: number | undefined }[] = [];
    for (let i = 0; i < STARTS; i++) runs.push(await startOnce(`gw-${i}`));
    if (process.env.GHOSTWATCH_BENCH_VERBOSE === '1') process.stderr.write(`bench: verdict: ${runs.map((r) => `${Math.round(r.ms)} ms (${Math.round(r.cpuMs ?? 0)} CPU)`).join(', ')}\n`);
    const cpu = runs.every((r) => r.cpuMs !== undefined) ? Math.round(median(runs.map((r) => r.cpuMs!))) : null;
    return {
      first_verdict_ms: { value: Math.round(median(runs.map((r) => r.ms))), unit: 'ms', target: '<= 1.15x 4a86c6a (bench:compare)' },
      first_verdict_cpu_ms: { value: cpu, unit: 'ms CPU' },
    };
  } finally {
    panes.close();
    agents?.close();
    await Promise.all(children.map(killAndReap));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// What the monitor costs while nothing happens, and how fast it shows up. idle_cpu: the built CLI
// in a real tmux pane watching a real `ghostwatch serve` with 1,000 registered sessions (600 on
// live pids, one process each; 300 on dead pids, ghosts; 100 on other machines), settled, its
// utime + stime from /proc over 30 s (with whatever ages turn on screen in it); htop in a second pane
// of the same tmux server over the same 30 s, when it is installed. startup_first_frame: from the
// Enter that starts the CLI in a pane to the first frame (its column titles) arriving in the
// pane's output, beside a bare Node that prints one line (and lingers, so its pane stays)
// started the same way; wall time, and CPU time: the process is stopped (SIGSTOP) as soon as the
// frame is seen and its threads' run time read from /proc (schedstat, in ns), so the figure is
// what the start-up cost this process, whatever else the machine was doing. The file cache is
// warm: one run before the loop. startup_live_frame_ms: to the end of the first frame Ink draws
// (keys read from then on), in the same starts; the first frame is Ink's own, so the two are one
// frame now (first_verdict_ms in verdict-figures.ts is the frame with data).
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { killAndReap, spawnSleep } from './children.js';
import { type Figures, median } from './figures.js';
import { cpuSeconds, sleep, tmuxServer, until } from './panes.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';
import { MEASURED_BIN as BIN, ROOT } from './paths.js';


const LIVE = 600;
const DEAD = 300;
const REMOTE = 100;
const IDLE_MS = 30_000;
const STARTS = 7;
const COLUMNS = 120;
const ROWS = 40;
/** The column title line: in every frame of the table, from the very first. */
const FIRST_FRAME_MARK = 'VERDICT';

export function installed(cmd: string, arg: string): boolean {
  try {
    execFileSync(cmd, [arg], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** CPU time of all the threads of a process so far, in ms (schedstat: ns on the CPU); undefined without schedstat. */
export function threadsCpuMs(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return undefined;
  }
}

/** Spawns `n` sleeps, 50 at a time. */
/**
 * A registry on a loopback port whose nodes name real processes: `live` running sleeps (kept in
 * `children`), `dead` ones SIGKILLed and reaped, and `remote` nodes of other machines.
 */
export async function registryOfProcesses(counts: { live: number; dead: number; remote: number }, children: ChildProcess[]): Promise<{ server: RegistryServer; agents: WireClient }> {
  const all = counts.live + counts.dead + counts.remote;
  const server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600, limits: { nodesPerConnection: all } });
  const live = await spawnMany(counts.live, children);
  const doomed: ChildProcess[] = [];
  const dead = await spawnMany(counts.dead, doomed);
  await Promise.all(doomed.map(killAndReap));
  const me = hostname();
  const nodes: NodeParams[] = [];
  for (let i = 0; i < all; i++) {
    const pid = i < counts.live ? live[i] : i < counts.live + counts.dead ? dead[i - counts.live] : 40_000 + i;
    const machine = i < counts.live + counts.dead ? me : `node-${i % 7}.example`;
    nodes.push({ id: `agent-${i}`, machine, cwd: `/home/dev/work/project-${i % 97}`, port: 20_000 + i, pid });
  }
  const agents = await openClient(server.url);
  await registerNodes(agents, nodes);
  return { server, agents };
}

export async function spawnMany(n: number, into: ChildProcess[]): Promise<number[]> {
  const pids: number[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => spawnSleep(900)));
    into.push(...batch);
    pids.push(...batch.map((c) => c.pid));
  }
  return pids;
}

export async function idleFigures(): Promise<Figures> {
  if (process.platform !== 'linux' || !installed('tmux', '-V') || !existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
    process.stderr.write('bench: idle needs Linux, tmux and a built dist/: skipped\n');
    return {};
  }
  const panes = tmuxServer(`gw-bench-idle-${process.pid}`, COLUMNS, ROWS);
  const { run: tmux, capture, newPane } = panes;
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-idle-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  Object.assign(env, { XDG_STATE_HOME: dir, XDG_CONFIG_HOME: join(dir, 'config'), TERM: 'xterm-256color' });
  const children: ChildProcess[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  try {
    ({ server, agents } = await registryOfProcesses({ live: LIVE, dead: DEAD, remote: REMOTE }, children));
    const sessions = LIVE + DEAD + REMOTE;

    // `exec`: each pane's pid is the measured process itself.
    const gw = newPane('gw', `exec node '${BIN}' --registry ${server.url}`);
    if (!readFileSync(`/proc/${gw}/cmdline`, 'utf8').includes('ghostwatch')) throw new Error(`pane pid ${gw} is not ghostwatch`);
    const hasHtop = installed('htop', '--version');
    const htop = hasHtop ? newPane('htop', 'exec htop') : undefined;
    await until(() => new RegExp(`\\b${sessions} sessions\\b`).test(capture('gw')) && new RegExp(`\\b${DEAD} ghost`).test(capture('gw')), 30_000, `the ${sessions} rows and ${DEAD} ghosts on screen`);
    await sleep(5_000); // settled: first probes, first table scan, the first resync behind us
    // The window may hold an age turning on screen (each shown row's AGE once a minute, at its own
    // moment): that redraw is part of idling. It redraws the rows shown, not the 1,000 sorted again.

    const t0 = performance.now();
    const gw0 = cpuSeconds(gw);
    const htop0 = htop === undefined ? 0 : cpuSeconds(htop);
    await sleep(IDLE_MS);
    const seconds = (performance.now() - t0) / 1000;
    const gwPct = ((cpuSeconds(gw) - gw0) / seconds) * 100;
    const htopPct = htop === undefined ? undefined : ((cpuSeconds(htop) - htop0) / seconds) * 100;
    if (!hasHtop) process.stderr.write('bench: idle: htop is not installed: htop_idle_cpu_pct is n/a\n');
    tmux('kill-session', '-t', 'gw');
    if (htop !== undefined) tmux('kill-session', '-t', 'htop');

    // Start-up: the pane waits on `read`, its output goes to a file through pipe-pane, and the
    // clock starts right before the Enter that lets it exec. The bare Node goes the same way.
    const startOnce = async (name: string, command: string, live = false): Promise<{ ms: number; cpuMs: number | undefined; liveMs?: number }> => {
      const out = join(dir, `${name}.out`);
      const pid = newPane(name, `read x; exec ${command}`);
      tmux('pipe-pane', '-o', '-t', name, `cat >> '${out}'`);
      await until(() => existsSync(out), 3_000, 'the pipe-pane file', 5);
      const start = performance.now();
      tmux('send-keys', '-t', name, 'Enter');
      await until(() => readFileSync(out, 'latin1').includes(FIRST_FRAME_MARK), 10_000, `the first frame of ${name}`, 2);
      const ms = performance.now() - start;
      process.kill(pid, 'SIGSTOP');
      const cpuMs = threadsCpuMs(pid);
      // The first frame Ink draws (the end of its first synchronized update): from then on the
      // screen code runs and keys are read.
      let liveMs: number | undefined;
      if (live) {
        process.kill(pid, 'SIGCONT');
        await until(() => readFileSync(out, 'latin1').includes('\u001b[?2026l'), 10_000, `the first live frame of ${name}`, 2);
        liveMs = performance.now() - start;
        process.kill(pid, 'SIGSTOP');
      }
      // A stopped process would sleep through the pane's SIGHUP: it goes with SIGKILL.
      process.kill(pid, 'SIGKILL');
      try {
        tmux('kill-session', '-t', name);
      } catch {
        // the pane closed with its process, and its session with it
      }
      return { ms, cpuMs, liveMs };
    };
    const firstFrames: { ms: number; cpuMs: number | undefined; liveMs?: number }[] = [];
    const bareNodes: { ms: number; cpuMs: number | undefined }[] = [];
    // A session that outlives the measured ones: the tmux server exits with its last session,
    // and the next new-session raced its exit ("server exited unexpectedly").
    newPane('keep', 'exec sleep 600');
    // The file cache.
    const warm = newPane('warm', `exec node '${BIN}' --registry ${server.url}`);
    await sleep(2_500);
    if (!readFileSync(`/proc/${warm}/cmdline`, 'utf8').includes('ghostwatch')) throw new Error('the warm-up monitor is gone');
    tmux('kill-session', '-t', 'warm');
    for (let i = 0; i < STARTS; i++) {
      firstFrames.push(await startOnce(`gw-${i}`, `node '${BIN}' --registry ${server.url}`, true));
      bareNodes.push(await startOnce(`node-${i}`, `node -e 'console.log(process.argv[1]); setTimeout(() => {}, 10000)' ${FIRST_FRAME_MARK}`));
    }
    const first = median(firstFrames.map((f) => f.ms));
    const bare = median(bareNodes.map((f) => f.ms));
    const cpuOf = (runs: { cpuMs: number | undefined }[]) => (runs.every((r) => r.cpuMs !== undefined) ? median(runs.map((r) => r.cpuMs!)) : undefined);
    const firstCpu = cpuOf(firstFrames);
    const bareCpu = cpuOf(bareNodes);

    const round2 = (n: number) => Math.round(n * 100) / 100;
    return {
      idle_cpu_pct: { value: round2(gwPct), unit: '% of a core', target: '<= 1.5, <= htop' },
      htop_idle_cpu_pct: { value: htopPct === undefined ? null : round2(htopPct), unit: '% of a core' },
      idle_cpu_vs_htop: { value: htopPct === undefined || htopPct === 0 ? null : round2(gwPct / htopPct), unit: 'x', target: '<= 1' },
      startup_first_frame_ms: { value: Math.round(first), unit: 'ms', target: '<= 400' },
      startup_bare_node_ms: { value: Math.round(bare), unit: 'ms' },
      startup_vs_bare_node: { value: round2(first / bare), unit: 'x (wall)' },
      startup_live_frame_ms: { value: Math.round(median(firstFrames.map((f) => f.liveMs ?? 0))), unit: 'ms' },
      startup_first_frame_cpu_ms: { value: firstCpu === undefined ? null : Math.round(firstCpu), unit: 'ms CPU' },
      startup_bare_node_cpu_ms: { value: bareCpu === undefined ? null : Math.round(bareCpu), unit: 'ms CPU' },
      startup_cpu_vs_bare_node: { value: firstCpu === undefined || bareCpu === undefined ? null : round2(firstCpu / bareCpu), unit: 'x (CPU)', target: '<= 1.5' },
    };
  } finally {
    panes.close();
    agents?.close();
    await Promise.all(children.map(killAndReap));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

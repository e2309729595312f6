// The fleet over ssh (issue 16), at size: 10 fake hosts (src/demo/fleet-hosts.ts: own hostname,
// own pids and /proc, a private sshd on loopback) × 100 agents each, real `sleep`s started inside
// the hosts by one `sh` per host (which `wait`s, so a killed one is reaped at once, as an agent's
// parent would), registered with a real `ghostwatch serve` under the host's name and their inside
// pids. The ssh client is the system one, through a wrapper that reads the hosts' ssh_config.
//
// fleet_ghost_detect: the engine in-process (createEngine, intervalScale 1, as the CLI), 50 agents
// SIGKILLed one at a time (5 per host, round robin, 250–450 ms apart), from the SIGKILL to the
// first engine snapshot that shows the entry as ghost. fleet_ssh_connections: the most
// connections any host needed over the whole run (engine.stats().ssh). fleet_bytes_per_round: the
// request bytes written to a host over its probe rounds (the slow full and port probes; kill -0
// runs on the host, whose watchers push only changes), in a quiet 10 s with 100 live pids on
// every host; fleet_pushed_lines_per_s_per_host: the lines those watchers pushed meanwhile.
//
// fleet_idle_cpu: the built CLI, two monitors in tmux panes on the same registry at once, one
// with `--ssh` for the 10 hosts and one without (its 1,000 entries are then just remote), both
// settled; utime + stime of each from /proc over the same two 20 s windows (no minute boundary
// inside: the age column's once-a-minute redraw is not idle work). The ssh monitor's ssh clients
// are its transport and are counted with it; the monitor process alone is reported too, and what
// the probe loops cost on each remote host (its processes' CPU, children included).
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fleetHostRequirement, startFleetHost, type FleetHost } from '../src/demo/fleet-hosts.js';
import { writeFleetSshClient } from '../src/demo/fleet-ssh.js';
import { nsPids } from '../src/demo/host-processes.js';
import { createEngine, type LiveEngine } from '../src/engine/index.js';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { Watch } from './watch.js';
import { hasTmux } from './children.js';
import { type Figures, median, percentile } from './figures.js';
import { cpuSeconds, sleep, tmuxServer, until } from './panes.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';
import { MEASURED_BIN as BIN, ROOT } from './paths.js';


const HOSTS = 10;
const PER_HOST = 100;
const KILLS_PER_HOST = 5;
const KILL_EVERY_MS: [number, number] = [250, 450];
const QUIET_MS = 10_000;
const GIVE_UP_MS = 10_000;
const IDLE_WINDOWS = 2;
const IDLE_WINDOW_MS = 20_000;
const COLUMNS = 120;
const ROWS = 40;

const between = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);
const round1 = (n: number) => Math.round(n * 10) / 10;
const round2 = (n: number) => Math.round(n * 100) / 100;
const hostName = (i: number) => `fleet-${String(i).padStart(2, '0')}`;

/** cpuSeconds, 0 once the process is gone (a host's processes come and go within a window). */
function cpuOr0(pid: number, children = false): number {
  try {
    return cpuSeconds(pid, children);
  } catch {
    return 0;
  }
}

/** This machine's processes whose parent is `ppid` and whose name is `comm`. */
function childrenNamed(ppid: number, comm: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name === comm && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}


interface HostAgents {
  readonly host: FleetHost;
  /** Inside pid → outside pid of each agent. */
  readonly pids: Map<number, number>;
}

/** PER_HOST sleeps inside the host, children of one `sh` that waits for them (a killed one is reaped at once). */
async function startAgents(host: FleetHost): Promise<HostAgents> {
  const script = `i=0; while [ $i -lt ${PER_HOST} ]; do sleep 3600 & echo $!; i=$((i+1)); done; wait`;
  const sh = await host.spawnInHost('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'] });
  const inside: number[] = [];
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: sh.child.stdout! });
    lines.on('line', (line) => {
      inside.push(Number(line));
      if (inside.length === PER_HOST) resolve();
    });
    sh.child.once('exit', () => reject(new Error(`${host.hostname}: the agents' sh exited after ${inside.length} agents`)));
  });
  const wanted = new Set(inside);
  const pids = new Map<number, number>();
  for (const outside of host.processes()) {
    const ns = nsPids(outside);
    const innermost = ns?.at(-1);
    if (innermost !== undefined && wanted.has(innermost) && ns!.length >= 2) pids.set(innermost, outside);
  }
  if (pids.size !== PER_HOST) throw new Error(`${host.hostname}: found ${pids.size} of ${PER_HOST} agents' outside pids`);
  return { host, pids };
}

export async function fleetFigures(): Promise<Figures> {
  const missing = fleetHostRequirement();
  if (missing !== undefined) {
    process.stderr.write(`bench: fleet needs ${missing.needs} (${missing.how}): skipped\n`);
    return {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-fleet-'));
  const hosts: FleetHost[] = [];
  let server: RegistryServer | undefined;
  let agentsLink: WireClient | undefined;
  let engine: LiveEngine | undefined;
  const panes = tmuxServer(`gw-bench-fleet-${process.pid}`, COLUMNS, ROWS);
  const figures: Figures = {};
  try {
    // Five at a time: ten key pairs and sshds at once on two cores only make each slower.
    for (let i = 0; i < HOSTS; i += 5) {
      const batch = await Promise.allSettled(Array.from({ length: Math.min(5, HOSTS - i) }, (_, k) => startFleetHost({ hostname: hostName(i + k) })));
      for (const r of batch) if (r.status === 'fulfilled') hosts.push(r.value);
      const failed = batch.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
    }
    const { binDir, command: wrapper } = writeFleetSshClient(hosts, dir);

    const fleet: HostAgents[] = [];
    for (const h of hosts) fleet.push(await startAgents(h));

    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600, limits: { nodesPerConnection: HOSTS * PER_HOST } });
    agentsLink = await openClient(server.url);
    const nodes: NodeParams[] = [];
    const byId = new Map<string, { host: number; outside: number }>();
    fleet.forEach((f, h) => {
      [...f.pids.keys()].forEach((pid, j) => {
        const id = `${f.host.hostname}-agent-${String(j).padStart(3, '0')}`;
        byId.set(id, { host: h, outside: f.pids.get(pid)! });
        nodes.push({ id, machine: f.host.hostname, cwd: `/home/dev/work/project-${j % 17}`, port: 30_000 + h * PER_HOST + j, pid });
      });
    });
    await registerNodes(agentsLink, nodes);

    // ------------------------------------------------ the engine in-process: detection, connections, bytes
    engine = createEngine({
      sources: [new HypivisorSource({ url: server.url })],
      hostName: hostname(),
      intervalScale: 1,
      readOnly: true,
      auditLogPath: join(dir, 'evictions.jsonl'),
      ssh: { hosts: hosts.map((h) => ({ machine: h.hostname, dest: h.hostname })), options: { sshCommand: wrapper } },
    });
    const live = engine;
    const ghosts = new Watch(GIVE_UP_MS);
    live.subscribe(() => {
      if (ghosts.size === 0) return;
      const at = performance.now();
      const verdicts = new Map<string, string>();
      for (const f of live.getSnapshot().findings) if (f.kind === 'session') verdicts.set(f.id, f.verdict);
      ghosts.check(at, (id) => verdicts.get(id) === 'ghost');
    });
    live.start();
    const total = HOSTS * PER_HOST;
    await until(() => live.getSnapshot().settled && live.getSnapshot().counts.live === total, 60_000, `${total} live entries over ssh`, 200).catch((error: unknown) => {
      const s = live.getSnapshot();
      throw new Error(`${error instanceof Error ? error.message : String(error)} (live ${s.counts.live}, hosts ${JSON.stringify(s.hosts?.map((h) => [h.machine, h.state, h.reason]))})`);
    });
    await sleep(2_000);

    const sshStats = () => live.stats().ssh ?? [];
    const before = sshStats();
    const engine0 = live.stats();
    const q0 = performance.now();
    await sleep(QUIET_MS);
    const after = sshStats();
    const engine1 = live.stats();
    const quietS = (performance.now() - q0) / 1000;
    const perRound = after.map((a, i) => (a.bytesSent - before[i]!.bytesSent) / Math.max(1, a.rounds - before[i]!.rounds));
    const perSecond = after.map((a, i) => (a.bytesSent - before[i]!.bytesSent) / quietS);
    const roundsPerSecond = after.map((a, i) => (a.rounds - before[i]!.rounds) / quietS);
    const pushedPerSecond = after.map((a, i) => (a.linesPushed - before[i]!.linesPushed) / quietS);
    process.stderr.write(
      `bench: fleet quiet ${round1(quietS)} s: ${engine1.recomputes - engine0.recomputes} recomputes, ${engine1.publishes - engine0.publishes} publishes\n`,
    );

    const doomed: { id: string; outside: number }[] = [];
    for (let k = 0; k < KILLS_PER_HOST; k++) {
      for (let h = 0; h < HOSTS; h++) {
        const id = `${hostName(h)}-agent-${String(k * 7).padStart(3, '0')}`;
        doomed.push({ id, outside: byId.get(id)!.outside });
      }
    }
    const detect: Promise<number>[] = [];
    for (const d of doomed) {
      const t0 = performance.now();
      process.kill(d.outside, 'SIGKILL');
      detect.push(ghosts.expect(d.id, t0));
      await sleep(between(KILL_EVERY_MS));
    }
    const times = await Promise.all(detect);
    const missed = times.filter((t) => t >= GIVE_UP_MS).length;
    const connections = sshStats().map((s) => s.connections);
    await live.stop();
    engine = undefined;

    Object.assign(figures, {
      fleet_ghost_detect_p50_ms: { value: Math.round(median(times)), unit: 'ms' },
      fleet_ghost_detect_p99_ms: { value: Math.round(percentile(times, 99)), unit: `ms (${times.length} kills${missed ? `, ${missed} missed` : ''})`, target: '<= 2000' },
      fleet_ssh_connections: { value: Math.max(...connections), unit: `per host (most of ${HOSTS}, whole run)`, target: '1' },
      fleet_bytes_per_round_per_host: { value: Math.round(median(perRound)), unit: `bytes (${PER_HOST} pids + ports)` },
      fleet_bytes_per_s_per_host: { value: Math.round(median(perSecond)), unit: `bytes/s (${round1(median(roundsPerSecond))} rounds/s)` },
      fleet_pushed_lines_per_s_per_host: { value: round2(median(pushedPerSecond)), unit: 'lines/s pushed by the watchers (quiet)' },
    });

    // ------------------------------------------------ idle CPU of the built CLI, with and without --ssh
    if (!hasTmux() || !existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
      process.stderr.write('bench: fleet idle CPU needs tmux and a built dist/: skipped\n');
      return figures;
    }
    const { capture } = panes;
    const envs = `env PATH='${binDir}':"$PATH" XDG_STATE_HOME='${dir}' XDG_CONFIG_HOME='${join(dir, 'config')}' TERM=xterm-256color`;
    const url = server.url;
    const newPane = (name: string, args: string): number => panes.newPane(name, `exec ${envs} node '${BIN}' --registry ${url} ${args}`);
    const sshArgs = hosts.map((h) => `--ssh ${h.hostname}=${h.hostname}`).join(' ');
    const withSsh = newPane('ssh', sshArgs);
    const without = newPane('plain', '');
    const dead = doomed.length;
    await until(() => /\b1000 sessions\b/.test(capture('plain')), 30_000, 'the plain monitor’s 1000 rows', 100);
    await until(() => new RegExp(`\\b${dead} ghost`).test(capture('ssh')), 60_000, `the ssh monitor’s ${dead} ghosts`, 250).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; the pane shows:\n${capture('ssh')}`);
    });
    for (const pid of [withSsh, without]) if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('ghostwatch')) throw new Error(`pane pid ${pid} is not ghostwatch`);
    await sleep(5_000);
    const clients = childrenNamed(withSsh, 'ssh');
    if (clients.length !== HOSTS) throw new Error(`the ssh monitor runs ${clients.length} ssh clients, not ${HOSTS}`);
    let sshMs = 0;
    let clientMs = 0;
    let plainMs = 0;
    let remoteMs = 0;
    let seconds = 0;
    for (let w = 0; w < IDLE_WINDOWS; w++) {
      const intoMinute = Date.now() % 60_000;
      if (intoMinute < 1_000 || intoMinute + IDLE_WINDOW_MS + 1_000 > 60_000) await sleep((60_000 - intoMinute + 1_000) % 60_000);
      const remote = hosts.flatMap((h) => h.processes());
      const remote0 = new Map(remote.map((p) => [p, cpuOr0(p, true)]));
      const t0 = performance.now();
      const s0 = cpuOr0(withSsh);
      const c0 = clients.reduce((a, p) => a + cpuOr0(p), 0);
      const p0 = cpuOr0(without);
      await sleep(IDLE_WINDOW_MS);
      seconds += (performance.now() - t0) / 1000;
      sshMs += (cpuOr0(withSsh) - s0) * 1000;
      clientMs += (clients.reduce((a, p) => a + cpuOr0(p), 0) - c0) * 1000;
      plainMs += (cpuOr0(without) - p0) * 1000;
      for (const [p, c] of remote0) {
        const now = cpuOr0(p, true);
        if (now > 0) remoteMs += (now - c) * 1000;
      }
    }
    const pct = (ms: number) => ms / 10 / seconds;
    const idleSsh = pct(sshMs + clientMs);
    const idlePlain = pct(plainMs);
    Object.assign(figures, {
      fleet_idle_cpu_pct: { value: round2(idleSsh), unit: `% of a core (${HOSTS} hosts, monitor + its ssh clients)` },
      fleet_idle_cpu_monitor_pct: { value: round2(pct(sshMs)), unit: '% of a core (the monitor process alone)' },
      fleet_idle_cpu_no_ssh_pct: { value: round2(idlePlain), unit: '% of a core (same registry, no --ssh)' },
      fleet_idle_cpu_ratio: { value: idlePlain === 0 ? null : round2(idleSsh / idlePlain), unit: 'x (with ssh clients)', target: '<= 1.5' },
      fleet_idle_cpu_monitor_ratio: { value: idlePlain === 0 ? null : round2(pct(sshMs) / idlePlain), unit: 'x (monitor process alone)' },
      fleet_remote_cpu_pct_per_host: { value: round2(pct(remoteMs) / HOSTS), unit: '% of a core on each host (sshd + probe loop)' },
    });
    process.stderr.write(`bench: fleet idle windows: ${IDLE_WINDOWS} × ${IDLE_WINDOW_MS / 1000} s, both monitors measured over the same windows\n`);
    return figures;
  } finally {
    panes.close();
    await engine?.stop();
    agentsLink?.close();
    await server?.close();
    await Promise.all(hosts.map((h) => h.close()));
    rmSync(dir, { recursive: true, force: true });
  }
}

// Frozen and busy agents (issue 28). suspended_detect: real `sleep` agents registered on a real
// `ghostwatch serve`, the real engine at default cadence (full probe every 2 s); one agent at a
// time is SIGSTOPped at a random moment and timed to the first snapshot that calls it suspended,
// then continued and waited back to live. engine_rss_10k: the real engine over 10,000 agents of
// this host in a child process (costs-child.ts), on a provider that answers as /proc would, without
// the CPU time and memory readings, with them (what the CPU% and MEM columns cost: the figure the
// issue bounds), and with them and the "answering" probe's facts (reported beside it); its RSS
// after six full probes and a full GC, the median of three children each. answering_probe: 100 real
// `ws` servers in one node process, each asked once per round as the engine does (8 at a time),
// ten rounds: the CPU it costs the monitor and the agents, per agent and round. columns_idle_cpu:
// the real engine on the real /proc provider over 1,000 real sleeping agents, in a child process
// (idle-costs-child.ts), with and without the readings the columns are made of: its CPU over 20 s
// once settled, three children each, in turn; the figure is the medians' difference as a share.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine, type LiveEngine } from '../src/engine/index.js';
import { CADENCE } from '../src/engine/os-facts.js';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { killAndReap, spawnSleep } from './children.js';
import { type Figures, median } from './figures.js';
import { ROOT } from './paths.js';
import { openClient, registerNodes, type WireClient } from './registrations.js';
import { Watch } from './watch.js';
import { cpuSeconds } from './panes.js';
import { probeUpgrade } from '../src/os/ws-handshake.js';
import { HANDSHAKE_BOUND_MS, HANDSHAKE_CONCURRENCY } from '../src/engine/handshakes.js';

const AGENTS = 20;
const STOPS = 20;
const GIVE_UP_MS = 10_000;
const CHILDREN = 3;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const round1 = (n: number) => Math.round(n * 10) / 10;

async function suspendedDetection(): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-costs-'));
  const children: (ChildProcess & { pid: number })[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  let engine: LiveEngine | undefined;
  try {
    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600 });
    agents = await openClient(server.url);
    for (let i = 0; i < AGENTS; i++) children.push(await spawnSleep(600));
    await registerNodes(agents, children.map((c, i) => ({ id: `agent-${i}`, machine: hostname(), cwd: '/home/dev/work', port: 23_000 + i, pid: c.pid })));
    engine = createEngine({ sources: [new HypivisorSource({ url: server.url })], hostName: hostname(), intervalScale: 1, readOnly: true, auditLogPath: join(dir, 'evictions.jsonl') });
    const suspended = new Watch(GIVE_UP_MS);
    const live = new Watch(GIVE_UP_MS);
    const verdict = (id: string) => engine!.getSnapshot().findings.find((f) => f.id === id)?.verdict;
    engine.subscribe(() => {
      const at = performance.now();
      suspended.check(at, (id) => verdict(id) === 'suspended');
      live.check(at, (id) => verdict(id) === 'live');
    });
    engine.start();
    const snap = await engine.settled(30_000);
    if (snap.counts.live !== AGENTS) throw new Error(`engine not settled on ${AGENTS} live agents (live: ${snap.counts.live})`);
    const times: number[] = [];
    for (let k = 0; k < STOPS; k++) {
      const i = k % AGENTS;
      const id = `agent-${i}`;
      // A random phase of the 2 s probe.
      await sleep(Math.random() * CADENCE.full);
      const t0 = performance.now();
      process.kill(children[i]!.pid, 'SIGSTOP');
      times.push(await suspended.expect(id, t0));
      const back = live.expect(id, performance.now());
      process.kill(children[i]!.pid, 'SIGCONT');
      await back;
    }
    return times;
  } finally {
    await engine?.stop();
    agents?.close();
    for (const c of children) {
      try {
        process.kill(c.pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
    await Promise.all(children.map(killAndReap));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const SERVERS = 100;
const ROUNDS = 10;

/** CPU µs one "answering" request costs the monitor and the agent, per agent and round. */
async function answeringCost(): Promise<{ monitorUs: number; agentUs: number; answered: number }> {
  const script = `
    const { WebSocketServer } = require('ws');
    const ports = [];
    let n = 0;
    for (let i = 0; i < ${SERVERS}; i++) {
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      wss.on('listening', () => { ports.push(wss.address().port); if (++n === ${SERVERS}) process.stdout.write(JSON.stringify(ports) + '\\n'); });
    }`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const ports = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve))) as number[];
    const signal = new AbortController().signal;
    const round = async (): Promise<number> => {
      let next = 0;
      let answered = 0;
      const worker = async (): Promise<void> => {
        while (next < ports.length) if ((await probeUpgrade(ports[next++]!, HANDSHAKE_BOUND_MS, signal)).result === 'answered') answered++;
      };
      await Promise.all(Array.from({ length: HANDSHAKE_CONCURRENCY }, worker));
      return answered;
    };
    await round(); // warm
    const me0 = process.cpuUsage();
    const agent0 = cpuSeconds(child.pid!);
    let answered = 0;
    for (let i = 0; i < ROUNDS; i++) answered += await round();
    const me = process.cpuUsage(me0);
    const agent = cpuSeconds(child.pid!) - agent0;
    const per = SERVERS * ROUNDS;
    return { monitorUs: (me.user + me.system) / per, agentUs: (agent * 1e6) / per, answered: answered / per };
  } finally {
    await killAndReap(child);
  }
}

type RssMode = 'without' | 'columns' | 'answering';

/** RSS (MB) of the engine over 10,000 agents: without what the columns are made of, with it, or with it and the "answering" facts. */
function engineRss(mode: RssMode): number {
  const out = execFileSync(process.execPath, ['--expose-gc', join(ROOT, 'dist/bench/costs-child.js'), mode], { encoding: 'utf8', timeout: 180_000 });
  const r = JSON.parse(out.trim().split('\n').pop()!) as { rssMb: number; withUsage: number };
  if (mode !== 'without' && r.withUsage !== 10_000) throw new Error(`the child's findings carry no costs (${r.withUsage})`);
  return r.rssMb;
}

const IDLE_AGENTS = 1_000;
const IDLE_WINDOW_MS = 20_000;

/** The engine's idle CPU (% of a core) at 1,000 real agents, without and with the columns' readings, in turn. */
async function columnsIdleCpu(): Promise<{ without: number[]; columns: number[] }> {
  const agents: (ChildProcess & { pid: number })[] = [];
  try {
    for (let i = 0; i < IDLE_AGENTS; i++) agents.push(await spawnSleep(900));
    const pids = agents.map((a) => a.pid).join(',');
    const out = { without: [] as number[], columns: [] as number[] };
    for (let i = 0; i < CHILDREN; i++) {
      for (const mode of ['without', 'columns'] as const) {
        const line = execFileSync(process.execPath, [join(ROOT, 'dist/bench/idle-costs-child.js'), mode, String(IDLE_WINDOW_MS), pids], { encoding: 'utf8', timeout: 180_000 });
        const r = JSON.parse(line.trim().split('\n').pop()!) as { cpuPct: number; withUsage: number };
        if (r.withUsage !== (mode === 'columns' ? IDLE_AGENTS : 0)) throw new Error(`idle-costs-child ${mode}: ${r.withUsage} findings with costs`);
        out[mode].push(r.cpuPct);
      }
    }
    return out;
  } finally {
    await Promise.all(agents.map(killAndReap));
  }
}

export async function costsFigures(): Promise<Figures> {
  if (process.platform !== 'linux') {
    process.stderr.write('bench: costs needs Linux (/proc): skipped\n');
    return {};
  }
  const detect = await suspendedDetection();
  const answering = await answeringCost();
  const idle = await columnsIdleCpu();
  const idleWithout = median(idle.without);
  const idleColumns = median(idle.columns);
  const rss: Record<RssMode, number[]> = { without: [], columns: [], answering: [] };
  // In turn, so a noisy moment hits all three.
  for (let i = 0; i < CHILDREN; i++) for (const mode of ['without', 'columns', 'answering'] as const) rss[mode].push(engineRss(mode));
  const wo = median(rss.without);
  const cols = median(rss.columns);
  const ans = median(rss.answering);
  return {
    suspended_detect_median_ms: { value: Math.round(median(detect)), unit: 'ms', target: `<= ${2 * CADENCE.full} (2 full probes)` },
    suspended_detect_max_ms: { value: Math.round(Math.max(...detect)), unit: 'ms', target: `<= ${2 * CADENCE.full}` },
    engine_rss_10k_without_costs_mb: { value: round1(wo), unit: 'MB' },
    engine_rss_10k_with_costs_mb: { value: round1(cols), unit: 'MB' },
    engine_rss_10k_costs_delta_mb: { value: round1(cols - wo), unit: 'MB', target: '<= 5 (the CPU% and MEM columns)' },
    engine_rss_10k_answering_delta_mb: { value: round1(ans - cols), unit: 'MB', target: 'what asking 10,000 WebSocket ports adds (not a column)' },
    columns_idle_cpu_1k_without_pct: { value: Math.round(idleWithout * 100) / 100, unit: '% of a core (engine, 1,000 agents)' },
    columns_idle_cpu_1k_with_pct: { value: Math.round(idleColumns * 100) / 100, unit: '% of a core (engine, 1,000 agents)' },
    columns_idle_cpu_1k_delta_pct: { value: round1(((idleColumns - idleWithout) / idleWithout) * 100), unit: '% more idle CPU', target: '<= 10' },
    answering_probe_monitor_cpu_us: { value: Math.round(answering.monitorUs), unit: 'µs CPU per agent per round' },
    answering_probe_agent_cpu_us: { value: Math.round(answering.agentUs), unit: 'µs CPU per agent per round' },
    answering_probe_monitor_cpu_pct_20_agents: { value: Math.round(((answering.monitorUs * 20) / (CADENCE.full * 1000)) * 100 * 100) / 100, unit: '% of a core (20 agents, a round per 2 s)' },
    answering_probe_answered_share: { value: round1(answering.answered * 100), unit: '% answered' },
  };
}

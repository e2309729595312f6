// What a dead agent leaves behind (issue 28), measured on real processes.
//   leftovers_shown_*: agents registered in a real registry, each a `sh` that started two sleeps
//     (its dev server and its watcher), watched by the engine at the default cadence (the tree is
//     walked every 5 s); each agent SIGKILLed at a random moment, the time from the kill to both
//     its children listed under its row. Target: <= 2 x the slow cadence.
//   leftover_walk_*: one walk of the trees of 600 live agents with no children (what an idle
//     monitor at 1,000 sessions, 600 on live pids, does every 5 s) on the index kept between walks
//     (as the monitor keeps it: only new processes are read), the median of 20, and what it costs
//     a core at the 5 s cadence; and the first walk, which reads every process of the machine.
//   leftovers_idle_engine_cpu_*: the engine alone (no screen) watching a real registry of 1,000
//     sessions (600 on live pids, 300 ghosts, 100 remote), settled, its process's CPU over 20 s,
//     with and without looking at what agents start, alternately, two rounds each (the median).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEngine, type LiveEngine } from '../src/engine/index.js';
import { leftoversOf } from '../src/engine/types.js';
import { cadenceMs } from '../src/engine/os-facts.js';
import { ProcessIndex, walkDescendants } from '../src/os/process-tree.js';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { killAndReap } from './children.js';
import { type Figures, median } from './figures.js';
import { registryOfProcesses, spawnMany } from './idle-figures.js';
import { sleep, until } from './panes.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';

const AGENTS = 8;
const IDLE_MS = 20_000;

/** The engine's own CPU over IDLE_MS, settled, on a registry of 1,000 sessions; `track`: look at what agents start. */
async function idleEngineCpuPct(url: string, track: boolean, dir: string): Promise<number> {
  const engine = createEngine({ sources: [new HypivisorSource({ url })], hostName: hostname(), intervalScale: 1, readOnly: true, trackLeftovers: track, auditLogPath: join(dir, 'idle.jsonl') });
  engine.start();
  try {
    await engine.settled(30_000);
    await sleep(6_000); // the first walk and the first table scan behind us
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(IDLE_MS);
    const c = process.cpuUsage(c0);
    return ((c.user + c.system) / 1000 / (performance.now() - t0)) * 100;
  } finally {
    await engine.stop();
  }
}
const WALKED = 600;
const WALKS = 20;

function startTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** An agent: a shell that starts two sleeps and waits; its pid and its children's once both run. */
async function agentWithChildren(): Promise<{ child: ChildProcess; pid: number; kids: number[] }> {
  const child = spawn('sh', ['-c', 'sleep 600 & sleep 600 & wait'], { stdio: 'ignore' });
  const pid = child.pid!;
  const kids = await until(() => {
    try {
      const list = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      return list.length === 2 ? list : undefined;
    } catch {
      return undefined;
    }
  }, 5_000, 'two sleeps');
  return { child, pid, kids };
}

export async function leftoverFigures(): Promise<Figures> {
  if (process.platform !== 'linux') {
    process.stderr.write('bench: leftovers need Linux (/proc): skipped\n');
    return {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-leftovers-'));
  const children: ChildProcess[] = [];
  const orphans: number[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  let engine: LiveEngine | undefined;
  try {
    // One walk of 600 childless live agents.
    const sleeps: ChildProcess[] = [];
    const pids = await spawnMany(WALKED, sleeps);
    children.push(...sleeps);
    const roots = new Map(pids.map((p) => [p, startTicks(p)]));
    const walks: number[] = [];
    const firsts: number[] = [];
    for (let round = 0; round < 3; round++) {
      const index = new ProcessIndex();
      for (let i = 0; i < WALKS / 2 + 1; i++) {
        const t0 = performance.now();
        const walk = await walkDescendants(roots, { index });
        const ms = performance.now() - t0;
        if (!walk.ok || walk.trees.size !== WALKED) throw new Error('bench: the walk did not read every root');
        if (i === 0) firsts.push(ms);
        else walks.push(ms);
        await sleep(50);
      }
    }
    const processes = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).length;
    await Promise.all(sleeps.map(killAndReap));
    const walkMs = median(walks);

    // The engine idle at 1,000 sessions, with and without leftovers.
    const idleChildren: ChildProcess[] = [];
    const idle = await registryOfProcesses({ live: 600, dead: 300, remote: 100 }, idleChildren);
    children.push(...idleChildren);
    const on: number[] = [];
    const off: number[] = [];
    try {
      for (let round = 0; round < 2; round++) {
        on.push(await idleEngineCpuPct(idle.server.url, true, dir));
        off.push(await idleEngineCpuPct(idle.server.url, false, dir));
      }
    } finally {
      idle.agents.close();
      await idle.server.close();
      await Promise.all(idleChildren.map(killAndReap));
    }

    // Leftovers shown after their agent dies, at the default cadence.
    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600 });
    agents = await openClient(server.url);
    const me = hostname();
    const staged: { id: string; child: ChildProcess; pid: number; kids: number[] }[] = [];
    const nodes: NodeParams[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const a = await agentWithChildren();
      children.push(a.child);
      orphans.push(...a.kids);
      const id = `left-${i}`;
      staged.push({ id, ...a });
      nodes.push({ id, machine: me, cwd: `/home/dev/work/web-${i}`, port: 21_000 + i, pid: a.pid });
    }
    await registerNodes(agents, nodes);
    engine = createEngine({ sources: [new HypivisorSource({ url: server.url })], hostName: me, intervalScale: 1, readOnly: true, auditLogPath: join(dir, 'evictions.jsonl') });
    engine.start();
    await engine.settled(30_000);
    await until(() => (engine!.stats().leftovers?.remembered ?? 0) >= 2 * AGENTS, 30_000, 'every agent tree learned');
    const shownAt = new Map<string, number>();
    engine.subscribe(() => {
      const at = performance.now();
      for (const f of engine!.getSnapshot().findings) if (!shownAt.has(f.id) && (leftoversOf(f)?.length ?? 0) === 2) shownAt.set(f.id, at);
    });
    const times: number[] = [];
    for (const a of staged) {
      // A random moment within the cadence: the walk's phase must not favour the figure.
      await sleep(Math.random() * cadenceMs('table', 1));
      const t0 = performance.now();
      a.child.kill('SIGKILL');
      await until(() => shownAt.has(a.id), 30_000, `the leftovers of ${a.id}`, 5);
      times.push(shownAt.get(a.id)! - t0);
    }
    const slow = cadenceMs('table', 1);
    const round = (n: number) => Math.round(n * 100) / 100;
    return {
      leftovers_shown_p50_ms: { value: Math.round(median(times)), unit: `ms from SIGKILL to its two children under its row (${AGENTS} agents)`, target: `<= ${2 * slow}` },
      leftovers_shown_max_ms: { value: Math.round(Math.max(...times)), unit: 'ms', target: `<= ${2 * slow}` },
      leftover_walk_600_ms: { value: round(walkMs), unit: `ms, one walk of ${WALKED} live agents' trees, nothing new (median of ${walks.length})` },
      leftover_walk_idle_cpu_pct: { value: round((walkMs / slow) * 100), unit: `% of a core at the ${slow / 1000} s cadence` },
      leftovers_idle_engine_cpu_pct: { value: round(median(on)), unit: '% of a core, the engine at 1,000 sessions, settled (median of 2)' },
      leftovers_idle_engine_cpu_off_pct: { value: round(median(off)), unit: '% of a core, the same without looking at what agents start' },
      leftover_first_walk_ms: { value: round(median(firsts)), unit: `ms, the first walk: every process read once (${processes} here)` },
    };
  } finally {
    await engine?.stop();
    agents?.close();
    await server?.close();
    await Promise.all(children.map(killAndReap));
    for (const pid of orphans) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

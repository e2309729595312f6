// Detection latency, end to end: real processes registered on a real `ghostwatch serve`, the real
// engine reading it at default cadence (intervalScale 1), the real App rendered by Ink off-screen
// on that engine with the CLI's render options. A process dies (SIGKILL), turns zombie (killed, never
// reaped) or has its pid recycled (a new process on the same pid), and we time the moment the
// condition became true to the first engine snapshot with that verdict, and (ghosts) to the
// first frame whose row for that id shows `!ghost`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createElement } from 'react';
import type { Verdict } from '../src/core/index.js';
import { createEngine, type LiveEngine } from '../src/engine/index.js';
import { CADENCE } from '../src/engine/os-facts.js';
import { linuxClock, parseProcStat, ticksToEpochMs } from '../src/os/liveness.js';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { RENDER_OPTIONS } from '../src/ui/render-options.js';
import { killAndReap, spawnSleep } from './children.js';
import { Watch } from './watch.js';
import { type Figures, median, percentile } from './figures.js';
import { FakeStdin, FakeStdout, importInkOutsideCi, plainText } from './offscreen.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';

const AGENTS = 200;
const KILLS = 60;
/** 500 ms apart on average, jittered by one kill cadence: a fixed 500 would phase-lock with the 250 ms probe. */
const KILL_EVERY_MS: [number, number] = [375, 625];
const ZOMBIES = 30;
const REUSES = 30;
/** Agent processes that register themselves over their own WebSocket, as pi-socket does, then are SIGKILLed. */
const SELF_REGISTERED = 40;
const PI_AGENT = join(import.meta.dirname, '../../test/support/pi-agent.mjs');
/** Zombies and reuses are spaced at random in this range, so they fall at every phase of the 2 s probe. */
const SPACING_MS: [number, number] = [250, 650];
/** A verdict not seen by then counts as this long: the figure then says "missed". */
const GIVE_UP_MS = 10_000;
const COLUMNS = 120;
const ROWS = 40;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const between = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);
const round = (n: number) => Math.round(n * 10) / 10;


/** Start time of a live pid from /proc, in Unix ms, as an agent would report it. */
function startedAt(pid: number): number | undefined {
  const clock = linuxClock();
  const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return clock && stat ? ticksToEpochMs(stat.startTicks, clock.btimeSec, clock.clkTck) : undefined;
}

/**
 * A process whose parent never reaps it: `sh` backgrounds a `sleep`, then becomes a `sleep` that
 * never calls wait(). SIGKILL the child and it stays defunct (Z) while the parent lives.
 */
async function unreapedChild(): Promise<{ parent: ChildProcess; pid: number }> {
  const parent = spawn('sh', ['-c', 'sleep 100000 & exec sleep 100000'], { stdio: 'ignore' });
  await new Promise((resolve, reject) => parent.once('spawn', resolve).once('error', reject));
  const end = Date.now() + 5_000;
  while (Date.now() < end) {
    try {
      // Once sh has exec'd sleep, its one child is the backgrounded sleep.
      const kids = readFileSync(`/proc/${parent.pid}/task/${parent.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      const comm = readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim();
      if (comm === 'sleep' && kids.length === 1) return { parent, pid: kids[0]! };
    } catch {
      // not there yet
    }
    await sleep(10);
  }
  parent.kill('SIGKILL');
  throw new Error('no backgrounded child of sh within 5 s');
}

/**
 * Real pid reuse, not a simulation: with /proc/sys/kernel/ns_last_pid writable (root, or
 * CAP_CHECKPOINT_RESTORE) the next fork gets pid ns_last_pid + 1, so after the registered process
 * dies a new `sleep` is started on its very pid within a few ms. Another fork on the machine can
 * take the pid first: then we retry. Undefined when the kernel does not let us.
 */
async function respawnOnPid(pid: number): Promise<{ child: ChildProcess; t0: number } | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const t0 = performance.now();
    try {
      writeFileSync('/proc/sys/kernel/ns_last_pid', String(pid - 1));
    } catch {
      return undefined;
    }
    const child = await spawnSleep(300);
    if (child.pid === pid) return { child, t0 };
    await killAndReap(child);
  }
  return undefined;
}

function canRecyclePids(): boolean {
  try {
    writeFileSync('/proc/sys/kernel/ns_last_pid', readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8').trim());
    return true;
  } catch {
    return false;
  }
}

export async function detectFigures(): Promise<Figures> {
  if (process.platform !== 'linux') {
    process.stderr.write('bench: detect needs Linux (/proc): skipped\n');
    return {};
  }
  const me = hostname();
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-detect-'));
  const children: ChildProcess[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  let admin: WireClient | undefined;
  let engine: LiveEngine | undefined;
  let unmount: (() => void) | undefined;
  try {
    // Long TTL: the registry must not sweep anything itself while we measure ghostwatch.
    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600, limits: { nodesPerConnection: 1_000 } });
    agents = await openClient(server.url);
    admin = await openClient(server.url);
    const live = new Map<string, ChildProcess & { pid: number }>();
    const nodes: NodeParams[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const child = await spawnSleep(600);
      children.push(child);
      const id = `agent-${String(i).padStart(3, '0')}`;
      live.set(id, child);
      nodes.push({ id, machine: me, cwd: `/home/dev/work/project-${i % 23}`, port: 20_000 + i, pid: child.pid, pid_started_at: startedAt(child.pid) });
    }
    await registerNodes(agents, nodes);

    engine = createEngine({
      sources: [new HypivisorSource({ url: server.url })],
      hostName: me,
      intervalScale: 1,
      readOnly: true,
      auditLogPath: join(dir, 'evictions.jsonl'),
    });
    const verdicts = new Map<string, Verdict>();
    const inStore = new Map<Verdict, Watch>([['ghost', new Watch(GIVE_UP_MS)], ['zombie', new Watch(GIVE_UP_MS)], ['reused', new Watch(GIVE_UP_MS)]]);
    engine.subscribe(() => {
      const at = performance.now();
      verdicts.clear();
      for (const f of engine!.getSnapshot().findings) if (f.kind === 'session') verdicts.set(f.id, f.verdict);
      for (const [verdict, watch] of inStore) if (watch.size > 0) watch.check(at, (id) => verdicts.get(id) === verdict);
    });

    const { ink, app } = await importInkOutsideCi();
    const stdout = new FakeStdout(COLUMNS, ROWS);
    const onScreen = new Watch(GIVE_UP_MS);
    stdout.onEveryFrame = (at, text) => {
      if (onScreen.size === 0) return;
      const lines = plainText(text).split('\n').filter((l) => l.includes('!ghost'));
      onScreen.check(at, (id) => lines.some((l) => l.includes(id)));
    };
    engine.start();
    const instance = ink.render(createElement(app.App, { engine, readOnly: true, home: '/home/dev', onQuit: () => {} }), {
      ...RENDER_OPTIONS,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: new FakeStdin() as unknown as NodeJS.ReadStream,
    });
    unmount = () => {
      instance.unmount();
      instance.cleanup();
    };
    const snap = await engine.settled(30_000);
    if (!snap.settled || snap.counts.live !== AGENTS) throw new Error(`engine not settled on ${AGENTS} live agents (live: ${snap.counts.live})`);
    await sleep(1_000);

    // Ghosts: SIGKILL a random live agent every 500 ms. Once both its store and frame times are
    // in, the ghost is deregistered (as an eviction would) so the next ones stay on screen.
    const ghostStore: Promise<number>[] = [];
    const ghostFrame: Promise<number>[] = [];
    for (let k = 0; k < KILLS; k++) {
      const ids = [...live.keys()];
      const id = ids[Math.floor(Math.random() * ids.length)]!;
      const child = live.get(id)!;
      live.delete(id);
      const t0 = performance.now();
      child.kill('SIGKILL');
      const store = inStore.get('ghost')!.expect(id, t0);
      const frame = onScreen.expect(id, t0);
      ghostStore.push(store);
      ghostFrame.push(frame);
      void Promise.all([store, frame]).then(() => admin!.call('deregister', { id }).catch(() => undefined));
      await sleep(between(KILL_EVERY_MS));
    }
    const detect = await Promise.all(ghostStore);
    const detectFrame = await Promise.all(ghostFrame);

    // Zombies: registered while alive, then killed; their parent never reaps them.
    const zombies: { id: string; parent: ChildProcess; pid: number }[] = [];
    for (let i = 0; i < ZOMBIES; i++) {
      const z = await unreapedChild();
      children.push(z.parent);
      zombies.push({ id: `zombie-${i}`, ...z });
    }
    await registerNodes(
      agents,
      zombies.map((z, i) => ({ id: z.id, machine: me, cwd: '/home/dev/work/z', port: 21_000 + i, pid: z.pid, pid_started_at: startedAt(z.pid) })),
    );
    await waitForVerdicts(verdicts, zombies.map((z) => z.id), 'live');
    const zombieTimes: Promise<number>[] = [];
    for (const z of zombies) {
      const t0 = performance.now();
      process.kill(z.pid, 'SIGKILL');
      zombieTimes.push(inStore.get('zombie')!.expect(z.id, t0));
      await sleep(between(SPACING_MS));
    }
    const zombie = await Promise.all(zombieTimes);
    for (const z of zombies) await admin.call('deregister', { id: z.id }).catch(() => undefined);

    // Reuse: the registered process dies and a new one is started on its pid at once.
    let reuse: number[] | undefined;
    if (canRecyclePids()) {
      const olds: { id: string; child: ChildProcess & { pid: number } }[] = [];
      for (let i = 0; i < REUSES; i++) {
        const child = await spawnSleep(600);
        children.push(child);
        olds.push({ id: `reuse-${i}`, child });
      }
      await registerNodes(
        agents,
        olds.map((o, i) => ({ id: o.id, machine: me, cwd: '/home/dev/work/r', port: 22_000 + i, pid: o.child.pid, pid_started_at: startedAt(o.child.pid) })),
      );
      await waitForVerdicts(verdicts, olds.map((o) => o.id), 'live');
      // The new process must start more than the 2 s tolerance after the old one.
      await sleep(2_500);
      const reuseTimes: Promise<number>[] = [];
      for (const o of olds) {
        await killAndReap(o.child);
        const again = await respawnOnPid(o.child.pid);
        if (again) {
          children.push(again.child);
          reuseTimes.push(inStore.get('reused')!.expect(o.id, again.t0));
        }
        await sleep(between(SPACING_MS));
      }
      if (reuseTimes.length < REUSES / 2) process.stderr.write(`bench: detect: only ${reuseTimes.length} of ${REUSES} pids could be recycled\n`);
      reuse = await Promise.all(reuseTimes);
    } else {
      process.stderr.write('bench: detect: /proc/sys/kernel/ns_last_pid is not writable here (needs root): reuse_detect_p99_ms is n/a\n');
    }

    // Killed agents that registered themselves: the kernel closes their socket, the registry marks
    // them offline at once (node_offline), and ghostwatch must call them ghosts on the OS's word.
    const selfRegistered: { id: string; child: ChildProcess }[] = [];
    for (let i = 0; i < SELF_REGISTERED; i++) {
      const id = `offline-${String(i).padStart(2, '0')}`;
      const child = spawn(process.execPath, [PI_AGENT, server.url, '--id', id], { stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.once("data", () => resolve());
        child.once('exit', (code) => reject(new Error(`bench: pi agent ${id} exited (${code}) before registering`)));
      });
      child.removeAllListeners('exit');
      selfRegistered.push({ id, child });
    }
    await waitForVerdicts(verdicts, selfRegistered.map((a) => a.id), 'live');
    const offlineStore: Promise<number>[] = [];
    const offlineFrame: Promise<number>[] = [];
    for (const a of selfRegistered) {
      const t0 = performance.now();
      a.child.kill('SIGKILL');
      const store = inStore.get('ghost')!.expect(a.id, t0);
      const frame = onScreen.expect(a.id, t0);
      offlineStore.push(store);
      offlineFrame.push(frame);
      void Promise.all([store, frame]).then(() => admin!.call('deregister', { id: a.id }).catch(() => undefined));
      await sleep(between(KILL_EVERY_MS));
    }
    const offlineDead = await Promise.all(offlineStore);
    const offlineDeadFrame = await Promise.all(offlineFrame);

    const missed = [...detect, ...detectFrame, ...zombie, ...(reuse ?? []), ...offlineDead, ...offlineDeadFrame].filter((ms) => ms >= GIVE_UP_MS).length;
    if (missed > 0) process.stderr.write(`bench: detect: ${missed} verdicts never showed within ${GIVE_UP_MS / 1000} s (counted as ${GIVE_UP_MS} ms)\n`);
    const p99 = percentile(detect, 99);
    return {
      detect_p50_ms: { value: round(median(detect)), unit: 'ms' },
      detect_p99_ms: { value: round(p99), unit: 'ms', target: '<= 500' },
      detect_p99_over_interval: { value: Math.round((p99 / CADENCE.kill) * 100) / 100, unit: `x ${CADENCE.kill} ms`, target: '<= 2' },
      detect_frame_p99_ms: { value: round(percentile(detectFrame, 99)), unit: 'ms', target: '<= 600' },
      zombie_detect_p99_ms: { value: round(percentile(zombie, 99)), unit: 'ms', target: '<= 2500' },
      reuse_detect_p99_ms: { value: reuse && reuse.length > 0 ? round(percentile(reuse, 99)) : null, unit: 'ms', target: '<= 2500' },
      offline_dead_detect_p99_ms: { value: round(percentile(offlineDead, 99)), unit: 'ms', target: `<= ${2 * CADENCE.kill}` },
      offline_dead_frame_p99_ms: { value: round(percentile(offlineDeadFrame, 99)), unit: 'ms', target: `<= ${2 * CADENCE.kill + 100}` },
    };
  } finally {
    unmount?.();
    await engine?.stop();
    agents?.close();
    admin?.close();
    await Promise.all(children.map(killAndReap));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitForVerdicts(verdicts: ReadonlyMap<string, Verdict>, ids: readonly string[], verdict: Verdict): Promise<void> {
  const end = Date.now() + 15_000;
  while (!ids.every((id) => verdicts.get(id) === verdict)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${ids.length} entries to be ${verdict}`);
    await sleep(50);
  }
}

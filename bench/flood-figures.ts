// Keys under an event flood (issue 26): a registry holding 37,000 nodes pushes ~6,000 events a
// second (joins, re-registrations, offlines, removals) while keys are typed 40 ms apart into the
// real monitor (engine and Ink off-screen, the CLI's render options) in a process of its own.
// The registry and its flood run here, so they take none of the monitor's event loop.
// GHOSTWATCH_BENCH_CPU_PROF=<dir>: the monitor writes a V8 CPU profile there (node --cpu-prof).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { killAndReap, spawnSleep } from './children.js';
import { FloodRegistry } from './flood-registry.js';

export interface FloodFigures {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** The same keys on the same rows before the flood began. */
  readonly quietP50: number;
  readonly quietP99: number;
  readonly quietRssMb: number;
  /** Keys whose row had not moved after 10 s. */
  readonly missed: number;
  /** The monitor's peak RSS while keys were typed. */
  readonly rssMb: number;
  /** Events the monitor read per second while keys were typed (what the registry sent is `sentPerS`). */
  readonly eventsPerS: number;
  readonly sentPerS: number;
  readonly framesPerS: number;
  readonly recomputesPerS: number;
  readonly publishesPerS: number;
  readonly rows: number;
}

const MONITOR = join(import.meta.dirname, 'key-flood-monitor.js');

export async function keyFlood(nodes = 37_000, eventsPerSecond = 6_000, keys = 150): Promise<FloodFigures> {
  const live = await Promise.all(Array.from({ length: 100 }, () => spawnSleep(600)));
  const doomed = await Promise.all(Array.from({ length: 20 }, () => spawnSleep(600)));
  await Promise.all(doomed.map(killAndReap));
  const registry = await FloodRegistry.start({ nodes, livePids: live.map((c) => c.pid), deadPids: doomed.map((c) => c.pid) });
  try {
    const profDir = process.env.GHOSTWATCH_BENCH_CPU_PROF;
    const child = spawn(process.execPath, [...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), MONITOR, registry.url, String(nodes), String(eventsPerSecond), String(keys)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`the flood monitor exited with ${code}`);
    const figures = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Omit<FloodFigures, 'sentPerS'>;
    return { ...figures, sentPerS: registry.sentPerSecond };
  } finally {
    await registry.close();
    await Promise.all(live.map(killAndReap));
  }
}

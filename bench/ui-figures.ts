// UI figures. key_to_frame: the real App rendered by Ink into a fake TTY, 10,000 sessions and
// 2,000 claims, keys in, frames out. rss_10k and idle_*: the built CLI in a real tmux pane
// against a real registry (in this process) holding 10,000 registered nodes, over a minute and
// its age tick. demo_*: the busy demo in a real tmux pane, bytes the pane receives.
import { hasTmux, killAndReap, spawnSleep } from './children.js';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createElement } from 'react';
import WebSocket from 'ws';
import { defaultPolicy, reconcile, VERDICTS, type Finding, type Verdict } from '../src/core/index.js';
import type { Engine, EngineSnapshot, EvictRequest, EvictSummary } from '../src/engine/types.js';
import { startRegistryServer, type RegistryServer } from '../src/server/index.js';
import { emptyCounters } from '../src/sources/types.js';
import { RENDER_OPTIONS } from '../src/ui/render-options.js';
import { type Figures, median, percentile } from './figures.js';
import { FakeStdin, FakeStdout, importInkOutsideCi } from './offscreen.js';
import { keyFlood } from './flood-figures.js';
import { SYNTH_HOST, SYNTH_NOW, syntheticRegistry } from './synthetic.js';
import { MEASURED_BIN as BIN, ROOT } from './paths.js';

// Compiled to dist/bench/ (npm run bench); the project root is two folders up from there.

const COLUMNS = 120;
const ROWS = 40;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ------------------------------------------------------------ key to frame, in process

/** An engine whose one snapshot never changes: the UI's cost alone. */
class FixedEngine implements Engine {
  private readonly snap: EngineSnapshot;
  constructor(findings: readonly Finding[]) {
    const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
    for (const f of findings) counts[f.verdict]++;
    this.snap = {
      findings,
      sources: [
        {
          name: 'hypivisor',
          url: 'ws://127.0.0.1:31415/ws',
          status: 'connected',
          since: SYNTH_NOW - 60_000,
          repaired: 0,
          resyncs: 0,
          reconnects: 0,
          counters: emptyCounters(),
          claims: true,
          clockOffsetMs: 0,
        },
      ],
      host: SYNTH_HOST,
      os: { processTable: 'ok', lastProbeAt: SYNTH_NOW },
      counts,
      problems: findings.filter((f) => f.problem).length,
      computedAt: SYNTH_NOW,
      version: 1,
      settled: true,
    };
  }
  start(): void {}
  async stop(): Promise<void> {}
  getSnapshot = (): EngineSnapshot => this.snap;
  subscribe = (): (() => void) => () => {};
  async refresh(): Promise<void> {}
  async evict(request: EvictRequest): Promise<EvictSummary> {
    return { results: [], needsForce: request.selection, counts: { evicted: 0, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 } };
  }
  lastChecked(): undefined {
    return undefined;
  }
  processInfo(): undefined {
    return undefined;
  }
  async settled(): Promise<EngineSnapshot> {
    return this.snap;
  }
}

const PAGE_DOWN = '\u001b[6~';
const PAGE_UP = '\u001b[5~';

/** Keys this far apart, as a person pressing keys (a held key repeats at ~30/s). */
const KEY_GAP_MS = 40;

interface KeyFigures {
  readonly p50: number;
  readonly p99: number;
  /** Bytes written per key, on average (the frames and their synchronized-update wrappers). */
  readonly bytesPerKey: number;
  /** CPU time of this process from the key to its frame, median: the work, less the machine's other load. */
  readonly cpuP50: number;
}

/** How the frames reach the terminal: the CLI's render options, or the same with Ink's incremental mode. */
type Output = 'shipped' | 'incremental';

export async function keyToFrame(sessions = 10_000, claims = 2_000, output: Output = 'shipped'): Promise<KeyFigures> {
  const { view, facts } = syntheticRegistry(sessions, claims);
  const findings = reconcile(view, facts, SYNTH_NOW, defaultPolicy(SYNTH_HOST));
  const engine = new FixedEngine(findings);
  const { ink, app } = await importInkOutsideCi();
  const stdout = new FakeStdout(COLUMNS, ROWS);
  const stdin = new FakeStdin();
  let noFrame: NodeJS.Timeout | undefined;
  const firstFrame = new Promise<number>((resolve, reject) => {
    noFrame = setTimeout(() => reject(new Error('no first frame in 5 s (is Ink in CI mode?)')), 5_000);
    stdout.onFrame = resolve;
  });
  // The render options the CLI uses, so the figure is what users get.
  const terminal = stdout as unknown as NodeJS.WriteStream;
  const instance = ink.render(createElement(app.App, { engine, home: '/home/dev', now: () => SYNTH_NOW, onQuit: () => {} }), {
    ...RENDER_OPTIONS,
    ...(output === 'incremental' ? { incrementalRendering: true } : {}),
    stdout: terminal,
    stdin: stdin as unknown as NodeJS.ReadStream,
    debug: false,
  });
  try {
    await firstFrame.finally(() => clearTimeout(noFrame));
    // A frame without colours costs Ink less than the one a terminal gets: not the figure.
    if (!/\u001b\[3\dm/.test(stdout.lastFrame)) throw new Error('the first frame has no colours (chalk imported before importInkOutsideCi?)');
    const cpu: number[] = [];
    const press = async (key: string): Promise<number> => {
      let cpuAt: NodeJS.CpuUsage | undefined;
      const frame = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no frame after key ${JSON.stringify(key)}`)), 2_000);
        stdout.onFrame = (at) => {
          cpuAt = process.cpuUsage(cpu0);
          clearTimeout(timer);
          resolve(at);
        };
      });
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      stdin.write(key);
      const ms = (await frame) - t0;
      if (cpuAt) cpu.push((cpuAt.user + cpuAt.system) / 1000);
      await sleep(KEY_GAP_MS);
      return ms;
    };
    // Warm up, away from the top so 'k' always has a row to move to.
    for (let i = 0; i < 3; i++) await press(PAGE_DOWN);
    for (let i = 0; i < 60; i++) await press(i % 2 ? 'k' : 'j');
    const times: number[] = [];
    cpu.length = 0;
    const bytesBefore = stdout.bytes;
    for (let i = 0; i < 200; i++) {
      const key = i % 20 === 18 ? PAGE_DOWN : i % 20 === 19 ? PAGE_UP : i % 2 ? 'k' : 'j';
      times.push(await press(key));
    }
    return { p50: round(median(times)), p99: round(percentile(times, 99)), bytesPerKey: Math.round((stdout.bytes - bytesBefore) / times.length), cpuP50: round(median(cpu)) };
  } finally {
    instance.unmount();
    instance.cleanup();
  }
}

// ------------------------------------------------------------ the real CLI in tmux, 10,000 nodes

const NODES = 10_000;
/** At least this long, and past the first moment at which the rows' ages read "1m" (or "≥1m"). */
const IDLE_MS = 65_000;
/** Bytes within this long of a change on screen belong to that redraw (a frame may come in two reads). */
const REDRAW_MS = 1_000;

/**
 * Polls a growing file (a pane's pipe-pane output) and the pane's text for `ms`. Bytes that came
 * with a change of what the pane shows (an AGE turning: the timer set for that moment) are the
 * redraws', counted per redraw; bytes that changed nothing on screen are idle writes (target 0).
 */
async function watchBytes(file: string, ms: number, capture: () => string): Promise<{ tickBytes: number; otherBytes: number; ticks: number }> {
  const start = Date.now();
  let size = statSync(file).size;
  let screen = capture();
  let tickBytes = 0;
  let otherBytes = 0;
  let ticks = 0;
  let changedAt = -Infinity;
  while (Date.now() - start < ms) {
    await sleep(50);
    const now = statSync(file).size;
    if (now === size) continue;
    const shown = capture();
    if (shown !== screen || Date.now() - changedAt < REDRAW_MS) {
      if (Date.now() - changedAt >= REDRAW_MS) ticks++;
      if (shown !== screen) changedAt = Date.now();
      tickBytes += now - size;
    } else otherBytes += now - size;
    screen = shown;
    size = now;
  }
  return { tickBytes, otherBytes, ticks };
}
/**
 * Live pids the entries share (~30 entries each, so most are superseded). Keep the groups small:
 * reconcile's supersede builds each entry's sibling list and text, O(k^2) in a group of k, and
 * groups of ~750 (8 pids) make this figure measure that path instead of the monitor's footprint.
 */
const LIVE_PIDS = 200;



async function until<T>(fn: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** 10,000 `register` requests over one connection; resolves once every one is answered. */
async function registerAll(server: RegistryServer, live: number[], dead: number[], ws: WebSocket): Promise<void> {
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  let answered = 0;
  const done = new Promise<void>((resolve) =>
    ws.on('message', (data) => {
      // Responses carry the request's id; node_joined events (to this peer too) carry `event`.
      const message = JSON.parse(String(data)) as { event?: string };
      if (message.event === undefined && ++answered === NODES) resolve();
    }),
  );
  const me = hostname();
  for (let i = 0; i < NODES; i++) {
    const r = i % 100;
    // Most are this host's: 60% on live pids (shared pids, so most are superseded), 25% on
    // dead ones (ghosts); 10% on other machines (never probed here); 1% without a pid (port probed);
    // the rest pending-* ids of a live pid.
    const pid = r < 60 ? live[i % live.length] : r < 85 ? dead[i % dead.length] : r < 95 ? 40_000 + i : r < 96 ? undefined : live[i % live.length];
    const params = {
      id: r >= 96 ? `pending-${i}` : `agent-${i}`,
      machine: r >= 85 && r < 95 ? `node-${i % 7}.example` : me,
      cwd: `/home/dev/work/project-${i % 97}/packages/pkg-${i % 13}`,
      port: 20_000 + i,
      status: 'active',
      pid,
    };
    ws.send(JSON.stringify({ id: `r-${i}`, method: 'register', params }));
  }
  await done;
  if (server.registry.listNodes().length !== NODES) throw new Error(`registry holds ${server.registry.listNodes().length} nodes, not ${NODES}`);
}

async function cliFigures(): Promise<{ rssMb: number; tickBytes: number; betweenTicks: number; redrawsPerMin: number }> {
  const socket = `gw-bench-${process.pid}`;
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const capture = (): string => tmux('capture-pane', '-p', '-t', 'gw');
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-ui-'));
  const out = join(dir, 'pty-output.bin');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  Object.assign(env, { XDG_STATE_HOME: dir, TERM: 'xterm-256color' });
  const children: ChildProcess[] = [];
  let server: RegistryServer | undefined;
  let admin: WebSocket | undefined;
  let socketPath: string | undefined;
  try {
    // Long TTL: nothing may be swept while we measure.
    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600, limits: { nodesPerConnection: NODES } });
    const live: (ChildProcess & { pid: number })[] = [];
    for (let i = 0; i < LIVE_PIDS; i++) children.push(live[i] = await spawnSleep(300));
    const doomed: (ChildProcess & { pid: number })[] = [];
    for (let i = 0; i < 8; i++) children.push(doomed[i] = await spawnSleep(300));
    await Promise.all(doomed.map(killAndReap));
    admin = new WebSocket(server.url);
    const registeredAt = Date.now();
    await registerAll(
      server,
      live.map((c) => c.pid),
      doomed.map((c) => c.pid),
      admin,
    );

    // `exec`: the pane's pid is the node process itself.
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', String(COLUMNS), '-y', String(ROWS), `exec node '${BIN}' --registry ${server.url}`], { env });
    socketPath = tmux('display', '-p', '#{socket_path}').trim();
    const pid = Number(tmux('display', '-p', '-t', 'gw', '#{pane_pid}').trim());
    // The status line counts the rows; the header shows ghosts once the first probes ran.
    await until(() => /\b10000 sessions\b/.test(capture()) && /\d+ ghost/.test(capture()), 30_000, 'the 10,000 rows on screen');
    await sleep(3_000);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('ghostwatch')) throw new Error(`pane pid ${pid} is not ghostwatch`);
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);

    // Over a minute and more: the ages shown turn once a minute each (registered rows a minute after
    // registering, ghosts a minute after their first probe), each redrawn at that moment; any byte
    // that changes nothing on screen is an idle write.
    tmux('pipe-pane', '-o', '-t', 'gw', `cat >> '${out}'`);
    await until(() => existsSync(out), 3_000, 'the pipe-pane file');
    // Run past the moment the registered rows' ages read "1m", so a redraw changes what they show.
    const watchMs = Math.max(IDLE_MS, registeredAt + 61_500 - Date.now());
    const idle = await watchBytes(out, watchMs, capture);
    if (idle.ticks === 0) throw new Error('no age turned on screen in the idle window');
    if (!existsSync(`/proc/${pid}`)) throw new Error('ghostwatch exited during the idle window: its 0 bytes would mean nothing');
    // MB as /proc counts them: 1024 kB.
    return { rssMb: Math.round((rssKb / 1024) * 10) / 10, tickBytes: Math.round(idle.tickBytes / idle.ticks), betweenTicks: idle.otherBytes, redrawsPerMin: Math.round((idle.ticks / (watchMs / 60_000)) * 10) / 10 };
  } finally {
    try {
      execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // never started
    }
    if (socketPath) rmSync(socketPath, { force: true }); // kill-server leaves it behind
    admin?.terminate();
    await Promise.all(children.map(killAndReap));
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Two of the demo's new ghosts (one every ~30 s) and a minute tick: between them it draws nothing. */
const DEMO_MS = 60_000;
const BSU = '\u001b[?2026h';
/** The monitor's own pane: inside tmux the demo's agents get a window of their own, `gw-demo`, which a bare `gw` would also name. */
const DEMO_PANE = '=gw:0.0';

/**
 * The busy demo (agents joining, dying, a new ghost every ~30 s) in a real tmux pane, 120x40,
 * for DEMO_MS: bytes written per second, frames per second (Ink wraps each frame in a
 * synchronized update), and a full repaint's size (the largest frame: the standard renderer
 * repaints the whole frame on every change, so frames near this size are full repaints).
 */
async function demoFigures(): Promise<{ bytesPerS: number; framesPerS: number; fullFrameBytes: number; medianFrameBytes: number }> {
  const socket = `gw-bench-demo-${process.pid}`;
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-demo-'));
  const out = join(dir, 'pty-output.bin');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  Object.assign(env, { XDG_STATE_HOME: dir, TERM: 'xterm-256color' });
  let socketPath: string | undefined;
  try {
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', String(COLUMNS), '-y', String(ROWS), `exec node '${BIN}' demo`], { env });
    socketPath = tmux('display', '-p', '#{socket_path}').trim();
    await until(() => /\b\d+ ghost/.test(tmux('capture-pane', '-p', '-t', DEMO_PANE)), 30_000, 'the demo on screen');
    tmux('pipe-pane', '-o', '-t', DEMO_PANE, `cat >> '${out}'`);
    await until(() => existsSync(out), 3_000, 'the pipe-pane file');
    await sleep(DEMO_MS);
    const text = readFileSync(out, 'latin1');
    const frames = text.split(BSU).slice(1).map((f) => f.length);
    return {
      bytesPerS: Math.round(text.length / (DEMO_MS / 1000)),
      framesPerS: round(frames.length / (DEMO_MS / 1000)),
      fullFrameBytes: frames.length > 0 ? Math.max(...frames) : 0,
      medianFrameBytes: frames.length > 0 ? median(frames) : 0,
    };
  } finally {
    try {
      // q: the demo ends every process it started, then exits, and the pane with it.
      execFileSync('tmux', ['-L', socket, 'send-keys', '-t', DEMO_PANE, 'q'], { stdio: 'ignore' });
      await until(() => !/\bgw:/.test(execFileSync('tmux', ['-L', socket, 'ls'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })), 10_000, 'the demo to quit');
    } catch {
      // gone already (no server left to ask), or did not quit: the server goes below
    }
    try {
      execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // never started
    }
    if (socketPath) rmSync(socketPath, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function uiFigures(): Promise<Figures> {
  const figures: Figures = {};
  // GHOSTWATCH_BENCH_UI=flood: only the keys under the event flood (issue 26).
  const only = process.env.GHOSTWATCH_BENCH_UI;
  if (only === undefined || only === 'flood') {
    const flood = await keyFlood();
    figures.key_flood_p50_ms = { value: flood.p50, unit: 'ms' };
    figures.key_flood_p99_ms = { value: flood.p99, unit: 'ms', target: '<= 50' };
    figures.key_flood_max_ms = { value: flood.max, unit: 'ms' };
    // The same keys on the same rows just before the flood: what a key costs on this machine now.
    figures.key_flood_quiet_p99_ms = { value: flood.quietP99, unit: 'ms' };
    figures.key_flood_rss_mb = { value: flood.rssMb, unit: 'MB' };
    figures.key_flood_events_per_s = { value: flood.eventsPerS, unit: 'events/s' };
    figures.key_flood_publishes_per_s = { value: flood.publishesPerS, unit: 'publishes/s' };
    if (process.env.GHOSTWATCH_BENCH_VERBOSE) process.stderr.write(`bench: flood: ${JSON.stringify(flood)}\n`);
    if (only === 'flood') return figures;
  }
  // GHOSTWATCH_BENCH_UI=cli: only the figures of the real CLI in tmux (rss_10k_mb, idle_bytes_per_s).
  if (only !== 'cli') {
    // The CLI's render options at 1,000 and 10,000 sessions, each the mean of two runs.
    const runs = [await keyToFrame(1_000, 200), await keyToFrame(10_000, 2_000), await keyToFrame(1_000, 200), await keyToFrame(10_000, 2_000)];
    const mean = (at: number, key: keyof KeyFigures): number => round((runs[at]![key] + runs[at + 2]![key]) / 2);
    figures.key_to_frame_1k_p99_ms = { value: mean(0, 'p99'), unit: 'ms', target: '<= 16' };
    figures.key_to_frame_p50_ms = { value: mean(1, 'p50'), unit: 'ms' };
    figures.key_to_frame_p99_ms = { value: mean(1, 'p99'), unit: 'ms', target: '<= 16' };
    figures.key_bytes_per_frame = { value: Math.round(mean(1, 'bytesPerKey')), unit: 'bytes' };
    figures.key_cpu_p50_ms = { value: mean(1, 'cpuP50'), unit: 'ms' };
    // Ink 6.8's incremental mode, the same keys (not shipped: docs/ink-6-incremental-newline.patch).
    const incremental = await keyToFrame(10_000, 2_000, 'incremental');
    figures.key_to_frame_incremental_p99_ms = { value: incremental.p99, unit: 'ms' };
    figures.key_bytes_per_frame_incremental = { value: incremental.bytesPerKey, unit: 'bytes' };
    // 50,000 registered nodes (issue 13): the same keys over five times the rows.
    const keys50k = await keyToFrame(50_000, 5_000);
    figures.keys_50k_p50_ms = { value: keys50k.p50, unit: 'ms' };
    figures.keys_50k_p99_ms = { value: keys50k.p99, unit: 'ms', target: '<= 60' };
  }
  const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
  if (process.platform !== 'linux' || !hasTmux() || !built) {
    process.stderr.write('bench: ui: rss_10k_mb, idle_* and demo_* need Linux, tmux and a built dist/: skipped\n');
    return figures;
  }
  const cli = await cliFigures();
  figures.rss_10k_mb = { value: cli.rssMb, unit: 'MB', target: '<= 110' };
  figures.idle_tick_bytes = { value: cli.tickBytes, unit: 'bytes/redraw' };
  figures.idle_bytes_between_ticks = { value: cli.betweenTicks, unit: 'bytes', target: '0' };
  // Each shown age turns once a minute at most: a handful of redraws a minute, never one a second.
  figures.idle_redraws_per_min = { value: cli.redrawsPerMin, unit: 'redraws/min' };
  // The busy demo over a minute: what a real terminal receives.
  const demo = await demoFigures();
  figures.demo_bytes_per_s = { value: demo.bytesPerS, unit: 'bytes/s' };
  figures.demo_frames_per_s = { value: demo.framesPerS, unit: 'frames/s' };
  figures.demo_frame_bytes_p50 = { value: demo.medianFrameBytes, unit: 'bytes' };
  figures.demo_full_frame_bytes = { value: demo.fullFrameBytes, unit: 'bytes' };
  return figures;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

// Registry client figures: a raw ws server on loopback feeds the real HypivisorSource. The event
// flood and check_50k run the built CLI (the monitor in a real tmux pane; `check` as a person runs it).
// The claude_1k figures: Claude Code's session files, read by the real engine (claude-figures.ts).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { hasTmux, killAndReap, spawnSleep } from './children.js';
import { claudeFigures } from './claude-figures.js';
import { type Figures, median } from './figures.js';
import { LAUNCHER as BIN, ROOT } from './paths.js';

// Compiled to dist/bench/ (npm run bench); the project root is two folders up from there.
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const NODES = 10_000;
const EVENTS = 60_000;

function nodeInfo(i: number, port = 20_000 + (i % 40_000)): Record<string, unknown> {
  return { id: `session-${i}`, machine: 'devbox', cwd: `/home/dev/project-${i % 97}`, port, status: 'active', pid: 10_000 + i, last_seen: 1_800_000_000 };
}

async function withServer<T>(run: (wss: WebSocketServer, url: string, next: () => Promise<WebSocket>) => Promise<T>): Promise<T> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
  const waiting: ((ws: WebSocket) => void)[] = [];
  wss.on('connection', (ws) => waiting.shift()?.(ws));
  const next = () => new Promise<WebSocket>((r) => waiting.push(r));
  try {
    return await run(wss, url, next);
  } finally {
    for (const ws of wss.clients) ws.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
  }
}

const initFrame = JSON.stringify({ event: 'init', protocol_version: '1', claims: [], nodes: Array.from({ length: NODES }, (_, i) => nodeInfo(i)) });

/** ms from sending a 10,000-node init frame to the client's usable snapshot. */
async function initOnce(url: string, next: () => Promise<WebSocket>): Promise<number> {
  const src = new HypivisorSource({ url, resyncIntervalMs: 600_000 });
  const ws = next();
  src.start();
  const server = await ws;
  const done = new Promise<number>((resolve) => {
    const off = src.subscribe(() => {
      if (src.snapshot().sessions.length === NODES) {
        off();
        resolve(performance.now());
      }
    });
  });
  const t0 = performance.now();
  server.send(initFrame);
  const t1 = await done;
  await src.stop();
  return t1 - t0;
}

async function ingest(url: string, next: () => Promise<WebSocket>): Promise<number> {
  const src = new HypivisorSource({ url, resyncIntervalMs: 600_000 });
  const ws = next();
  src.start();
  const server = await ws;
  server.send(initFrame);
  await new Promise<void>((r) => {
    const off = src.subscribe(() => src.snapshot().sessions.length === NODES && (off(), r()));
  });
  // Churn against the 10,000-node view: re-registrations, new joins, offline marks, removals.
  const frames: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const id = i % NODES;
    const kind = i % 4;
    if (kind === 0) frames.push(JSON.stringify({ event: 'node_joined', node: nodeInfo(id) }));
    else if (kind === 1) frames.push(JSON.stringify({ event: 'node_offline', id: `session-${id}` }));
    else if (kind === 2) frames.push(JSON.stringify({ event: 'node_joined', node: nodeInfo(NODES + i) }));
    else frames.push(JSON.stringify({ event: 'node_removed', id: `session-${NODES + i - 1}` }));
  }
  // Every one of these events changes the view, so each notifies once. The listener only counts,
  // as the engine's only schedules a coalesced recompute.
  let applied = 0;
  src.subscribe(() => void applied++);
  const t0 = performance.now();
  for (const f of frames) server.send(f);
  while (applied < EVENTS) await new Promise((r) => setImmediate(r));
  const elapsed = performance.now() - t0;
  await src.stop();
  return (EVENTS / elapsed) * 1000;
}

// ------------------------------------------------------------ a registry the CLI reads

/**
 * A raw registry on loopback: `nodes` in its init, and list_nodes / list_claims answered with the
 * same (so re-syncs find nothing to repair); deregister answered not_found.
 */
async function staticRegistry<T>(nodes: readonly Record<string, unknown>[], run: (url: string, clients: () => WebSocket[]) => Promise<T>): Promise<T> {
  const list = JSON.stringify(nodes);
  return withServer(async (wss, url) => {
    wss.on('connection', (ws) => {
      ws.send(`{"event":"init","protocol_version":"1","claims":[],"nodes":${list}}`);
      ws.on('message', (data) => {
        const req = JSON.parse(String(data)) as { id: string; method: string };
        if (req.method === 'list_nodes') ws.send(`{"id":${JSON.stringify(req.id)},"result":${list}}`);
        else if (req.method === 'list_claims') ws.send(JSON.stringify({ id: req.id, result: [] }));
        else ws.send(JSON.stringify({ id: req.id, result: { status: 'not_found' } }));
      });
    });
    return run(url, () => [...wss.clients]);
  });
}

/**
 * `n` nodes as a large shared registry holds them: 10% this host's on live pids (shared, ~n/1000
 * entries each), 65% this host's on pids with no process (ghosts), 25% other machines'.
 */
function manyNodes(n: number, live: readonly number[], dead: readonly number[]): Record<string, unknown>[] {
  const me = hostname();
  return Array.from({ length: n }, (_, i) => {
    const r = i % 20;
    const local = r < 15;
    const pid = r < 2 ? live[i % live.length] : r < 15 ? dead[i % dead.length] : 40_000 + (i % 20_000);
    return { id: `agent-${i}`, machine: local ? me : `node-${i % 7}.example`, cwd: `/home/dev/work/project-${i % 97}/packages/pkg-${i % 13}`, port: 20_000 + (i % 40_000), status: 'active', pid, last_seen: Math.floor(Date.now() / 1000), registered_at: Math.floor(Date.now() / 1000) - (i % 3600) };
  });
}

/** Pids with no process now: children killed and reaped (their numbers stay unused for a while). */
async function deadPids(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = await spawnSleep(60);
    await killAndReap(c);
    out.push(c.pid);
  }
  return out;
}

const CHECK_NODES = 50_000;

/** Wall ms of `ghostwatch check` against CHECK_NODES nodes (median of 3, after one warm-up). */
async function check50k(live: readonly number[], dead: readonly number[]): Promise<number> {
  const nodes = manyNodes(CHECK_NODES, live, dead);
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-check-'));
  try {
    return await staticRegistry(nodes, async (url) => {
      const env = { ...process.env, XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir, HYPI_TOKEN: '', HYPIVISOR_WS: '', NO_COLOR: '1' };
      const once = () =>
        new Promise<number>((resolve, reject) => {
          const t0 = performance.now();
          // check exits 1 when it finds problems (it will: a third are ghosts); 2 is an error.
          execFile(process.execPath, [BIN, 'check', '--registry', url, '--timeout', '60'], { env, maxBuffer: 256 * 1024 * 1024 }, (error, stdout) => {
            const ms = performance.now() - t0;
            if (error && error.code !== 1) return reject(new Error(`check failed (${String(error.code)}): ${error.message.slice(0, 300)}`));
            if (!stdout.includes('agent-49999')) return reject(new Error('check did not report every node'));
            resolve(ms);
          });
        });
      await once();
      const times: number[] = [];
      for (let i = 0; i < 3; i++) times.push(await once());
      return median(times);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------ the event flood at the monitor

const FLOOD_RATE = 10_000;
const FLOOD_NODES = 10_000;
/** 20 s by default; GHOSTWATCH_BENCH_FLOOD_S=60 for the issue's full minute. */
const FLOOD_SECONDS = Number(process.env.GHOSTWATCH_BENCH_FLOOD_S ?? 20);

function rssMb(pid: number): number {
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Least-squares slope of y over x. */
function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * The monitor (the built CLI in a real tmux pane) over a registry of FLOOD_NODES nodes, then
 * FLOOD_RATE events a second for FLOOD_SECONDS: re-registrations, offline marks, new joins and
 * their removals, so the node count stays put and only the event rate is under test. Its RSS is
 * read from /proc every second: the peak, and its growth per second (least squares, after 3 s).
 */
async function eventFlood(live: readonly number[], dead: readonly number[]): Promise<{ peakMb: number; startMb: number; growthMbPerS: number; sent: number }> {
  const nodes = manyNodes(FLOOD_NODES, live, dead);
  const socket = `gw-bench-flood-${process.pid}`;
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-flood-'));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_')));
  Object.assign(env, { XDG_STATE_HOME: dir, XDG_CONFIG_HOME: dir, TERM: 'xterm-256color', HYPI_TOKEN: '', HYPIVISOR_WS: '' });
  let socketPath: string | undefined;
  try {
    return await staticRegistry(nodes, async (url, clients) => {
      execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '120', '-y', '40', `exec node '${BIN}' --read-only --registry ${url}`], { env });
      socketPath = tmux('display', '-p', '#{socket_path}').trim();
      const pid = Number(tmux('display', '-p', '-t', 'gw', '#{pane_pid}').trim());
      const end = Date.now() + 30_000;
      while (!/\b10000 sessions\b/.test(tmux('capture-pane', '-p', '-t', 'gw'))) {
        if (Date.now() > end) throw new Error('the monitor did not show the 10,000 rows');
        await sleep(100);
      }
      await sleep(2_000);
      const startMb = rssMb(pid);
      // Frames made up front (a ring), so this process spends its time sending, not stringifying.
      const ring: string[] = [];
      const now = Math.floor(Date.now() / 1000);
      for (let i = 0; i < 40_000; i++) {
        const id = i % FLOOD_NODES;
        const kind = i % 4;
        if (kind === 0 || kind === 1) ring.push(JSON.stringify({ event: 'node_joined', node: { ...nodes[id], last_seen: now + i } }));
        else if (kind === 2) ring.push(JSON.stringify({ event: 'node_joined', node: { ...nodes[id], id: `flood-${i}`, last_seen: now + i } }));
        else ring.push(JSON.stringify({ event: 'node_removed', id: `flood-${i - 1}` }));
      }
      const ws = clients()[0];
      if (!ws) throw new Error('the monitor is not connected');
      const samples: { t: number; mb: number }[] = [];
      const t0 = performance.now();
      let sent = 0;
      let nextSample = 1_000;
      while (performance.now() - t0 < FLOOD_SECONDS * 1000) {
        const due = Math.floor(((performance.now() - t0) / 1000) * FLOOD_RATE);
        while (sent < due) ws.send(ring[sent++ % ring.length]!);
        if (performance.now() - t0 >= nextSample) {
          samples.push({ t: (performance.now() - t0) / 1000, mb: rssMb(pid) });
          nextSample += 1_000;
        }
        await sleep(5);
      }
      if (process.env.GHOSTWATCH_BENCH_FLOOD_TRACE === '1') process.stderr.write(`bench: flood rss (s, MB): start ${startMb}; ${samples.map((x) => `${Math.round(x.t)}:${x.mb}`).join(' ')}\n`);
      // The heap breathes (GC sawtooth of ±20 MB): the trend over every sample after a 3 s warm-up.
      const half = samples.filter((x) => x.t >= 3);
      return {
        peakMb: Math.max(startMb, ...samples.map((s) => s.mb)),
        startMb,
        growthMbPerS: Math.round(slope(half.map((s) => s.t), half.map((s) => s.mb)) * 100) / 100,
        sent,
      };
    });
  } finally {
    try {
      execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    } catch {
      // never started
    }
    if (socketPath) rmSync(socketPath, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** check_50k and the event flood: the built CLI against a registry in this process. */
async function cliLoadFigures(): Promise<Figures> {
  const figures: Figures = {};
  if (process.platform !== 'linux' || !existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
    process.stderr.write('bench: sources: check_50k_ms and event_flood_rss_mb need Linux and a built dist/: skipped\n');
    return figures;
  }
  const live = await Promise.all(Array.from({ length: 100 }, () => spawnSleep(600)));
  try {
    const dead = await deadPids(20);
    const livePids = live.map((c) => c.pid);
    if (process.env.GHOSTWATCH_BENCH_SKIP_CHECK50K !== '1') {
      figures.check_50k_ms = { value: Math.round(await check50k(livePids, dead)), unit: 'ms', target: '< 2000' };
    }
    if (!hasTmux()) {
      process.stderr.write('bench: sources: event_flood_rss_mb needs tmux: skipped\n');
      return figures;
    }
    const flood = await eventFlood(livePids, dead);
    figures.event_flood_rss_mb = { value: flood.peakMb, unit: 'MB', target: '< 300' };
    figures.event_flood_rss_start_mb = { value: flood.startMb, unit: 'MB' };
    figures.event_flood_growth_mb_per_s = { value: flood.growthMbPerS, unit: 'MB/s', target: '~0 (flat)' };
    figures.event_flood_events_per_s = { value: Math.round(flood.sent / FLOOD_SECONDS), unit: 'events/s', target: `${FLOOD_RATE} for ${FLOOD_SECONDS} s` };
    return figures;
  } finally {
    await Promise.all(live.map(killAndReap));
  }
}

export async function sourcesFigures(): Promise<Figures> {
  const client = await withServer(async (_wss, url, next) => {
    const inits: number[] = [];
    for (let i = 0; i < 7; i++) inits.push(await initOnce(url, next));
    const rates: number[] = [];
    for (let i = 0; i < 3; i++) rates.push(await ingest(url, next));
    return {
      init_10k_ms: { value: Math.round(median(inits.slice(2)) * 10) / 10, unit: 'ms' },
      ingest_events_per_s: { value: Math.round(median(rates)), unit: 'events/s', target: '>= 20000' },
    } satisfies Figures;
  });
  return { ...client, ...(await cliLoadFigures()), ...(await claudeFigures()) };
}

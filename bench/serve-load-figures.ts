// `ghostwatch serve` under load, the built CLI in a process of its own: what `/ws/agent` proxies
// with a Pi-DE that never reads cost it (per proxy, and for 100); the worst mix of 1,000
// connections (registry clients that never read, proxies whose Pi-DE never reads, proxies whose
// agent never reads, all with 15 MiB frames; a heartbeat that pings like 3,000 agents) with
// serve's peak RSS and how fast other clients (in a process of their own) are answered meanwhile;
// and a reconnect storm of 1,000 agents: the wall time to settle, and serve's own CPU time
// meanwhile (the agents, 1,000 clients in one process here, take their share of the machine). A
// run whose serve passes RSS_CEILING_MB is stopped there (the figure is then that ceiling and
// more): the machine is shared.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { type Figures, percentile } from './figures.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';
import { params, rssMb, startServe, stormAgent, type ServeProcess } from './serve-process.js';
import { pumpFrames } from './flood-pump.js';

const FRAME_BYTES = 15 * 1024 * 1024;
const RSS_CEILING_MB = 4096;
const HERE = new URL('.', import.meta.url).pathname;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Agents {
  readonly child: ChildProcess;
  readonly flood: number[];
  readonly deaf: number[];
}

async function startAgents(flood: number, deaf: number): Promise<Agents> {
  const child = fork(join(HERE, 'proxy-agents.js'), [JSON.stringify({ flood, deaf, frameBytes: FRAME_BYTES })], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const ports = await new Promise<{ flood: number[]; deaf: number[] }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { flood: number[]; deaf: number[] }));
    child.once('exit', (code) => reject(new Error(`proxy agents exited (${code})`)));
  });
  return { child, ...ports };
}

/** Registers one node per agent port (64 per connection, the per-connection limit); the connections stay open. */
async function registerAgents(url: string, ports: readonly number[]): Promise<{ ids: string[]; clients: WireClient[] }> {
  const ids = ports.map((_, i) => `proxied-agent-${i}`);
  const clients: WireClient[] = [];
  for (let at = 0; at < ports.length; at += 64) {
    const client = await openClient(url);
    clients.push(client);
    const nodes: NodeParams[] = ports.slice(at, at + 64).map((port, k) => ({ id: ids[at + k]!, machine: '127.0.0.1', cwd: '/work', port }));
    await registerNodes(client, nodes);
  }
  return { ids, clients };
}

function agentUrl(serve: ServeProcess, id: string): string {
  return `ws://127.0.0.1:${serve.port}/ws/agent/${encodeURIComponent(id)}`;
}

/** A client whose socket is never read from the handshake on (a Pi-DE tab or registry client gone deaf). */
function deafSocket(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  ws.on('error', () => {});
  return new Promise((resolve) => {
    ws.once('upgrade', (res) => {
      res.socket.pause();
      resolve(ws);
    });
    ws.once('close', () => resolve(ws));
  });
}

/** A Pi-DE that sends 15 MiB frames as fast as its socket takes them and never reads. */
function floodingSocket(url: string): Promise<WebSocket> {
  // A zero mask: ws sends the one frame buffer without a masked copy per send.
  const ws = new WebSocket(url, { perMessageDeflate: false, generateMask: (mask) => void mask.fill(0) });
  ws.on('error', () => {});
  const frame = Buffer.alloc(FRAME_BYTES, 0x62);
  return new Promise((resolve) => {
    ws.once('open', () => {
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      pumpFrames(ws, frame, 2 * FRAME_BYTES);
      resolve(ws);
    });
    ws.once('close', () => resolve(ws));
  });
}

/** Clients pinging serve from a process of their own; `stop` gives every round trip in ms. */
async function startPingers(url: string, count: number): Promise<{ stop(): Promise<number[]> }> {
  const child = fork(join(HERE, 'pingers.js'), [JSON.stringify({ url, count })], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  await new Promise((resolve) => child.once('message', resolve));
  return {
    stop: () =>
      new Promise((resolve) => {
        child.once('message', (times) => resolve(times as number[]));
        child.once('exit', () => resolve([]));
        child.send('stop');
      }),
  };
}

/** Samples serve's RSS every 100 ms; SIGKILLs it past the ceiling. */
function watchRss(serve: ServeProcess): { peak(): number; stop(): void; overCeiling(): boolean } {
  const pid = serve.proc.pid!;
  let peak = 0;
  let over = false;
  const timer = setInterval(() => {
    const now = rssMb(pid, 'VmRSS');
    if (Number.isFinite(now)) peak = Math.max(peak, now, rssMb(pid, 'VmHWM'));
    if (now > RSS_CEILING_MB && !over) {
      over = true;
      serve.proc.kill('SIGKILL');
    }
  }, 100);
  return { peak: () => peak, stop: () => clearInterval(timer), overCeiling: () => over };
}

const DEAF_PROXIES = 100;

/** serve's RSS with 100 proxies whose agent floods 15 MiB frames and whose Pi-DE never reads; and once they closed. */
async function deafProxies(): Promise<{ idle: number; peak: number; afterClose: number }> {
  const agents = await startAgents(DEAF_PROXIES, 0);
  const serve = await startServe(['--quiet']);
  const sockets: WebSocket[] = [];
  try {
    const { ids, clients } = await registerAgents(serve.url, agents.flood);
    await sleep(500);
    const idle = rssMb(serve.proc.pid!, 'VmRSS');
    const rss = watchRss(serve);
    for (const id of ids) sockets.push(await deafSocket(agentUrl(serve, id)));
    await sleep(8_000);
    rss.stop();
    const peak = rss.overCeiling() ? RSS_CEILING_MB : rss.peak();
    for (const ws of sockets) ws.terminate();
    await sleep(3_000);
    const afterClose = rss.overCeiling() ? Number.NaN : rssMb(serve.proc.pid!, 'VmRSS');
    for (const c of clients) c.close();
    return { idle, peak, afterClose };
  } finally {
    for (const ws of sockets) ws.terminate();
    await serve.stop();
    agents.child.kill('SIGKILL');
  }
}

const MIX_REGISTRY_NODES = 20_000;
const MIX_DEAF_CLIENTS = 400;
const MIX_DEAF_PROXIES = 300;
const MIX_FLOODING_PROXIES = 300;
const MIX_MS = 15_000;

/**
 * The worst mix: a 20,000-node registry (~5 MB init), a connection that pings 100 times a second
 * (as 3,000 agents do), then 400 registry clients that never read (each asks list_nodes 4 times),
 * 300 proxies whose agent floods and whose Pi-DE never reads, 300 whose Pi-DE floods and whose
 * agent never reads; three clients ping serve (the JSON method) all along.
 */
async function worstMix(): Promise<{ peak: number; p99: number; over: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-mix-'));
  const file = join(dir, 'state.json');
  const nodes = Array.from({ length: MIX_REGISTRY_NODES }, (_, i) => ({ ...params(i), machine: 'remote-box', status: 'offline', offline_since: 1_763_900_000, last_seen: 1_763_900_000, registered_at: 1_763_900_000 }));
  writeFileSync(file, JSON.stringify({ version: 1, nodes, claims: [] }));
  const agents = await startAgents(MIX_DEAF_PROXIES, MIX_FLOODING_PROXIES);
  const serve = await startServe(['--quiet', '--state-file', file, '--max-connections', '1100']);
  const sockets: WebSocket[] = [];
  let heartbeat: NodeJS.Timeout | undefined;
  try {
    const flooders = await registerAgents(serve.url, agents.flood);
    const deafAgents = await registerAgents(serve.url, agents.deaf);
    const beating = new WebSocket(serve.url);
    sockets.push(beating);
    await new Promise((resolve, reject) => beating.once('open', resolve).once('error', reject));
    beating.send(JSON.stringify({ id: 'hb', method: 'register', params: { id: 'heartbeat', machine: 'remote-box', cwd: '/', port: 1, status: 'active' } }));
    heartbeat = setInterval(() => beating.readyState === WebSocket.OPEN && beating.ping(), 10);
    await sleep(500);
    const rss = watchRss(serve);
    const others = await startPingers(serve.url, 3);
    const started = Date.now();
    for (let i = 0; i < MIX_DEAF_CLIENTS; i++) {
      const ws = await deafSocket(serve.url);
      sockets.push(ws);
      if (ws.readyState === WebSocket.OPEN) for (let k = 0; k < 4; k++) ws.send(`{"id":"l${k}","method":"list_nodes"}`);
      if (rss.overCeiling()) break;
    }
    for (let i = 0; i < MIX_DEAF_PROXIES && !rss.overCeiling(); i++) sockets.push(await deafSocket(agentUrl(serve, flooders.ids[i]!)));
    for (let i = 0; i < MIX_FLOODING_PROXIES && !rss.overCeiling(); i++) sockets.push(await floodingSocket(agentUrl(serve, deafAgents.ids[i]!)));
    while (Date.now() - started < MIX_MS && !rss.overCeiling()) await sleep(100);
    const times = await others.stop();
    rss.stop();
    for (const c of [...flooders.clients, ...deafAgents.clients]) c.close();
    const over = rss.overCeiling();
    return { peak: over ? RSS_CEILING_MB : rss.peak(), p99: percentile(times, 99), over };
  } finally {
    clearInterval(heartbeat);
    for (const ws of sockets) ws.terminate();
    await serve.stop();
    agents.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

/** utime + stime of a process so far, in ms (from /proc; 100 ticks a second). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const STORM_AGENTS = 1_000;
const STORM_WATCHERS = 5;

/**
 * 1,000 agents registered before a registry restart (state file: all offline) reconnect at once
 * and register; five watchers (Pi-DE, monitors) are connected. Settled: every register answered
 * and every watcher has seen every node_joined. ms from the first connect.
 */
async function reconnectStorm(): Promise<{ ms: number; serveCpuMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-storm-'));
  const file = join(dir, 'state.json');
  const nodes = Array.from({ length: STORM_AGENTS }, (_, i) => ({ ...stormAgent(i), status: 'offline', offline_since: 1_763_900_000, last_seen: 1_763_900_000, registered_at: 1_763_900_000 }));
  writeFileSync(file, JSON.stringify({ version: 1, nodes, claims: [] }));
  const serve = await startServe(['--quiet', '--state-file', file, '--max-connections', '1100']);
  const watchers: WebSocket[] = [];
  let child: ChildProcess | undefined;
  try {
    const seen = await Promise.all(
      Array.from({ length: STORM_WATCHERS }, async () => {
        const ws = new WebSocket(serve.url, { perMessageDeflate: false });
        watchers.push(ws);
        let joined = 0;
        let done!: (at: number) => void;
        const all = new Promise<number>((r) => (done = r));
        ws.on('message', (data) => {
          if (String(data).startsWith('{"event":"node_joined"') && ++joined === STORM_AGENTS) done(Date.now());
        });
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        return { all }; // wrapped: an async function returning the promise itself would wait for it
      }),
    );
    const cpuBefore = cpuMs(serve.proc.pid!);
    child = fork(join(HERE, 'storm-agents.js'), [JSON.stringify({ url: serve.url, count: STORM_AGENTS })], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const storm = child;
    const { startedAt, answeredAt } = await new Promise<{ startedAt: number; answeredAt: number }>((resolve, reject) => {
      let startedAt = 0;
      const timer = setTimeout(() => reject(new Error('the storm did not settle within 120 s')), 120_000);
      storm.on('message', (m: { startedAt?: number; answeredAt?: number; error?: string }) => {
        if (m.error !== undefined) reject(new Error(`storm agent: ${m.error}`));
        if (m.startedAt !== undefined) startedAt = m.startedAt;
        if (m.answeredAt !== undefined) {
          clearTimeout(timer);
          resolve({ startedAt, answeredAt: m.answeredAt });
        }
      });
    });
    const watched = await Promise.all(seen.map((w) => w.all));
    return { ms: Math.max(answeredAt, ...watched) - startedAt, serveCpuMs: cpuMs(serve.proc.pid!) - cpuBefore };
  } finally {
    child?.kill('SIGKILL');
    for (const ws of watchers) ws.terminate();
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function serveLoadFigures(): Promise<Figures> {
  const deaf = await deafProxies();
  const storm = await reconnectStorm();
  const mix = await worstMix();
  return {
    proxy_deaf_idle_rss_mb: { value: Math.round(deaf.idle), unit: 'MB' },
    proxy_deaf_100_rss_mb: { value: Math.round(deaf.peak), unit: 'MB' },
    proxy_deaf_mb_per_proxy: { value: Math.round(((deaf.peak - deaf.idle) / DEAF_PROXIES) * 100) / 100, unit: 'MB' },
    proxy_deaf_100_closed_rss_mb: { value: Number.isNaN(deaf.afterClose) ? null : Math.round(deaf.afterClose), unit: 'MB' },
    worst_mix_1k_rss_mb: { value: Math.round(mix.peak), unit: 'MB', target: '<= 512' },
    worst_mix_1k_ping_p99_ms: { value: mix.over || Number.isNaN(mix.p99) ? null : Math.round(mix.p99 * 10) / 10, unit: 'ms', target: '<= 100' },
    reconnect_storm_1k_ms: { value: storm.ms, unit: 'ms', target: '<= 5000' },
    reconnect_storm_1k_serve_cpu_ms: { value: storm.serveCpuMs, unit: 'ms' },
  };
}

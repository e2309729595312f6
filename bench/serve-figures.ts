// `ghostwatch serve` figures: the cost of one register at 100 and at 50,000 nodes (machine:port
// is indexed, so the ratio stays near 1), and a client that floods requests and never reads its
// replies against the real CLI in a process of its own: serve's peak RSS, and how fast the
// other clients are answered meanwhile.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';
import { Registry } from '../src/server/index.js';
import { type Figures, percentile } from './figures.js';
import { openClient, registerNodes, type NodeParams } from './registrations.js';
import { params, pinger, rssMb, startServe } from './serve-process.js';
import { serveLoadFigures } from './serve-load-figures.js';


const MEASURED = 2_000;
const FLOOD_MS = 15_000;
const FLOOD_NODES = 1_000;
const OTHERS = 3;

/** µs per register (p99) with `n` nodes registered: half of the measured ones evict by machine:port. */
function registerP99(n: number): number {
  const registry = new Registry();
  let conn = registry.openConnection();
  const register = (p: Record<string, unknown>): void => {
    if (conn.nodes.size >= 64) conn = registry.openConnection();
    const answer = registry.handle({ id: 'r', method: 'register', params: p }, conn);
    if (answer && 'error' in answer) throw new Error(`register refused: ${answer.error}`);
  };
  for (let i = 0; i < n; i++) register(params(i));
  const times: number[] = [];
  for (let k = 0; k < MEASURED; k++) {
    // Even: a new node on a free port; odd: a new id on a port in use (evicts that node).
    const p = k % 2 === 0 ? params(n + k) : { ...params((k * 7919) % n), id: `restarted-${k}` };
    const t0 = performance.now();
    register(p);
    times.push((performance.now() - t0) * 1000);
  }
  return percentile(times.slice(MEASURED / 10), 99);
}

async function flood(): Promise<{ rss: number; p99: number; idleRss: number }> {
  const serve = await startServe();
  const pid = serve.proc.pid!;
  try {
    // A registry of 1,000 nodes (~170 kB): every list_nodes answer is that large.
    const agents = [];
    for (let c = 0; c < FLOOD_NODES / 50; c++) {
      const client = await openClient(serve.url);
      agents.push(client);
      const nodes: NodeParams[] = [];
      for (let i = c * 50; i < (c + 1) * 50; i++) nodes.push(params(i) as unknown as NodeParams);
      await registerNodes(client, nodes);
    }
    await new Promise((r) => setTimeout(r, 500));
    const idleRss = rssMb(pid, 'VmRSS');

    const deaf = new WebSocket(serve.url);
    await new Promise((resolve, reject) => deaf.once('open', resolve).once('error', reject));
    (deaf as unknown as { _socket: { pause(): void } })._socket.pause();
    deaf.on('error', () => {});
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const others = Array.from({ length: OTHERS }, () => pinger(serve.url, stopped));
    let peak = idleRss;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid, 'VmRSS'))), 100);
    // As fast as the socket takes them; never more than 4 MB queued on our side.
    const sender = setInterval(() => {
      for (let i = 0; i < 2_000 && deaf.readyState === WebSocket.OPEN && deaf.bufferedAmount < 4 * 1024 * 1024; i++) {
        deaf.send('{"id":"f","method":"list_nodes"}');
      }
    }, 1);
    await new Promise((r) => setTimeout(r, FLOOD_MS));
    clearInterval(sender);
    stop();
    const times = (await Promise.all(others)).flat();
    clearInterval(sampler);
    peak = Math.max(peak, rssMb(pid, 'VmHWM'));
    deaf.terminate();
    for (const a of agents) a.close();
    return { rss: peak, p99: percentile(times, 99), idleRss };
  } finally {
    await serve.stop();
  }
}

const DEAF_CLIENTS = 200;
const DEAF_NODES = 50_000;

/** serve's RSS with a 50,000-node registry (~13 MB init) and 200 clients that never read it. */
async function deafClients(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-serve-'));
  const file = join(dir, 'state.json');
  // Remote nodes: loaded as they are (offline), no pid is checked here.
  const nodes = Array.from({ length: DEAF_NODES }, (_, i) => ({ ...params(i), machine: 'remote-box', status: 'offline', offline_since: 1_763_900_000, last_seen: 1_763_900_000, registered_at: 1_763_900_000 }));
  writeFileSync(file, JSON.stringify({ version: 1, nodes, claims: [] }));
  const serve = await startServe(['--quiet', '--state-file', file]);
  const sockets: WebSocket[] = [];
  try {
    for (let i = 0; i < DEAF_CLIENTS; i++) {
      const ws = new WebSocket(serve.url);
      ws.on('error', () => {});
      await new Promise<void>((resolve) => ws.once('upgrade', (res) => (res.socket.pause(), resolve())));
      sockets.push(ws);
    }
    await new Promise((r) => setTimeout(r, 2_000));
    return rssMb(serve.proc.pid!, 'VmHWM');
  } finally {
    for (const ws of sockets) ws.terminate();
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function serveFigures(): Promise<Figures> {
  registerP99(100); // warm-up
  const small = registerP99(100);
  const large = registerP99(50_000);
  const f = await flood();
  const deaf = await deafClients();
  return {
    register_p99_us_100: { value: Math.round(small * 10) / 10, unit: 'µs' },
    register_p99_us_50000: { value: Math.round(large * 10) / 10, unit: 'µs' },
    register_ratio: { value: Math.round((large / small) * 100) / 100, unit: '×', target: '<= 2' },
    flood_serve_idle_rss_mb: { value: Math.round(f.idleRss), unit: 'MB' },
    flood_serve_rss_mb: { value: Math.round(f.rss), unit: 'MB', target: '< 200' },
    flood_other_reply_p99_ms: { value: Math.round(f.p99 * 10) / 10, unit: 'ms', target: '< 100' },
    deaf_200_clients_50k_nodes_rss_mb: { value: Math.round(deaf), unit: 'MB' },
    ...(await serveLoadFigures()),
  };
}

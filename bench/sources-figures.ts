// Registry client figures: a raw ws server on loopback feeds the real HypivisorSource.
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { type Figures, median } from './figures.js';

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

export async function sourcesFigures(): Promise<Figures> {
  return withServer(async (_wss, url, next) => {
    const inits: number[] = [];
    for (let i = 0; i < 7; i++) inits.push(await initOnce(url, next));
    const rates: number[] = [];
    for (let i = 0; i < 3; i++) rates.push(await ingest(url, next));
    return {
      init_10k_ms: { value: Math.round(median(inits.slice(2)) * 10) / 10, unit: 'ms' },
      ingest_events_per_s: { value: Math.round(median(rates)), unit: 'events/s', target: '>= 20000' },
    };
  });
}

// Endurance: registry clients that connect, register, heartbeat and vanish, against a real
// `ghostwatch serve` (its registry in a process of its own, test/support/serve-child.mjs, with
// short timers, so the figures are the registry's and not this test's). Half close their socket (a killed
// agent: the kernel closes it), half leave it half-open: a raw TCP client that did the WebSocket
// handshake, then stops reading and never answers a ping, without closing. Each node must be
// gone within its documented bound (protocols.md §1, README: a closed connection makes the node
// offline and the sweep removes it after the TTL; the server's own pings terminate a half-open
// peer that has not answered by the next ping), and nothing may leak.
// Clients: GHOSTWATCH_SOAK_CLIENTS (`npm run soak`: 3,000).
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MeasuredChild } from '../support/measured-child.js';
import type { ProcessFigures } from '../support/process-figures.mjs';
import { BUILT } from '../support/tmux.js';
import { describeOn } from '../support/platform.js';

const CLIENTS = Number(process.env.GHOSTWATCH_SOAK_CLIENTS ?? 1000);
const BATCH = 50;
const TTL_S = 1;
const SWEEP_MS = 250;
const PING_MS = 250;
/** Timestamps are whole seconds (offline_since, now): up to 1 s more, plus scheduling slack. */
const SLACK_MS = 1_000 + 500;
const CLOSED_BOUND_MS = TTL_S * 1000 + SWEEP_MS + SLACK_MS;
const HALF_OPEN_BOUND_MS = 2 * PING_MS + CLOSED_BOUND_MS;
/** Native memory is compared from here on (see the end of the test). */
const WARM_CLIENTS = 250;

const sleepMs = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface ServeAnswer {
  nodes: number;
  memory: ProcessFigures;
}

/** A WebSocket frame from a client: FIN, the opcode, masked as RFC 6455 requires. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  const len = payload.length;
  const header = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff]);
  return Buffer.concat([header, mask, masked]);
}

/** The handshake by hand, then a register and a few heartbeats (ping frames); no ws library. */
async function rawAgent(port: number, id: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port });
  socket.on('error', () => {}); // the server terminating a half-open peer resets it
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let seen = '';
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      // The 101, then the init frame and our register's reply: both carry JSON.
      if (seen.includes('101 Switching Protocols') && seen.includes('"registered"')) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    const params = { id, machine: 'soak-host', cwd: '/work', port: 30_000 + Number(id.slice(1)), status: 'active', pid: 4_000_000 };
    socket.write(clientFrame(0x1, Buffer.from(JSON.stringify({ id: 'r', method: 'register', params }))));
  });
  for (let i = 0; i < 2; i++) socket.write(clientFrame(0x9, Buffer.alloc(0))); // heartbeats
  return socket;
}

describeOn(['linux'], 'the figures (memory, descriptors) come from /proc', BUILT)('endurance: registry clients that vanish', () => {
  let server: MeasuredChild | undefined;
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await server?.stop();
  });

  it(`${CLIENTS} clients register and vanish (half closed, half half-open): each is gone within its bound, no fd or memory leak`, { timeout: 30_000 + CLIENTS * 60 }, async () => {
    server = new MeasuredChild('./serve-child.mjs', [JSON.stringify({ ttlSeconds: TTL_S, sweepIntervalMs: SWEEP_MS, pingIntervalMs: PING_MS, maxConnections: 2 * BATCH + 10 })]);
    const { port, url } = await server.ready<{ port: number; url: string }>();
    const removedAt = new Map<string, number>();
    const watcher = new WebSocket(url);
    watcher.on('message', (data) => {
      const m = JSON.parse(String(data)) as { event?: string; id?: string };
      if (m.event === 'node_removed' && m.id !== undefined) removedAt.set(m.id, performance.now());
    });
    await new Promise((resolve) => watcher.once('open', resolve));

    const vanishedAt = new Map<string, { at: number; halfOpen: boolean }>();
    let baseline: ServeAnswer['memory'] | undefined;
    /** After the first 250 clients: the allocator and V8 have sized themselves for this load. */
    let warm: ServeAnswer['memory'] | undefined;
    for (let start = 0; start < CLIENTS; start += BATCH) {
      const ids = Array.from({ length: Math.min(BATCH, CLIENTS - start) }, (_, i) => `c${start + i}`);
      const batch = await Promise.all(ids.map((id) => rawAgent(port, id)));
      for (const [i, socket] of batch.entries()) {
        const halfOpen = (start + i) % 2 === 1;
        if (halfOpen) {
          socket.pause(); // reads nothing more, so never sees a ping, never pongs; stays open
          sockets.push(socket);
        } else socket.destroy();
        vanishedAt.set(ids[i]!, { at: performance.now(), halfOpen });
      }
      // Let this batch's connections go before the next one (the connection limit is 2 batches).
      const deadline = performance.now() + HALF_OPEN_BOUND_MS + 1_000;
      while (!ids.every((id) => removedAt.has(id)) && performance.now() < deadline) await sleepMs(50);
      for (const s of sockets.splice(0)) s.destroy();
      if (start === 0) {
        await sleepMs(200);
        baseline = (await server.ask<ServeAnswer>('measure')).memory;
      }
      if (start + BATCH === WARM_CLIENTS) warm = (await server.ask<ServeAnswer>('measure')).memory;
      if (process.env.GHOSTWATCH_SOAK_TRACE && (start / BATCH) % 4 === 0) {
        const m = (await server.ask<ServeAnswer>('measure')).memory;
        process.stderr.write(`clients: after ${start + BATCH}: rss ${(m.rss / 2 ** 20).toFixed(1)} MB, heap ${(m.heap / 2 ** 20).toFixed(1)} MB, V8 committed ${(m.heapTotal / 2 ** 20).toFixed(1)} MB, external ${(m.external / 2 ** 20).toFixed(2)} MB\n`);
      }
    }

    const late: string[] = [];
    for (const [id, v] of vanishedAt) {
      const gone = removedAt.get(id);
      const bound = v.halfOpen ? HALF_OPEN_BOUND_MS : CLOSED_BOUND_MS;
      if (gone === undefined || gone - v.at > bound) late.push(`${id} (${v.halfOpen ? 'half-open' : 'closed'}): ${gone === undefined ? 'never' : `${Math.round(gone - v.at)} ms`} > ${bound} ms`);
    }
    expect(late).toEqual([]);
    await sleepMs(200);
    // Same point of the cycle as the baseline: every client of the batch gone, the watcher open.
    const end = await server.ask<ServeAnswer>('measure');
    watcher.terminate();
    expect(end.nodes).toBe(0);
    if (process.env.GHOSTWATCH_SOAK_TRACE) {
      const mb = (n: number) => (n / 2 ** 20).toFixed(1);
      process.stderr.write(`clients: fds ${baseline!.fds} -> ${end.memory.fds}, rss ${mb(baseline!.rss)} -> ${mb(end.memory.rss)} MB, heap ${mb(baseline!.heap)} -> ${mb(end.memory.heap)} MB\n`);
    }
    expect(end.memory.fds).toBeLessThanOrEqual(baseline!.fds + 5);
    // The registry process's JS heap without compiled code, after a full GC, is where a leak of
    // peers, nodes or timers would show: under 10% above the first batch's.
    expect(end.memory.heap).toBeLessThan(baseline!.heap * 1.1);
    // Memory outside the JS heap that JS objects hold (Buffers, socket data): a leak of buffers
    // would show here. Compared after the first 250 clients, when buffer pools are sized. It moves
    // in steps that do not follow the clients (measured: 2.27 MB after 250, then 2.29, 2.41 or
    // 2.52 MB after 850, flat between), so the allowance is 10 % and 512 KB: a leak of ~700 bytes
    // a client (a socket's buffer, a frame) is over it after the 750 clients that follow.
    if (warm) expect(end.memory.external).toBeLessThan(warm.external * 1.1 + 512 * 1024);
    // RSS is reported (GHOSTWATCH_SOAK_TRACE), not bounded: it rises in steps as V8 grows its heap
    // under this allocation rate (Node 20: 60 -> 78 MB at ~850 clients and -> 87 MB at ~2,300,
    // V8's committed heap 11 -> 24 -> 40 MB, while the live data stays at 5 MB; Node 24: 70 -> 82
    // MB within ~250 clients) and is flat between the steps. The leaks it could stand for are
    // bounded above by their own measures: fds, the data heap and external memory.
  });
});

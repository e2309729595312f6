// `init` is built once per registry version and shared by every client that connects meanwhile:
// a heartbeat (every live agent pings every 30 s) is not a new version, so it does not make the
// next client's init a private copy. last_seen in it is at most one heartbeat period old.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { INIT_HEARTBEAT_MS } from '../../src/server/index.js';
import { MeasuredChild } from '../support/measured-child.js';
import type { ProcessFigures } from '../support/process-figures.mjs';
import { cleanup, connect, FakeClock, node, registerText, roundTrip, serve, stored, T0 } from './helpers.js';

afterEach(cleanup);

/** A WebSocket ping frame from `ws`, answered (so serve has handled it). */
function heartbeat(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    ws.once('pong', () => resolve());
    ws.ping();
  });
}

describe('init', () => {
  it('is the same frame for every client of one registry version, whatever the pings between them', async () => {
    const clock = new FakeClock();
    const server = await serve({ now: clock.now });
    const agent = await connect(server.url);
    await agent.next('event');
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', result: { status: 'registered' } });
    await agent.next('event'); // its node_joined
    const first = await (await connect(server.url)).next('event');
    expect(JSON.parse(first)).toMatchObject({ nodes: [stored(node('n1'))] });

    clock.advance(10_000);
    await heartbeat(agent.ws); // last_seen is now T0 + 10: not a new version
    const second = await (await connect(server.url)).next('event');
    expect(second).toBe(first);
    expect(server.initEncodes()).toBe(2); // the empty registry for the agent, then this version once

    // Past one heartbeat period, a pinged registry is encoded again: last_seen is never staler than that.
    clock.advance(INIT_HEARTBEAT_MS);
    await heartbeat(agent.ws);
    const third = JSON.parse(await (await connect(server.url)).next('event')) as { nodes: { last_seen: number }[] };
    expect(third.nodes[0]!.last_seen).toBe(T0 + 10 + INIT_HEARTBEAT_MS / 1000);
    expect(server.initEncodes()).toBe(3);

    // A change is a new version at once.
    await roundTrip(agent, registerText('s', node('n2', { port: 9001 })), { id: 's', result: { status: 'registered' } });
    const fourth = JSON.parse(await (await connect(server.url)).next('event')) as { nodes: { id: string }[] };
    expect(fourth.nodes.map((n) => n.id)).toEqual(['n1', 'n2']);
  });
});

describe('init in a serve process of its own', () => {
  let dir: string | undefined;
  let child: MeasuredChild | undefined;
  const sockets: WebSocket[] = [];

  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    await child?.stop();
    child = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is held once for 20 clients that never read it, with a heartbeat before each', async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-init-'));
    const file = join(dir, 'state.json');
    // ~9 MB of init: more than the kernel's socket buffers take off serve's hands.
    const nodes = Array.from({ length: 30_000 }, (_, i) => ({ id: `0190f3a2-7c1e-7d4b-9a55-${String(i).padStart(12, '0')}`, machine: 'remote-box', cwd: `/home/dev/work/project-${i % 97}/${'x'.repeat(100)}`, port: 1024 + i, status: 'offline', offline_since: 1_763_900_000, last_seen: 1_763_900_000, registered_at: 1_763_900_000 }));
    writeFileSync(file, JSON.stringify({ version: 1, nodes, claims: [] }));
    const initBytes = Buffer.byteLength(JSON.stringify({ event: 'init', nodes, protocol_version: '1', claims: [] }));
    // serve's clock stands still: on a loaded machine the 20 clients can take longer than the 30 s
    // after which a pinged registry's init is encoded again (one more copy, rightly).
    child = new MeasuredChild('./serve-child.mjs', [JSON.stringify({ stateFile: file, pingIntervalMs: 600_000, frozenAt: 1_763_900_100_000 })]);
    const { url } = await child.ready<{ url: string }>();

    const agent = new WebSocket(url);
    sockets.push(agent);
    await new Promise((resolve, reject) => agent.once('open', resolve).once('error', reject));
    agent.send(registerText('r', node('pinger')));
    await new Promise((resolve) => agent.on('message', (d) => String(d).startsWith('{"id":"r"') && resolve(undefined)));
    type Figures = { memory: ProcessFigures; initEncodes: number; behind: number };
    /** serve's figures once `clients` deaf clients hold their init: it is handed out in a flush up
     * to 50 ms after they connect (fanout.ts), and a figure taken before would miss it. */
    const holding = async (clients: number): Promise<Figures> => {
      const end = Date.now() + 15_000;
      for (;;) {
        await heartbeat(agent); // serve has handled everything sent before
        const figures = await child!.ask<Figures>('measure');
        if (figures.behind >= clients) return figures;
        if (Date.now() > end) throw new Error(`${figures.behind} of ${clients} clients hold unsent bytes after 15 s (inits encoded: ${figures.initEncodes})`);
      }
    };
    const deafClient = async (): Promise<void> => {
      await heartbeat(agent); // last_seen moves before each client
      const deaf = new WebSocket(url);
      sockets.push(deaf);
      deaf.on('error', () => {});
      await new Promise<void>((resolve) => deaf.once('upgrade', (res) => (res.socket.pause(), resolve())));
    };
    await deafClient();
    const withOne = await holding(1);
    for (let i = 1; i < 20; i++) await deafClient();
    const withTwenty = await holding(20);
    // The frame the first one holds, shared: not one more per client (19 × ~9 MB) …
    expect(withTwenty.memory.external - withOne.memory.external).toBeLessThan(initBytes);
    // … and encoded once: the agent's init of the restored registry, then this version.
    expect(withTwenty.initEncodes).toBe(2);
  });
});

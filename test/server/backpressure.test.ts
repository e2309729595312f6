// A `/ws` client that sends requests and never reads its replies: serve stops reading it once
// too much is unsent to it, closes it (with a log line) when it stays so, and answers the others.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { READ_PAUSE_BYTES, type RegistryServer } from '../../src/server/index.js';
import { cleanup, connectPastInit, roundTrip, serve, sleepMs } from './helpers.js';
import { until } from '../support/wait.js';

afterEach(cleanup);

/** A ws client whose socket is never read: the replies pile up on serve's side. */
async function deafClient(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  (ws as unknown as { _socket: { pause(): void } })._socket.pause();
  ws.on('error', () => {});
  return ws;
}

/** ~125 kB of nodes, so that one list_nodes reply is that large. */
function fill(s: RegistryServer): void {
  s.registry.restore(
    Array.from({ length: 30 }, (_, i) => ({ id: `n${i}`, machine: 'box', cwd: `/${'d'.repeat(4000)}`, port: i, status: 'active' })),
    [],
  );
}

describe('a client that never reads', () => {
  it('is not read once its replies pile up: one reply past the bound, the rest of its requests wait', async () => {
    const s = await serve();
    fill(s);
    const deaf = await deafClient(s.url);
    // 2,000 list_nodes in one burst would be 250 MB of replies if all were answered.
    for (let i = 0; i < 2000; i++) deaf.send('{"id":"l","method":"list_nodes"}');
    await until(() => s.peerStats().some((p) => p.held), 5_000, 'the deaf client is held');
    await sleepMs(300);
    const [stats] = s.peerStats();
    const reply = Buffer.byteLength(JSON.stringify({ id: 'l', result: s.registry.listNodes() }));
    expect(stats!.held).toBe(true);
    expect(stats!.buffered).toBeLessThanOrEqual(READ_PAUSE_BYTES + reply + 200_000); // + init
    const other = await connectPastInit(s.url);
    await roundTrip(other, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 30, version: '0.1.0' } });
    deaf.terminate();
  });

  it('is closed with a log line when it stays unread for a whole ping interval; others keep their replies', async () => {
    const lines: string[] = [];
    const s = await serve({ quiet: false, log: (l) => lines.push(l), pingIntervalMs: 150 });
    fill(s);
    const deaf = await deafClient(s.url);
    const other = await connectPastInit(s.url);
    const flooding = setInterval(() => {
      for (let i = 0; i < 50 && deaf.readyState === WebSocket.OPEN; i++) deaf.send('{"id":"l","method":"list_nodes"}');
    }, 5);
    try {
      for (let i = 0; i < 5; i++) {
        await roundTrip(other, `{"id":"p${i}","method":"ping"}`, { id: `p${i}`, result: { status: 'healthy', nodes: 30, version: '0.1.0' } });
        await sleepMs(40);
      }
      await until(() => lines.some((l) => l.includes('stopped reading')), 5_000, 'the log line');
    } finally {
      clearInterval(flooding);
    }
    expect(lines.filter((l) => l.includes('stopped reading'))).toEqual([
      expect.stringMatching(/^serve: connection 1 stopped reading \(\d+ bytes unsent for over 150 ms\): terminated$/),
    ]);
    await until(() => s.peerStats().length === 1, 5_000, 'only the reading client is left');
    await roundTrip(other, '{"id":"q","method":"ping"}', { id: 'q', result: { status: 'healthy', nodes: 30, version: '0.1.0' } });
    deaf.terminate();
  });

  it('is read again once it reads, and gets every reply in order', async () => {
    const s = await serve({ pingIntervalMs: 60_000 });
    fill(s);
    const ws = await deafClient(s.url);
    const ids: string[] = [];
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8')) as { id?: string };
      if (m.id !== undefined) ids.push(m.id);
    });
    for (let i = 0; i < 200; i++) ws.send(`{"id":"${i}","method":"list_nodes"}`);
    await until(() => s.peerStats()[0]?.held === true, 5_000, 'held');
    (ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(() => ids.length === 200, 10_000, 'all 200 replies');
    expect(ids).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
    expect(s.peerStats()[0]).toMatchObject({ held: false, queued: 0 });
    ws.terminate();
  });
});

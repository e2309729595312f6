// The "is this agent answering" request against real servers on this host's loopback: a real `ws`
// server answers it (a refusal: no connection is opened, so the agent pays nothing), a server that
// accepts TCP and never answers lets the bound pass, one that hangs up is "closed", a closed port
// is an error, an IPv6-only server is found on ::1.
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { networkInterfaces } from 'node:os';
import { askUpgrade, loopbackListeners, probeUpgrade } from '../../src/os/ws-handshake.js';
import { itOn } from '../support/platform.js';
import { freePort } from '../support/ports.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

async function wsServer(host = '127.0.0.1'): Promise<{ port: number; connections: () => number }> {
  const wss = new WebSocketServer({ host, port: 0 });
  await new Promise((r) => wss.once('listening', r));
  let connections = 0;
  wss.on('connection', () => connections++);
  closers.push(() => new Promise((r) => wss.close(r)));
  return { port: (wss.address() as { port: number }).port, connections: () => connections };
}

/** A TCP server that does `onSocket` with every connection; its port. */
async function tcpServer(onSocket: (s: Socket) => void): Promise<number> {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => {
    sockets.push(s);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return (server.address() as { port: number }).port;
}

describe('the upgrade request of the answering probe', () => {
  it('a real ws server answers it with a refusal and opens no connection', async () => {
    const ws = await wsServer();
    const answer = await probeUpgrade(ws.port, 2_000);
    expect(answer).toMatchObject({ result: 'answered', detail: expect.stringMatching(/^HTTP\/1\.1 (400|426) /) });
    expect(answer.ms).toBeGreaterThanOrEqual(0);
    expect(ws.connections()).toBe(0);
  });

  it('a server that accepts TCP and never answers lets the bound pass: timeout', async () => {
    const port = await tcpServer(() => {});
    const answer = await probeUpgrade(port, 300);
    expect(answer).toMatchObject({ result: 'timeout', detail: 'no answer within 300 ms' });
    expect(answer.ms).toBeGreaterThanOrEqual(300);
  });

  it('a server that hangs up without a word is closed', async () => {
    const port = await tcpServer((s) => s.end());
    expect(await probeUpgrade(port, 2_000)).toMatchObject({ result: 'closed', detail: 'closed without an answer' });
  });

  it('an answer that is not HTTP is still an answer', async () => {
    const port = await tcpServer((s) => s.end('SSH-2.0-OpenSSH\r\n'));
    expect(await probeUpgrade(port, 2_000)).toMatchObject({ result: 'answered', detail: 'an answer that is not HTTP' });
  });

  it('a port nothing listens on is an error, never a miss', async () => {
    const port = await freePort();
    expect(await probeUpgrade(port, 2_000)).toMatchObject({ result: 'error', detail: expect.stringMatching(/^127\.0\.0\.1 (and ::1 refused|refused; no IPv6 loopback)/) });
  });

  it('a server on IPv6 loopback only is asked there', async (ctx) => {
    let ws: Awaited<ReturnType<typeof wsServer>>;
    try {
      ws = await wsServer('::1');
    } catch {
      return ctx.skip('not on this platform: no IPv6 loopback here');
    }
    expect(await probeUpgrade(ws.port, 2_000)).toMatchObject({ result: 'answered' });
    expect(ws.connections()).toBe(0);
  });

  it('an abort ends the wait at once, as an error', async () => {
    const ac = new AbortController();
    // Aborted once the server has the connection: mid-wait.
    const port = await tcpServer(() => ac.abort());
    expect(await askUpgrade('127.0.0.1', port, 60_000, ac.signal)).toMatchObject({ result: 'error', detail: 'aborted' });
    expect(await askUpgrade('127.0.0.1', port, 60_000, AbortSignal.abort())).toMatchObject({ result: 'error', detail: 'aborted' });
  });
});

describe('which ports are asked at all', () => {
  itOn(['linux'], 'the socket table is /proc/net/tcp')('only ports something listens on where loopback reaches: any address or a loopback one', async () => {
    const onLoopback = await wsServer();
    const onAny = await wsServer('0.0.0.0');
    const nothing = await freePort();
    // A listener on this host's own non-loopback address only: loopback does not reach it.
    const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    const elsewhere = outside === undefined ? undefined : await wsServer(outside);
    const ports = [onLoopback.port, onAny.port, nothing, ...(elsewhere ? [elsewhere.port] : [])];
    expect([...(await loopbackListeners(ports))!].sort()).toEqual([onLoopback.port, onAny.port].sort());
  });
});

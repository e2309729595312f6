import { describe, expect, it } from 'vitest';
import net from 'node:net';
import { probePort, probePorts } from '../../src/os/port-probe.js';

function listen(host: string, ipv6Only = false): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.on('error', () => {}));
    server.once('error', reject);
    server.listen({ host, port: 0, ipv6Only }, () => resolve(server));
  });
}
const portOf = (s: net.Server): number => (s.address() as net.AddressInfo).port;
const close = (s: net.Server): Promise<void> => new Promise((r) => s.close(() => r()));

/** Sockets and timers this process holds (Node's own view of active handles). */
const netResources = (): number =>
  process.getActiveResourcesInfo().filter((n) => n === 'TCPSocketWrap' || n === 'Timeout').length;

describe('probePort', () => {
  it('a listening server is open; after close it is refused (on both families)', async () => {
    const server = await listen('127.0.0.1');
    const port = portOf(server);
    const open = await probePort(port, { now: () => 7 });
    expect(open).toEqual({ port, result: 'open', detail: '127.0.0.1', checkedAt: 7 });
    await close(server);
    const refused = await probePort(port);
    expect(refused.result).toBe('refused');
  });

  it('a server on ::1 only is open, not a false "refused"', async (ctx) => {
    let server: net.Server;
    try {
      server = await listen('::1', true);
    } catch (err) {
      return ctx.skip(`no IPv6 loopback here (${(err as NodeJS.ErrnoException).code})`);
    }
    try {
      const facts = await probePort(portOf(server));
      expect(facts.result).toBe('open');
      expect(facts.detail).toBe('::1');
    } finally {
      await close(server);
    }
  });

  it('refuses unusable ports without touching the network', async () => {
    for (const p of [0, -1, 65_536, 80.5, Number.NaN]) {
      expect(await probePort(p, { now: () => 1 })).toEqual({ port: p, result: 'error', detail: 'not a usable port', checkedAt: 1 });
    }
  });

  it('cancels via AbortSignal and releases the socket', async () => {
    const server = await listen('127.0.0.1');
    try {
      await expect(probePort(portOf(server), { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      const ac = new AbortController();
      const pending = probePort(portOf(server), { signal: ac.signal });
      ac.abort(); // the connect cannot have completed yet: it needs an event-loop turn
      await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await close(server);
    }
  });

  it('leaks no socket or timer, and probePorts keeps order with bounded concurrency', async () => {
    const baseline = netResources();
    const servers = await Promise.all([listen('127.0.0.1'), listen('127.0.0.1')]);
    const openPorts = servers.map(portOf);
    const closedServer = await listen('127.0.0.1');
    const closedPort = portOf(closedServer);
    await close(closedServer);
    const ports = [closedPort, ...openPorts, 0, openPorts[0] as number];
    const result = await probePorts(ports, { concurrency: 2 });
    expect([...result.keys()]).toEqual([closedPort, ...openPorts, 0]);
    expect([...result.values()].map((f) => f.result)).toEqual(['refused', 'open', 'open', 'error']);
    await Promise.all(servers.map(close));
    // destroy() closes handles asynchronously: give the loop a few turns before counting.
    for (let i = 0; i < 20 && netResources() > baseline; i++) await new Promise((r) => setTimeout(r, 10));
    expect(netResources()).toBeLessThanOrEqual(baseline);
  });
});

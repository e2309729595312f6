// --probe-remote-ports in the live engine: agents registered under a machine name that is not this
// host (127.0.0.2: loopback, so the connect stays on this machine), their ports real servers,
// closed ports or full-backlog listeners; a real registry, a real audit log.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RemotePortChecker } from '../../src/os/remote-port-check.js';
import { countingServer, refusedPort, stuckPorts } from '../os/remote-ports-support.js';
import { agent, engineFor, finding, onCleanup, serve, source, tempDir, until } from './helpers.js';

const REMOTE = '127.0.0.2';

async function server(host = REMOTE) {
  const s = await countingServer(host);
  onCleanup(() => s.close());
  return s;
}

const quickChecker = () => new RemotePortChecker({ timeoutMs: 300 });

describe('remote port checks in the engine', () => {
  it('accepted stays remote with the fact, refused is a ghost, a timeout unverified', async () => {
    const reg = await serve();
    const listening = await server();
    const closed = await refusedPort();
    const stuck = await stuckPorts(1, '127.0.0.3');
    onCleanup(() => stuck.close());
    await agent(reg.url, 'up', { machine: REMOTE, port: listening.port });
    await agent(reg.url, 'down', { machine: REMOTE, port: closed });
    await agent(reg.url, 'stuck', { machine: '127.0.0.3', port: stuck.ports[0] });
    const engine = engineFor([source(reg.url)], { probeRemotePorts: true, remotePortCheck: quickChecker() });
    const snap = await engine.settled(10_000);
    expect(snap.settled).toBe(true);
    expect(finding(snap, 'up')).toMatchObject({ verdict: 'remote', problem: false, evidence: { port: { result: 'open' }, transport: 'port check from this host' } });
    expect(finding(snap, 'up')!.reason).toMatch(new RegExp(`port ${listening.port} accepts from this host`));
    expect(finding(snap, 'down')).toMatchObject({ verdict: 'ghost', problem: true, evictable: true, reason: `port ${closed} refused from this host: nothing listens on ${REMOTE}:${closed}` });
    expect(finding(snap, 'stuck')).toMatchObject({ verdict: 'unverified', problem: false });
    expect(finding(snap, 'stuck')!.reason).toMatch(/timeout: no answer within 300 ms/);
    expect(listening.accepts).toBe(1);
  });

  it('is off unless asked: no connection at all', async () => {
    const reg = await serve();
    const listening = await server();
    await agent(reg.url, 'up', { machine: REMOTE, port: listening.port });
    const engine = engineFor([source(reg.url)], { remotePortCheck: quickChecker() });
    const snap = await engine.settled(10_000);
    expect(finding(snap, 'up')).toMatchObject({ verdict: 'remote', reason: `runs on ${REMOTE}, not on this host: cannot be checked here` });
    await engine.refresh();
    expect(listening.accepts).toBe(0);
  });

  it('never checks a machine verified over SSH', async () => {
    const reg = await serve();
    const verified = await server();
    const other = await server('127.0.0.4');
    await agent(reg.url, 'ssh', { machine: REMOTE, port: verified.port });
    await agent(reg.url, 'plain', { machine: '127.0.0.4', port: other.port });
    const engine = engineFor([source(reg.url)], { probeRemotePorts: true, sshVerified: (m) => m === REMOTE, remotePortCheck: quickChecker() });
    const snap = await engine.settled(10_000);
    expect(finding(snap, 'plain')!.reason).toMatch(/accepts from this host/);
    expect(finding(snap, 'ssh')!.reason).toMatch(/cannot be checked here/);
    await engine.refresh();
    expect(verified.accepts).toBe(0);
    expect(other.accepts).toBeGreaterThan(0);
  });

  it('a ghost by refused port is evicted after a fresh connect, and the audit line names the transport', async () => {
    const reg = await serve();
    const closed = await refusedPort();
    await agent(reg.url, 'down', { machine: REMOTE, port: closed });
    const audit = join(tempDir(), 'audit.jsonl');
    const connects: number[] = [];
    const checker = new RemotePortChecker({
      timeoutMs: 300,
      connect: async (host, port, timeoutMs, signal) => {
        connects.push(port);
        const { tcpConnect } = await import('../../src/os/remote-port-check.js');
        return tcpConnect(host, port, timeoutMs, signal);
      },
    });
    const engine = engineFor([source(reg.url)], { probeRemotePorts: true, remotePortCheck: checker, auditLogPath: audit });
    const snap = await engine.settled(10_000);
    const ghost = finding(snap, 'down')!;
    expect(ghost.verdict).toBe('ghost');
    const before = connects.length;
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results.map((r) => r.outcome)).toEqual(['evicted']);
    expect(connects.length).toBe(before + 1); // connected again right before sending, not from the cache
    const intent = readFileSync(audit, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.kind === 'intent')!;
    expect(intent).toMatchObject({ verdict: 'ghost', evidence: { transport: 'port check from this host', port: { port: closed, result: 'refused' }, host: { machine: REMOTE, local: false } } });
  });

  it('a ghost whose port accepts again by the eviction is not evicted', async () => {
    const reg = await serve();
    const listening = await server();
    await agent(reg.url, 'back', { machine: REMOTE, port: listening.port });
    // Seen refused first: the server is closed, the engine checks, then it listens again on that port.
    const port = listening.port;
    await listening.close();
    const engine = engineFor([source(reg.url)], { probeRemotePorts: true, remotePortCheck: quickChecker() });
    const ghost = await until(() => (finding(engine.getSnapshot(), 'back')?.verdict === 'ghost' ? finding(engine.getSnapshot(), 'back') : undefined), 10_000, 'ghost');
    const rebound = await rebind(port);
    onCleanup(() => rebound.close());
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]).toMatchObject({ outcome: 'skipped' });
    expect(summary.results[0]!.detail).toMatch(/it is now remote \(was ghost\).*accepts from this host/);
    expect(rebound.accepts).toBe(1);
  });
});

/** A counting server on exactly this port of 127.0.0.2. */
async function rebind(port: number) {
  const net = await import('node:net');
  const counter = { accepts: 0, close: () => new Promise<void>((r) => srv.close(() => r())) };
  const sockets = new Set<import('node:net').Socket>();
  const srv = net.createServer((s) => {
    counter.accepts++;
    sockets.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(port, REMOTE, () => resolve()));
  const close = counter.close;
  counter.close = () => {
    for (const s of sockets) s.destroy();
    return close();
  };
  return counter;
}

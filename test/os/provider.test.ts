// The local probe provider is this machine, read exactly as the probes read it on their own:
// real children, a real listening socket on 127.0.0.1, the real process table.
import { freePort } from '../support/ports.js';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { localProbeProvider } from '../../src/os/provider.js';
import { isLinux, killAndReap, spawnSleep } from '../support/processes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function listening(): Promise<number> {
  const server: Server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  cleanups.push(() => new Promise((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

describe('localProbeProvider', () => {
  it('speaks for this host unless told another name', () => {
    expect(localProbeProvider().host).toBe(hostname());
    expect(localProbeProvider('box.example').host).toBe('box.example');
  });

  it('probes pids with kill(0), and fully (state, start time) when asked', async () => {
    const probes = localProbeProvider();
    const live = spawnSleep();
    cleanups.push(() => killAndReap(live));
    const dead = spawnSleep();
    await killAndReap(dead);
    const quick = await probes.probePids([live.pid, dead.pid, 0, -1], { now: () => 42 });
    expect([...quick.keys()].sort()).toEqual([live.pid, dead.pid].sort()); // unusable pids are never signalled
    expect(quick.get(live.pid)).toMatchObject({ kill: 'ok', checkedAt: 42 });
    expect(quick.get(live.pid)?.state).toBeUndefined();
    expect(quick.get(dead.pid)).toMatchObject({ kill: 'ESRCH' });
    expect(probes.stillRunning(live.pid)).toBe(true);
    expect(probes.stillRunning(dead.pid)).toBe(false);
    const full = await probes.probePids([live.pid], { full: true });
    if (isLinux) expect(full.get(live.pid)).toMatchObject({ kill: 'ok', state: expect.stringMatching(/^[SR]$/), startedAt: expect.any(Number) });
  });

  it('probes ports by connect and names the process that serves them', async () => {
    const probes = localProbeProvider();
    const open = await listening();
    const closed = await freePort();
    const facts = await probes.probePortFacts([open, closed], {});
    expect(facts.get(open)).toMatchObject({ result: 'open' });
    expect(facts.get(closed)).toMatchObject({ result: 'refused' });
    if (isLinux) expect(facts.get(open)?.owners).toEqual([process.pid]);
    // The same provider asked again (its owner hints kept) says the same.
    const again = await probes.probePortFacts([open], {});
    if (isLinux) expect(again.get(open)?.owners).toEqual([process.pid]);
  });

  it('reads the process table rows of the pids asked for', async () => {
    const probes = localProbeProvider();
    const child = spawnSleep();
    cleanups.push(() => killAndReap(child));
    const scan = await probes.scanProcessTable({ pids: [child.pid] });
    expect(scan.ok).toBe(true);
    if (scan.ok) expect(scan.processes.get(child.pid)).toMatchObject({ pid: child.pid, ppid: process.pid, name: 'sleep' });
  });

  it('gives up at once on an aborted signal', async () => {
    const probes = localProbeProvider();
    const signal = AbortSignal.abort();
    await expect(probes.probePids([process.pid], { signal })).rejects.toThrow();
    await expect(probes.scanProcessTable({ signal })).rejects.toThrow();
  });
});

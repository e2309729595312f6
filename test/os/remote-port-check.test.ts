import { afterEach, describe, expect, it } from 'vitest';
import { remotePortKey } from '../../src/core/remote-ports.js';
import { RemotePortChecker, tcpConnect, type ConnectFn, type RateClock } from '../../src/os/remote-port-check.js';
import { countingServer, refusedPort, stuckPorts } from './remote-ports-support.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(host = '127.0.0.2') {
  const s = await countingServer(host);
  cleanups.push(() => s.close());
  return s;
}

/**
 * A limiter clock that never waits for real: a driver wakes the sleeper due first, with the
 * clock set to exactly when it was due (one at a time, each continuation running before the next).
 */
function fakeRateClock(): RateClock & { t: number } {
  const sleepers: { due: number; wake: () => void }[] = [];
  const driver = setInterval(() => {
    if (sleepers.length === 0) return;
    sleepers.sort((a, b) => a.due - b.due);
    const next = sleepers.shift()!;
    c.t = Math.max(c.t, next.due);
    next.wake();
  }, 1);
  cleanups.push(() => clearInterval(driver));
  const c = {
    t: 0,
    monotonic: () => c.t,
    sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ due: c.t + ms, wake })),
  };
  return c;
}

describe('remote port check (real TCP on loopback addresses that are not this host)', () => {
  it('a listening port accepts, a closed one refuses, a full accept queue times out', async () => {
    const s = await server();
    const closed = await refusedPort();
    const stuck = await stuckPorts(1);
    cleanups.push(() => stuck.close());
    const checker = new RemotePortChecker({ timeoutMs: 300 });
    const targets = [
      { machine: '127.0.0.2', port: s.port },
      { machine: '127.0.0.2', port: closed },
      { machine: '127.0.0.3', port: stuck.ports[0]! },
    ];
    const got = await checker.check(targets, { now: () => 42 });
    expect([...got.keys()]).toEqual(targets.map((t) => remotePortKey(t.machine, t.port)));
    expect([...got.values()].map((f) => [f.result, f.detail])).toEqual([
      ['open', undefined],
      ['refused', 'ECONNREFUSED'],
      ['timeout', 'no answer within 300 ms'],
    ]);
    expect(got.get(remotePortKey('127.0.0.2', s.port))).toMatchObject({ machine: '127.0.0.2', port: s.port, checkedAt: 42 });
    expect(s.accepts).toBe(1);
  });

  it('an unresolvable name is an error that says so; an invalid machine is never connected to', async () => {
    const connects: string[] = [];
    const counting: ConnectFn = (host, port, timeoutMs, signal) => {
      connects.push(host);
      return tcpConnect(host, port, timeoutMs, signal);
    };
    const checker = new RemotePortChecker({ timeoutMs: 2000, connect: counting });
    const got = await checker.check([
      { machine: 'no-such-host.invalid', port: 8080 },
      { machine: '0.0.0.0', port: 8080 },
      { machine: 'http://x/', port: 8080 },
      { machine: '127.0.0.2', port: 0 },
    ]);
    const [unresolved, wildcard, url, noPort] = [...got.values()];
    expect(unresolved).toMatchObject({ result: 'error' });
    expect(unresolved!.detail).toMatch(/^cannot resolve no-such-host\.invalid \((ENOTFOUND|EAI_AGAIN|EAI_FAIL|EAI_NONAME)\)$/);
    expect(wildcard).toMatchObject({ result: 'error', detail: 'not checked: a wildcard address, not a host' });
    expect(url).toMatchObject({ result: 'error', detail: 'not checked: not a host name' });
    expect(noPort).toMatchObject({ result: 'error', detail: 'not checked: not a usable port' });
    expect(connects).toEqual(['no-such-host.invalid']);
  });

  it('one connect per machine:port: duplicates in a call and repeats within the cache time reuse it; fresh connects again', async () => {
    const s = await server();
    const clock = fakeRateClock();
    const checker = new RemotePortChecker({ cacheMs: 10_000, clock });
    const t = { machine: '127.0.0.2', port: s.port };
    await checker.check([t, t, { ...t }]);
    expect(s.accepts).toBe(1);
    clock.t += 5_000;
    await checker.check([t]);
    expect(s.accepts).toBe(1);
    await checker.check([t], { fresh: true });
    expect(s.accepts).toBe(2);
    clock.t += 10_001;
    await checker.check([t]);
    expect(s.accepts).toBe(3);
    // A round may ask for younger results than the cache keeps.
    clock.t += 100;
    await checker.check([t], { maxAgeMs: 50 });
    expect(s.accepts).toBe(4);
  });

  it('never more than `concurrency` connects at once (connects that hang until their timeout)', async () => {
    const stuck = await stuckPorts(10);
    cleanups.push(() => stuck.close());
    let active = 0;
    let most = 0;
    const counting: ConnectFn = async (host, port, timeoutMs, signal) => {
      active++;
      most = Math.max(most, active);
      try {
        return await tcpConnect(host, port, timeoutMs, signal);
      } finally {
        active--;
      }
    };
    const checker = new RemotePortChecker({ concurrency: 3, timeoutMs: 150, connect: counting, clock: fakeRateClock() });
    const got = await checker.check(stuck.ports.map((port) => ({ machine: '127.0.0.3', port })));
    expect([...got.values()].every((f) => f.result === 'timeout')).toBe(true);
    expect(checker.stats.connects).toBe(10);
    expect(most).toBe(3);
    expect(checker.stats.maxActive).toBe(3);
  });

  it('never more than `ratePerSecond` connects started in any second (on the limiter clock), each reaching the real server', async () => {
    const servers = await Promise.all(Array.from({ length: 60 }, () => server()));
    const clock = fakeRateClock();
    const starts: number[] = [];
    const counting: ConnectFn = (host, port, timeoutMs, signal) => {
      starts.push(clock.t);
      return tcpConnect(host, port, timeoutMs, signal);
    };
    const checker = new RemotePortChecker({ ratePerSecond: 50, connect: counting, clock });
    await checker.check(servers.map((s) => ({ machine: s.host, port: s.port })));
    expect(servers.map((s) => s.accepts)).toEqual(servers.map(() => 1));
    expect(starts.length).toBe(60);
    for (const from of starts) expect(starts.filter((t) => t >= from && t < from + 1000).length).toBeLessThanOrEqual(50);
    // And not slower than the bound either: 60 starts 20 ms apart.
    expect(starts.at(-1)).toBe(59 * 20);
  });

  it('a fresh check goes ahead of a queued round', async () => {
    const stuck = await stuckPorts(4);
    cleanups.push(() => stuck.close());
    const s = await server();
    const order: number[] = [];
    const counting: ConnectFn = (host, port, timeoutMs, signal) => {
      order.push(port);
      return tcpConnect(host, port, timeoutMs, signal);
    };
    const checker = new RemotePortChecker({ concurrency: 1, timeoutMs: 100, connect: counting, clock: fakeRateClock() });
    const round = checker.check(stuck.ports.map((port) => ({ machine: '127.0.0.3', port })));
    await new Promise((r) => setTimeout(r, 20));
    const fresh = await checker.check([{ machine: '127.0.0.2', port: s.port }], { fresh: true });
    expect([...fresh.values()][0]?.result).toBe('open');
    await round;
    expect(order[1]).toBe(s.port);
  });

  it('an abort ends a check at once and leaves no socket behind', async () => {
    const stuck = await stuckPorts(1);
    cleanups.push(() => stuck.close());
    const checker = new RemotePortChecker({ timeoutMs: 60_000 });
    const ac = new AbortController();
    const run = checker.check([{ machine: '127.0.0.3', port: stuck.ports[0]! }], { signal: ac.signal });
    setTimeout(() => ac.abort(), 30);
    await expect(run).rejects.toThrow(/abort/i);
  });
});

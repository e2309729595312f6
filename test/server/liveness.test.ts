// Heartbeats, the TTL sweep and half-open peers, with a fake clock for the TTLs so the tests are
// fast and exact; only the sweep and ping intervals run on real (short) timers.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, connectPastInit, expectFrame, FakeClock, node, registerText, roundTrip, serve, sleepMs, stored, T0 } from './helpers.js';

afterEach(cleanup);

const REGISTERED = { result: { status: 'registered' } };

describe('heartbeat', () => {
  it('a WebSocket ping frame refreshes last_seen of the node that connection registered', async () => {
    const clock = new FakeClock();
    const { url } = await serve({ now: clock.now });
    const agent = await connectPastInit(url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', ...REGISTERED });
    clock.advance(12_000);
    agent.ws.ping();
    await roundTrip(agent, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [{ ...stored(node('n1')), last_seen: T0 + 12 }] });
  });

  it('the JSON ping method does not', async () => {
    const clock = new FakeClock();
    const { url } = await serve({ now: clock.now });
    const agent = await connectPastInit(url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', ...REGISTERED });
    clock.advance(12_000);
    await roundTrip(agent, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 1, version: '0.1.0' } });
    await roundTrip(agent, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [stored(node('n1'))] });
  });
});

describe('sweep (ttl 1 s, every 100 ms)', () => {
  async function setup() {
    const clock = new FakeClock();
    const server = await serve({ now: clock.now, ttlSeconds: 1, sweepIntervalMs: 100 });
    const watcher = await connectPastInit(server.url);
    return { clock, server, watcher };
  }

  it('removes an offline node once ttl has passed since offline_since, not before', async () => {
    const { clock, server, watcher } = await setup();
    const agent = await connectPastInit(server.url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', ...REGISTERED });
    await roundTrip(watcher, '{"id":"c","method":"claim","params":{"resource":"x","holder":"n1"}}', { id: 'c', result: { status: 'claimed' } });
    await agent.close();
    await watcher.next('event'); // node_joined
    await watcher.next('event'); // claim_acquired
    expectFrame(await watcher.next('event'), { event: 'node_offline', id: 'n1' });
    clock.advance(999);
    await sleepMs(250);
    expect(server.registry.listNodes().map((n) => n.id)).toEqual(['n1']);
    clock.advance(1);
    expectFrame(await watcher.next('event'), { event: 'claim_released', resource: 'x' });
    expectFrame(await watcher.next('event'), { event: 'node_removed', id: 'n1' });
    expect(server.registry.listNodes()).toEqual([]);
  });

  it('removes an active node without heartbeats once 3×ttl has passed since last_seen', async () => {
    const { clock, server, watcher } = await setup();
    const agent = await connectPastInit(server.url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', ...REGISTERED });
    await watcher.next('event'); // node_joined
    clock.advance(2999);
    await sleepMs(250);
    expect(server.registry.listNodes().map((n) => n.status)).toEqual(['active']);
    clock.advance(1);
    expectFrame(await watcher.next('event'), { event: 'node_removed', id: 'n1' });
  });

  it('keeps an active node whose pings keep coming', async () => {
    const { clock, server } = await setup();
    const agent = await connectPastInit(server.url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', ...REGISTERED });
    for (let i = 0; i < 4; i++) {
      clock.advance(2000);
      agent.ws.ping();
      await sleepMs(120);
    }
    expect(server.registry.listNodes().map((n) => n.id)).toEqual(['n1']);
  });

  it('sweeps a node restored from a snapshot once ttl has passed, unless it registers again', async () => {
    const { clock, server, watcher } = await setup();
    const saved = { id: 'old', machine: 'box', cwd: '/', port: 1, status: 'active' };
    server.registry.restore([saved, { ...saved, id: 'back', port: 2 }], []);
    expect(server.registry.listNodes()[0]).toEqual({ ...saved, status: 'offline', offline_since: T0 });
    const agent = await connectPastInit(server.url);
    await roundTrip(agent, registerText('r', { ...saved, id: 'back', port: 2 }), { id: 'r', ...REGISTERED });
    await watcher.next('event'); // node_joined back
    clock.advance(1000);
    expectFrame(await watcher.next('event'), { event: 'node_removed', id: 'old' });
    expect(server.registry.listNodes().map((n) => [n.id, n.status])).toEqual([['back', 'active']]);
  });
});

describe('server pings', () => {
  it('terminate a peer that stops answering, and its node goes offline', async () => {
    const { url, registry } = await serve({ pingIntervalMs: 100 });
    const watcher = await connectPastInit(url);
    const healthy = await connectPastInit(url);
    await roundTrip(healthy, registerText('h', node('alive', { port: 1 })), { id: 'h', ...REGISTERED });
    const halfOpen = await connectPastInit(url, { autoPong: false });
    await roundTrip(halfOpen, registerText('g', node('silent', { port: 2 })), { id: 'g', ...REGISTERED });
    await watcher.next('event');
    await watcher.next('event');
    expectFrame(await watcher.next('event', 1500), { event: 'node_offline', id: 'silent' });
    expect((await halfOpen.closed).code).toBe(1006);
    await sleepMs(250); // a few more ping rounds: the answering peer stays
    expect(registry.listNodes().map((n) => [n.id, n.status])).toEqual([
      ['alive', 'active'],
      ['silent', 'offline'],
    ]);
  });
});

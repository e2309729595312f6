// Frame-level conformance of `ghostwatch serve` with the hypivisor protocol (protocols.md §1):
// exact JSON in, exact JSON out, over real sockets.
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanup,
  connect,
  connectPastInit,
  expectFrame,
  FakeClock,
  node,
  registerText,
  roundTrip,
  serve,
  sleepMs,
  stored,
  T0,
} from './helpers.js';

afterEach(cleanup);

async function setup() {
  const clock = new FakeClock();
  const server = await serve({ now: clock.now });
  return { clock, server, url: server.url };
}

describe('connecting', () => {
  it('sends the init frame first: nodes, protocol_version "1", claims', async () => {
    const { url } = await setup();
    const a = await connect(url);
    expectFrame(await a.next('event'), { event: 'init', nodes: [], protocol_version: '1', claims: [] });
    const n = node('n1', { pid: 4242 });
    await roundTrip(a, registerText('r1', n), { id: 'r1', result: { status: 'registered' } });
    await roundTrip(a, '{"id":"c","method":"claim","params":{"resource":"repo","holder":"n1","pid":4242}}', {
      id: 'c',
      result: { status: 'claimed' },
    });
    const b = await connect(url);
    expectFrame(await b.next(), {
      event: 'init',
      nodes: [stored(n)],
      protocol_version: '1',
      claims: [{ resource: 'repo', holder: 'n1', pid: 4242, acquired_at: T0 }],
    });
  });
});

describe('register', () => {
  it('stores the node active with last_seen and registered_at = now, and announces it', async () => {
    const { url, clock } = await setup();
    const a = await connectPastInit(url);
    const watcher = await connectPastInit(url);
    clock.advance(5000);
    const params = node('n1', { pid: 77, status: 'offline', offline_since: 1, last_seen: 2, registered_at: 3, pid_started_at: 1_699_999_999_123, extra: 'x' });
    a.send(registerText('r1', params));
    // The requester gets its response first, then the event it caused.
    expectFrame(await a.next(), { id: 'r1', result: { status: 'registered' } });
    const joined = { event: 'node_joined', node: stored(params, T0 + 5) };
    expectFrame(await a.next(), joined);
    expectFrame(await watcher.next(), joined);
    await roundTrip(a, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [stored(params, T0 + 5)] });
  });

  it('answers "Missing params" without params or with null params', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, '{"id":"1","method":"register"}', { id: '1', error: 'Missing params' });
    await roundTrip(a, '{"id":"2","method":"register","params":null}', { id: '2', error: 'Missing params' });
  });

  it.each([
    ['no id', { machine: 'm', cwd: '/', port: 1, status: 'active' }],
    ['no status', { id: 'x', machine: 'm', cwd: '/', port: 1 }],
    ['a numeric machine', { id: 'x', machine: 5, cwd: '/', port: 1, status: 'active' }],
    ['a string port', { id: 'x', machine: 'm', cwd: '/', port: '1', status: 'active' }],
    ['a port over 65535', { id: 'x', machine: 'm', cwd: '/', port: 70000, status: 'active' }],
    ['a negative port', { id: 'x', machine: 'm', cwd: '/', port: -1, status: 'active' }],
    ['a fractional pid', { id: 'x', machine: 'm', cwd: '/', port: 1, status: 'active', pid: 1.5 }],
    ['a string pid', { id: 'x', machine: 'm', cwd: '/', port: 1, status: 'active', pid: '12' }],
    ['a string last_seen', { id: 'x', machine: 'm', cwd: '/', port: 1, status: 'active', last_seen: 'now' }],
    ['an array', ['x', 'm', '/', 1, 'active']],
    ['a string', 'x'],
  ])('answers "Invalid node info" for %s', async (_why, params) => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, JSON.stringify({ id: '1', method: 'register', params }), { id: '1', error: 'Invalid node info' });
    await roundTrip(a, '{"id":"2","method":"list_nodes"}', { id: '2', result: [] });
  });

  it('re-registering an id overwrites it and keeps one node', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, registerText('1', node('n1', { port: 8082 })), { id: '1', result: { status: 'registered' } });
    expectFrame(await a.next('event'), { event: 'node_joined', node: stored(node('n1', { port: 8082 })) });
    await roundTrip(a, registerText('2', node('n1', { port: 8080 })), { id: '2', result: { status: 'registered' } });
    expectFrame(await a.next('event'), { event: 'node_joined', node: stored(node('n1', { port: 8080 })) });
    await roundTrip(a, '{"id":"3","method":"list_nodes"}', { id: '3', result: [stored(node('n1', { port: 8080 }))] });
  });

  it('evicts another node with the same machine and port (node_removed, then node_joined)', async () => {
    const { url } = await setup();
    const old = await connectPastInit(url);
    const watcher = await connectPastInit(url);
    await roundTrip(old, registerText('1', node('old')), { id: '1', result: { status: 'registered' } });
    expectFrame(await watcher.next('event'), { event: 'node_joined', node: stored(node('old')) });
    const fresh = await connectPastInit(url);
    await roundTrip(fresh, registerText('2', node('new', { cwd: '/elsewhere' })), { id: '2', result: { status: 'registered' } });
    expectFrame(await watcher.next('event'), { event: 'node_removed', id: 'old' });
    expectFrame(await watcher.next('event'), { event: 'node_joined', node: stored(node('new', { cwd: '/elsewhere' })) });
    await roundTrip(watcher, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [stored(node('new', { cwd: '/elsewhere' }))] });
  });

  it('keeps nodes that share a cwd on other ports, and the same port on other machines', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    const b = await connectPastInit(url);
    const c = await connectPastInit(url);
    const nodes = [node('a', { port: 8081 }), node('b', { port: 8082 }), node('c', { port: 8081, machine: 'other' })];
    await roundTrip(a, registerText('1', nodes[0]!), { id: '1', result: { status: 'registered' } });
    await roundTrip(b, registerText('2', nodes[1]!), { id: '2', result: { status: 'registered' } });
    await roundTrip(c, registerText('3', nodes[2]!), { id: '3', result: { status: 'registered' } });
    await roundTrip(c, '{"id":"l","method":"list_nodes"}', { id: 'l', result: nodes.map((n) => stored(n)) });
  });
});

describe('frames the stock server drops or answers without an id', () => {
  it('answers a request without an id (or with a null id) with no id key', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, '{"method":"ping"}', { result: { status: 'healthy', nodes: 0, version: '0.1.0' } });
    await roundTrip(a, '{"id":null,"method":"nope"}', { error: 'Method not found: nope' });
  });

  it.each([
    ['a numeric id', '{"id":1,"method":"ping"}'],
    ['invalid JSON', '{"id":"1","method":"ping"'],
    ['a missing method', '{"id":"1","params":{}}'],
    ['a numeric method', '{"id":"1","method":7}'],
    ['a JSON array', '["1","ping"]'],
    ['a JSON string', '"ping"'],
  ])('drops %s silently and keeps the connection', async (_why, text) => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    a.send(text);
    await a.expectSilence(300);
    await roundTrip(a, '{"id":"after","method":"ping"}', { id: 'after', result: { status: 'healthy', nodes: 0, version: '0.1.0' } });
  });

  it('ignores binary frames', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    a.ws.send(Buffer.from('{"id":"1","method":"ping"}'), { binary: true });
    await a.expectSilence(300);
  });
});

describe('other methods', () => {
  it('ping counts every node, offline ones included', async () => {
    const { url } = await setup();
    const agent = await connectPastInit(url);
    const a = await connectPastInit(url);
    await roundTrip(agent, registerText('1', node('a', { port: 1 })), { id: '1', result: { status: 'registered' } });
    await agent.close();
    expectFrame(await a.next('event'), { event: 'node_joined', node: stored(node('a', { port: 1 })) });
    expectFrame(await a.next('event'), { event: 'node_offline', id: 'a' });
    await roundTrip(a, '{"id":"p","method":"ping","params":{"x":1}}', { id: 'p', result: { status: 'healthy', nodes: 1, version: '0.1.0' } });
  });

  it.each(['frobnicate', 'list_directory', 'spawn'])('answers "Method not found" to %s', async (method) => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, JSON.stringify({ id: 'm', method, params: { path: '/' } }), { id: 'm', error: `Method not found: ${method}` });
  });
});

describe('deregister', () => {
  it('needs params.id as a string', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    await roundTrip(a, '{"id":"1","method":"deregister"}', { id: '1', error: 'Missing params.id' });
    await roundTrip(a, '{"id":"2","method":"deregister","params":{"id":5}}', { id: '2', error: 'Missing params.id' });
  });

  it('removes a node (node_removed) or says not_found', async () => {
    const { url } = await setup();
    const agent = await connectPastInit(url);
    const admin = await connectPastInit(url);
    await roundTrip(agent, registerText('1', node('n1')), { id: '1', result: { status: 'registered' } });
    expectFrame(await admin.next('event'), { event: 'node_joined', node: stored(node('n1')) });
    await roundTrip(admin, '{"id":"d","method":"deregister","params":{"id":"n1"}}', { id: 'd', result: { status: 'deregistered' } });
    expectFrame(await admin.next('event'), { event: 'node_removed', id: 'n1' });
    await roundTrip(admin, '{"id":"e","method":"deregister","params":{"id":"n1"}}', { id: 'e', result: { status: 'not_found' } });
  });

  it('lets a registered connection deregister only its own id; an unregistered one anything', async () => {
    const { url } = await setup();
    const a = await connectPastInit(url);
    const b = await connectPastInit(url);
    const admin = await connectPastInit(url);
    await roundTrip(a, registerText('1', node('a', { port: 1 })), { id: '1', result: { status: 'registered' } });
    await roundTrip(b, registerText('2', node('b', { port: 2 })), { id: '2', result: { status: 'registered' } });
    await roundTrip(b, '{"id":"x","method":"deregister","params":{"id":"a"}}', { id: 'x', error: 'Unauthorized: cannot deregister another node' });
    await roundTrip(b, '{"id":"y","method":"deregister","params":{"id":"ghost"}}', { id: 'y', error: 'Unauthorized: cannot deregister another node' });
    await roundTrip(b, '{"id":"z","method":"deregister","params":{"id":"b"}}', { id: 'z', result: { status: 'deregistered' } });
    expectFrame(await admin.next('event'), { event: 'node_joined', node: stored(node('a', { port: 1 })) });
    expectFrame(await admin.next('event'), { event: 'node_joined', node: stored(node('b', { port: 2 })) });
    expectFrame(await admin.next('event'), { event: 'node_removed', id: 'b' });
    await roundTrip(admin, '{"id":"w","method":"deregister","params":{"id":"a"}}', { id: 'w', result: { status: 'deregistered' } });
  });
});

describe('connection close', () => {
  it('marks the node offline (node_offline), keeps it, and a new register revives it', async () => {
    const { url, clock } = await setup();
    const agent = await connectPastInit(url);
    const watcher = await connectPastInit(url);
    await roundTrip(agent, registerText('1', node('n1')), { id: '1', result: { status: 'registered' } });
    expectFrame(await watcher.next('event'), { event: 'node_joined', node: stored(node('n1')) });
    clock.advance(2000);
    await agent.close();
    expectFrame(await watcher.next('event'), { event: 'node_offline', id: 'n1' });
    const offline = { id: 'n1', machine: 'box', cwd: '/work', port: 9000, status: 'offline', offline_since: T0 + 2, last_seen: T0, registered_at: T0 };
    await roundTrip(watcher, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [offline] });
    const again = await connectPastInit(url);
    await roundTrip(again, registerText('2', node('n1')), { id: '2', result: { status: 'registered' } });
    expectFrame(await watcher.next('event'), { event: 'node_joined', node: stored(node('n1'), T0 + 2) });
  });

  it('does not mark a node offline when a newer connection has registered it since', async () => {
    const { url } = await setup();
    const first = await connectPastInit(url);
    const second = await connectPastInit(url);
    await roundTrip(first, registerText('1', node('n1')), { id: '1', result: { status: 'registered' } });
    await roundTrip(second, registerText('2', node('n1')), { id: '2', result: { status: 'registered' } });
    await first.close();
    await sleepMs(200);
    await roundTrip(second, '{"id":"l","method":"list_nodes"}', { id: 'l', result: [stored(node('n1'))] });
  });
});

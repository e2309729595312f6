// What one client may store in `ghostwatch serve`: every string field, nodes and claims per
// connection and in all, and the init budget; a refusal names its limit and serve keeps serving.
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  MAX_CLAIMS_PER_CONNECTION,
  MAX_CWD_BYTES,
  MAX_ID_BYTES,
  MAX_INIT_BYTES,
  MAX_MACHINE_BYTES,
  MAX_NODES_PER_CONNECTION,
  MAX_RESOURCE_BYTES,
  MAX_STATUS_BYTES,
  Registry,
  type RpcResponse,
} from '../../src/server/index.js';
import { DEFAULT_MAX_PAYLOAD } from '../../src/sources/hypivisor/index.js';
import { cleanup, connect, connectPastInit, node, registerText, roundTrip, serve } from './helpers.js';

afterEach(cleanup);

/** `n` bytes of UTF-8 made of two-byte characters (and one ASCII one when `n` is odd). */
const bytes = (n: number): string => 'é'.repeat(Math.floor(n / 2)) + (n % 2 ? 'x' : '');

describe('field limits', () => {
  it('refuses 10 MB and 600 kB cwds, and every later client still reads init', async () => {
    const s = await serve();
    // Over the 1 MiB request bound: the connection is closed, with a reason that says why.
    for (const id of ['a', 'b']) {
      const agent = await connectPastInit(s.url);
      agent.send(registerText('r', node(id, { cwd: `/${'x'.repeat(10_000_000)}`, port: id === 'a' ? 1 : 2 })));
      expect(await agent.closed).toEqual({ code: 1009, reason: `message too big: over ${1024 * 1024} bytes` });
    }
    const agent = await connectPastInit(s.url);
    await roundTrip(agent, registerText('r', node('d', { cwd: `/${'x'.repeat(600_000)}` })), { id: 'r', error: `cwd is longer than ${MAX_CWD_BYTES} bytes` });
    await roundTrip(agent, registerText('ok', node('c')), { id: 'ok', result: { status: 'registered' } });
    // What ghostwatch's own client accepts by default.
    const later = await connect(s.url, { maxPayload: DEFAULT_MAX_PAYLOAD });
    expect(JSON.parse(await later.next()).nodes.map((n: { id: string }) => n.id)).toEqual(['c']);
  });

  it('stores every field at its limit and refuses one byte more, naming the field and the limit', async () => {
    const s = await serve();
    const agent = await connectPastInit(s.url);
    const cases: [string, Record<string, unknown>, string][] = [
      ['id', { id: bytes(MAX_ID_BYTES + 1) }, `id is longer than ${MAX_ID_BYTES} bytes`],
      ['machine', { machine: bytes(MAX_MACHINE_BYTES + 1) }, `machine is longer than ${MAX_MACHINE_BYTES} bytes`],
      ['cwd', { cwd: bytes(MAX_CWD_BYTES + 1) }, `cwd is longer than ${MAX_CWD_BYTES} bytes`],
      ['status', { status: bytes(MAX_STATUS_BYTES + 1) }, `status is longer than ${MAX_STATUS_BYTES} bytes`],
    ];
    for (const [, fields, error] of cases) {
      await roundTrip(agent, registerText('r', { ...node('n'), ...fields }), { id: 'r', error });
    }
    const atLimit = { ...node(bytes(MAX_ID_BYTES)), machine: bytes(MAX_MACHINE_BYTES), cwd: bytes(MAX_CWD_BYTES), status: bytes(MAX_STATUS_BYTES) };
    await roundTrip(agent, registerText('r', atLimit), { id: 'r', result: { status: 'registered' } });
    const holder = bytes(MAX_ID_BYTES);
    await roundTrip(agent, JSON.stringify({ id: 'c', method: 'claim', params: { resource: bytes(MAX_RESOURCE_BYTES + 1), holder } }), {
      id: 'c',
      error: `resource is longer than ${MAX_RESOURCE_BYTES} bytes`,
    });
    const admin = await connectPastInit(s.url);
    await roundTrip(admin, JSON.stringify({ id: 'c', method: 'claim', params: { resource: 'r', holder: bytes(MAX_ID_BYTES + 1) } }), {
      id: 'c',
      error: `holder is longer than ${MAX_ID_BYTES} bytes`,
    });
    await roundTrip(agent, JSON.stringify({ id: 'c', method: 'claim', params: { resource: bytes(MAX_RESOURCE_BYTES), holder } }), {
      id: 'c',
      result: { status: 'claimed' },
    });
    expect(s.registry.listNodes()).toHaveLength(1);
  });
});

describe('count limits', () => {
  it(`lets one connection hold ${MAX_NODES_PER_CONNECTION} nodes, and another connection more`, async () => {
    const s = await serve();
    const agent = await connectPastInit(s.url);
    for (let i = 0; i < MAX_NODES_PER_CONNECTION; i++) {
      await roundTrip(agent, registerText(`r${i}`, node(`n${i}`, { port: i })), { id: `r${i}`, result: { status: 'registered' } });
    }
    const refusal = { id: 'x', error: `too many nodes on this connection (limit ${MAX_NODES_PER_CONNECTION})` };
    await roundTrip(agent, registerText('x', node('extra', { port: 9999 })), refusal);
    // Re-registering one it holds, or taking over a machine:port it holds, is no new node.
    await roundTrip(agent, registerText('again', node('n0', { port: 0 })), { id: 'again', result: { status: 'registered' } });
    await roundTrip(agent, registerText('swap', node('n1-new', { port: 1 })), { id: 'swap', result: { status: 'registered' } });
    // A node removed by anyone (here an admin) no longer counts against the connection.
    const admin = await connectPastInit(s.url);
    await roundTrip(admin, JSON.stringify({ id: 'd', method: 'deregister', params: { id: 'n2' } }), { id: 'd', result: { status: 'deregistered' } });
    await roundTrip(agent, registerText('x', node('extra', { port: 9999 })), { id: 'x', result: { status: 'registered' } });
    await roundTrip(agent, registerText('y', node('extra2', { port: 9998 })), { ...refusal, id: 'y' });
    const other = await connectPastInit(s.url);
    await roundTrip(other, registerText('o', node('other', { port: 9997 })), { id: 'o', result: { status: 'registered' } });
    expect(s.registry.listNodes()).toHaveLength(MAX_NODES_PER_CONNECTION + 1);
  });

  it(`lets one connection hold ${MAX_CLAIMS_PER_CONNECTION} claims`, async () => {
    const s = await serve();
    const agent = await connectPastInit(s.url);
    await roundTrip(agent, registerText('r', node('n')), { id: 'r', result: { status: 'registered' } });
    const claim = (id: string, resource: string) => JSON.stringify({ id, method: 'claim', params: { resource, holder: 'n' } });
    for (let i = 0; i < MAX_CLAIMS_PER_CONNECTION; i++) agent.send(claim(`c${i}`, `res-${i}`));
    for (let i = 0; i < MAX_CLAIMS_PER_CONNECTION; i++) expect(JSON.parse(await agent.reply())).toEqual({ id: `c${i}`, result: { status: 'claimed' } });
    await roundTrip(agent, claim('x', 'one-more'), { id: 'x', error: `too many claims on this connection (limit ${MAX_CLAIMS_PER_CONNECTION})` });
    await roundTrip(agent, claim('again', 'res-0'), { id: 'again', result: { status: 'claimed' } });
    await roundTrip(agent, JSON.stringify({ id: 'rel', method: 'release_claim', params: { resource: 'res-1' } }), { id: 'rel', result: { status: 'released' } });
    await roundTrip(agent, claim('x', 'one-more'), { id: 'x', result: { status: 'claimed' } });
  });

  it('refuses nodes and claims past the totals, naming them, and keeps answering', async () => {
    const s = await serve({ limits: { nodes: 3, claims: 2 } });
    const agents = await Promise.all([1, 2, 3, 4].map(() => connectPastInit(s.url)));
    for (const [i, a] of agents.slice(0, 3).entries()) {
      await roundTrip(a, registerText('r', node(`n${i}`, { port: i })), { id: 'r', result: { status: 'registered' } });
    }
    await roundTrip(agents[3]!, registerText('r', node('n3', { port: 3 })), { id: 'r', error: 'registry is full (limit 3 nodes)' });
    // Full, but the same machine:port under a new id replaces one: allowed.
    await roundTrip(agents[3]!, registerText('r', node('n0b', { port: 0 })), { id: 'r', result: { status: 'registered' } });
    const claim = (resource: string, holder: string) => JSON.stringify({ id: 'c', method: 'claim', params: { resource, holder } });
    await roundTrip(agents[1]!, claim('a', 'n1'), { id: 'c', result: { status: 'claimed' } });
    await roundTrip(agents[2]!, claim('b', 'n2'), { id: 'c', result: { status: 'claimed' } });
    await roundTrip(agents[2]!, claim('c', 'n2'), { id: 'c', error: 'registry is full (limit 2 claims)' });
    await roundTrip(agents[2]!, claim('b', 'n2'), { id: 'c', result: { status: 'claimed' } });
    await roundTrip(agents[0]!, JSON.stringify({ id: 'p', method: 'ping' }), { id: 'p', result: { status: 'healthy', nodes: 3, version: '0.1.0' } });
  });
});

describe('the init budget', () => {
  it('keeps init within what ghostwatch accepts (16 MiB) even with every field at its worst', () => {
    expect(MAX_INIT_BYTES).toBe(DEFAULT_MAX_PAYLOAD);
    const registry = new Registry();
    // Control characters: each takes 6 bytes in JSON (\u0001), the worst case of every field.
    const worst = (n: number, i: number): string => `${i}`.padEnd(n, '\u0001');
    let conn = registry.openConnection();
    let refused: RpcResponse | undefined;
    let registered = 0;
    for (let i = 0; refused === undefined && i < 10_000; i++) {
      if (conn.nodes.size === MAX_NODES_PER_CONNECTION) conn = registry.openConnection();
      const params = { id: worst(MAX_ID_BYTES, i), machine: worst(MAX_MACHINE_BYTES, 0), cwd: worst(MAX_CWD_BYTES, 0), port: i % 65_536, status: 'active', pid: 4_294_967_295, pid_started_at: -1.7976931348623157e308 };
      const answer = registry.handle({ id: 'r', method: 'register', params }, conn);
      if (answer && 'error' in answer) refused = answer;
      else registered++;
    }
    expect(refused).toEqual({ id: 'r', error: `registry is full (init would be larger than ${MAX_INIT_BYTES} bytes)` });
    // Every one offline (its largest state): init is still within the budget.
    for (const n of registry.listNodes()) registry.connectionClosed({ ...registry.openConnection(), registeredId: n.id });
    const init = Buffer.byteLength(JSON.stringify(registry.initFrame()));
    expect(registered).toBeGreaterThan(400);
    expect(init).toBeLessThanOrEqual(MAX_INIT_BYTES);
    expect(init).toBeGreaterThan(MAX_INIT_BYTES - 64 * 1024);
  });

  it('counts a state file against the same limits', () => {
    const lines: string[] = [];
    const registry = new Registry({ log: (l) => lines.push(l), limits: { nodes: 2 } });
    const nodes = ['a', 'b', 'c'].map((id, i) => ({ id, machine: 'm', cwd: '/', port: i, status: 'active' }));
    registry.restore([...nodes, { id: 'd', machine: 'm', cwd: bytes(MAX_CWD_BYTES + 1), port: 9, status: 'active' }], []);
    expect(registry.listNodes().map((n) => n.id)).toEqual(['a', 'b']);
    expect(lines).toEqual(['serve: state file: skipped 2 entries over the registry\'s limits']);
  });
});

describe('nested and oversized requests', () => {
  it('drops a request nested 100,000 levels deep without parsing it, logs once, and keeps answering', async () => {
    const lines: string[] = [];
    const s = await serve({ quiet: false, log: (l) => lines.push(l) });
    const agent = await connectPastInit(s.url);
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    agent.send(registerText('r', node('n')).replace('"status":"active"', `"status":"active","extra":${deep}`));
    agent.send(JSON.stringify({ id: 'x', method: 'ping', params: { a: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) } }));
    await roundTrip(agent, JSON.stringify({ id: 'p', method: 'ping' }), { id: 'p', result: { status: 'healthy', nodes: 0, version: '0.1.0' } });
    expect(lines.filter((l) => l.includes('nested'))).toEqual(['serve: connection 1: dropped a message nested deeper than 32 levels']);
    // Brackets inside strings are text, not nesting.
    await roundTrip(agent, registerText('r', node('[['.repeat(50), { cwd: `/${'{'.repeat(100)}` })), { id: 'r', result: { status: 'registered' } });
  });

  it('closes a /ws client whose request is over 1 MiB with 1009 and a reason, and the others go on', async () => {
    const s = await serve();
    const big = await connectPastInit(s.url);
    const other = await connectPastInit(s.url);
    big.send(registerText('r', node('n', { extra: 'x'.repeat(1024 * 1024) })));
    expect(await big.closed).toEqual({ code: 1009, reason: `message too big: over ${1024 * 1024} bytes` });
    await roundTrip(other, JSON.stringify({ id: 'p', method: 'ping' }), { id: 'p', result: { status: 'healthy', nodes: 0, version: '0.1.0' } });
    expect(big.ws.readyState).toBe(WebSocket.CLOSED);
  });
});

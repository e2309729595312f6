// The HTTP side of `ghostwatch serve`: paths, the token, connection and payload limits.
import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/os/loopback.js';
import { cleanup, connect, connectPastInit, refusal, roundTrip, serve } from './helpers.js';

afterEach(cleanup);

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const PING = { id: 'p', result: { status: 'healthy', nodes: 0, version: '0.1.0' } };

describe('paths', () => {
  it('answers 404 to any other path, for plain requests and upgrade attempts', async () => {
    const { port } = await serve();
    const base = `127.0.0.1:${port}`;
    expect(await httpGet(`http://${base}/`)).toMatchObject({ status: 404 });
    expect(await httpGet(`http://${base}/health`)).toMatchObject({ status: 404 });
    expect((await refusal(`ws://${base}/`)).status).toBe(404);
    expect((await refusal(`ws://${base}/ws/`)).status).toBe(404);
    expect((await refusal(`ws://${base}/ws/agentx/n1`)).status).toBe(404);
    expect((await refusal(`ws://${base}/wsx`)).status).toBe(404);
  });

  it('answers 426 to a plain HTTP request for /ws', async () => {
    const { port } = await serve();
    expect(await httpGet(`http://127.0.0.1:${port}/ws`)).toMatchObject({ status: 426 });
  });
});

describe('token', () => {
  const token = 'p@ss word/+&=?é';

  it('refuses the upgrade with 401 when the token is missing or wrong', async () => {
    const { url } = await serve({ token });
    expect(await refusal(url)).toEqual({ status: 401, body: 'Unauthorized\n' });
    expect((await refusal(`${url}?token=wrong`)).status).toBe(401);
    expect((await refusal(`${url}?token=`)).status).toBe(401);
    expect((await refusal(`${url}?token=${encodeURIComponent(token)}x`)).status).toBe(401);
    expect((await refusal(`${url}?token=%E0%A4%A`)).status).toBe(401); // escapes that are not UTF-8: no token
  });

  it('accepts the right token, percent-encoded, among other query parameters', async () => {
    const { url } = await serve({ token });
    const a = await connectPastInit(`${url}?token=${encodeURIComponent(token)}`);
    await roundTrip(a, '{"id":"p","method":"ping"}', PING);
    const b = await connectPastInit(`${url}?v=1&token=${encodeURIComponent(token)}&x=y`);
    await roundTrip(b, '{"id":"p","method":"ping"}', PING);
  });

  it("decodes %XX escapes only, like the stock server: '+' is a plus, not a space", async () => {
    const { url } = await serve({ token: 'two words' });
    expect((await refusal(`${url}?token=two+words`)).status).toBe(401);
    const a = await connectPastInit(`${url}?token=two%20words`);
    await roundTrip(a, '{"id":"p","method":"ping"}', PING);
  });

  it('needs no token when none is configured', async () => {
    const { url } = await serve({ token: '' });
    const a = await connectPastInit(`${url}?token=anything`);
    await roundTrip(a, '{"id":"p","method":"ping"}', PING);
  });
});

describe('limits', () => {
  it('refuses a connection over maxConnections with 503, and accepts again once one leaves', async () => {
    const { url } = await serve({ maxConnections: 2 });
    const a = await connectPastInit(url);
    await connectPastInit(url);
    const refused = await refusal(url);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain('too many connections');
    await a.close();
    const c = await connectPastInit(url);
    await roundTrip(c, '{"id":"p","method":"ping"}', PING);
  });

  it('closes with 1009 and a reason that says so when a message is over maxPayload', async () => {
    const { url } = await serve({ maxPayload: 1024 });
    const a = await connectPastInit(url);
    await roundTrip(a, JSON.stringify({ id: 'p', method: 'ping', params: { pad: 'x'.repeat(900) } }), PING);
    a.send(JSON.stringify({ id: 'big', method: 'ping', params: { pad: 'x'.repeat(2000) } }));
    const { code, reason } = await a.closed;
    expect(code).toBe(1009);
    expect(reason).toBe('message too big: over 1024 bytes');
  });
});

describe('server options', () => {
  it('warns once when bound beyond loopback without a token', async () => {
    const lines: string[] = [];
    await serve({ host: '0.0.0.0', log: (l) => lines.push(l), quiet: false });
    expect(lines.filter((l) => l.includes('without a token'))).toHaveLength(1);
    const quiet: string[] = [];
    await serve({ host: '0.0.0.0', token: 't', log: (l) => quiet.push(l), quiet: false });
    await serve({ host: '127.0.0.1', log: (l) => quiet.push(l), quiet: false });
    expect(quiet).toEqual([]);
  });

  it('rejects with EADDRINUSE when the port is taken', async () => {
    const { port } = await serve();
    await expect(serve({ port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('drops the broadcast events an eventFilter refuses (fault injection), not the state change', async () => {
    const { url } = await serve({ eventFilter: (frame) => (frame as { event?: string }).event !== 'node_joined' });
    const agent = await connectPastInit(url);
    agent.send('{"id":"r","method":"register","params":{"id":"n1","machine":"m","cwd":"/","port":1,"status":"active"}}');
    await agent.reply();
    await agent.expectSilence(200);
    await roundTrip(agent, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 1, version: '0.1.0' } });
  });

  it('closes open clients with 1001 on close()', async () => {
    const server = await serve();
    const a = await connect(server.url);
    await server.close();
    expect((await a.closed).code).toBe(1001);
  });
});

describe('which hosts count as loopback (no warning for serving without a token)', () => {
  it.each([
    ['localhost', true], ['127.0.0.1', true], ['127.9.8.7', true], ['::1', true], ['[::1]', true], ['::ffff:127.0.0.1', true],
    ['127.evil.example', false], ['0.0.0.0', false], ['::', false], ['10.1.2.3', false], ['localhost.evil.example', false],
  ] as const)('%s: %s', (host, loopback) => expect(isLoopbackHost(host)).toBe(loopback));
});

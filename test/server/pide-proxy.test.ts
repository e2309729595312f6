// Pi-DE against `ghostwatch serve`, driven the way Pi-DE drives hypivisor: `/ws?token=<raw>` for
// the list, `/ws/agent/<encodeURIComponent(id)>?token=<raw>` for one agent, whose frames serve
// relays to and from a real agent WebSocket server in a child process (test/support/pide-agent.mjs).
import { fork, type ChildProcess } from 'node:child_process';
import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { cleanup, connectPastInit, expectFrame, refusal, registerText, roundTrip, serve, sleepMs } from './helpers.js';
import { until } from '../support/wait.js';

/** A generous deadline: it only guards against a hang on a busy machine. */
const WAIT_MS = 15_000;
/** A test here waits on several steps of up to WAIT_MS each: a hang fails on the step's own message, not the test's timeout. */
const STEPS = { timeout: 4 * WAIT_MS };
const agentScript = fileURLToPath(new URL('../support/pide-agent.mjs', import.meta.url));

interface AgentStats {
  clients: number;
  closes: { code: number; reason: string }[];
  received: ({ text: string } | { binary: string })[];
  receivedBytes: number;
  bufferedAmount: number;
  flood?: { sent: number; stuck: boolean };
}

interface Agent {
  readonly child: ChildProcess;
  readonly port: number;
  ask(cmd: string, args?: Record<string, unknown>): Promise<AgentStats>;
}

const children: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const netServers: Server[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await cleanup();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const s of netServers.splice(0)) s.close();
});

async function startAgent(): Promise<Agent> {
  const child = fork(agentScript, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  children.push(child);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`agent exited ${code}`)));
  });
  let serial = 0;
  /** The agent's answer; an agent that does not answer within WAIT_MS fails the test, naming the command. */
  const ask = (cmd: string, args: Record<string, unknown> = {}): Promise<AgentStats> => {
    const id = ++serial;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.off('message', on);
        reject(new Error(`the agent did not answer '${cmd}' within ${WAIT_MS} ms (exit code ${child.exitCode}, signal ${child.signalCode})`));
      }, WAIT_MS);
      const on = (m: unknown): void => {
        const reply = m as { id?: number; stats: AgentStats };
        if (reply.id !== id) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(reply.stats);
      };
      child.on('message', on);
      child.send({ id, cmd, ...args });
    });
  };
  return { child, port, ask };
}

type Frame = { text: string } | { binary: string };

interface PiDe {
  readonly ws: WebSocket;
  readonly frames: Frame[];
  next(): Promise<Frame>;
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** A Pi-DE agent view: records every frame, text or binary, and how the socket closed. */
function openAgentView(url: string): Promise<PiDe> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  sockets.push(ws);
  const frames: Frame[] = [];
  let read = 0;
  ws.on('message', (data: Buffer, isBinary) => {
    frames.push(isBinary ? { binary: data.toString('hex') } : { text: data.toString('utf8') });
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
  });
  const next = async (): Promise<Frame> => {
    await until(() => {
      const n = frames.length;
      return n > read ? n : undefined;
    }, WAIT_MS, 'a frame from the proxy');
    return frames[read++]!;
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, frames, next, closed }));
    ws.once('error', reject);
  });
}

const ID = '0190f3a2-7c1e-7d4b-9a55-1f2e3d4c5b6a';
const agentNode = (port: number, id = ID) => ({ id, machine: '127.0.0.1', cwd: '/work', port, status: 'active', pid: 999_999 });

/** serve with one registered agent; the registering connection stays open (the node is active). */
async function serveWithAgent(opts: Parameters<typeof serve>[0] = {}, token = '') {
  const agent = await startAgent();
  const server = await serve({ token, ...opts });
  const q = token ? `?token=${token}` : '';
  const socket = await connectPastInit(`${server.url}${q}`);
  socket.send(registerText('r', agentNode(agent.port)));
  expectFrame(await socket.reply(), { id: 'r', result: { status: 'registered' } });
  const viewUrl = `ws://127.0.0.1:${server.port}/ws/agent/${encodeURIComponent(ID)}${q}`;
  return { agent, server, socket, viewUrl };
}

describe('Pi-DE through serve', STEPS, () => {
  it('lists the agent, opens it through /ws/agent/<id> with a raw token, and relays text and binary both ways', async () => {
    const token = 'ab%zz/é+';
    const { agent, server, viewUrl } = await serveWithAgent({}, token);
    // Pi-DE's list: the raw token, with its invalid % sequence, is accepted as hypivisor accepts it.
    const list = await connectPastInit(`${server.url}?token=${token}`);
    list.send('{"id":"l","method":"list_nodes"}');
    const nodes = (JSON.parse(await list.reply()) as { result: { id: string; status: string }[] }).result;
    expect(nodes.map((n) => [n.id, n.status])).toEqual([[ID, 'active']]);

    const view = await openAgentView(viewUrl);
    view.ws.send('{"type":"prompt","message":"hi"}');
    expect(await view.next()).toEqual({ text: 'echo:{"type":"prompt","message":"hi"}' });
    view.ws.send(Buffer.from('0102ff', 'hex'), { binary: true });
    expect(await view.next()).toEqual({ binary: 'ec0102ff' });
    await agent.ask('send', { text: '{"type":"init_state"}' });
    expect(await view.next()).toEqual({ text: '{"type":"init_state"}' });
    await agent.ask('send', { binary: true, hex: '00ff10' });
    expect(await view.next()).toEqual({ binary: '00ff10' });
    expect((await agent.ask('stats')).received).toEqual([{ text: '{"type":"prompt","message":"hi"}' }, { binary: '0102ff' }]);

    // The agent closes with a code: Pi-DE sees the same code and reason.
    await agent.ask('close', { code: 4001, reason: 'session ended' });
    expect(await view.closed).toEqual({ code: 4001, reason: 'session ended' });
    await until(() => {
      const n = server.proxyStats().length;
      return n === 0 ? n : undefined;
    }, WAIT_MS, 'the proxy is gone');
  });

  it('closes the agent side with the code Pi-DE closed with', async () => {
    const { agent, viewUrl } = await serveWithAgent();
    const view = await openAgentView(viewUrl);
    view.ws.send('x');
    await view.next();
    view.ws.close(4002, 'tab closed');
    const stats = await until(async () => {
      const s = await agent.ask('stats');
      return s.closes.length === 1 ? s : undefined;
    }, WAIT_MS, 'the agent saw the close');
    expect(stats.closes).toEqual([{ code: 4002, reason: 'tab closed' }]);
  });

  it('maps a close without a close frame to a sendable code: 1014 toward Pi-DE, 1001 toward the agent', async () => {
    const { agent, viewUrl } = await serveWithAgent();
    const view = await openAgentView(viewUrl);
    view.ws.send('x');
    await view.next();
    await agent.ask('terminate');
    expect((await view.closed).code).toBe(1014);

    const again = await openAgentView(viewUrl);
    again.ws.send('y');
    await again.next();
    again.ws.terminate();
    const stats = await until(async () => {
      const s = await agent.ask('stats');
      return s.closes.length === 2 ? s : undefined;
    }, WAIT_MS, 'the agent saw the second close');
    expect(stats.closes[1]!.code).toBe(1001);
  });

  it('answers unknown and offline ids with one error frame, as hypivisor does', async () => {
    const { agent, server, socket } = await serveWithAgent();
    const unknown = await openAgentView(`ws://127.0.0.1:${server.port}/ws/agent/nope`);
    expect(await unknown.next()).toEqual({ text: '{"error":"Agent not found"}' });
    expect((await unknown.closed).code).toBe(1000);

    await socket.close(); // the registering connection closes: the node goes offline
    const watcher = await connectPastInit(server.url);
    await until(async () => {
      watcher.send('{"id":"l","method":"list_nodes"}');
      return (JSON.parse(await watcher.reply()) as { result: { status: string }[] }).result[0]?.status === 'offline';
    }, WAIT_MS, 'the node is offline');
    const offline = await openAgentView(`ws://127.0.0.1:${server.port}/ws/agent/${ID}`);
    expect(await offline.next()).toEqual({ text: '{"error":"Agent is offline"}' });
    expect((await offline.closed).code).toBe(1000);
    expect((await agent.ask('stats')).clients).toBe(0); // nothing was opened toward the agent
  });

  it('refuses an empty id with 400 and a wrong token with 401, on the proxy path as on every path', async () => {
    const { server } = await serveWithAgent({}, 'secret');
    const base = `ws://127.0.0.1:${server.port}`;
    expect(await refusal(`${base}/ws/agent/?token=secret`)).toEqual({ status: 400, body: 'Missing node ID\n' });
    expect((await refusal(`${base}/ws/agent/${ID}?token=wrong`)).status).toBe(401);
    expect((await refusal(`${base}/ws/agent/${ID}`)).status).toBe(401);
    expect((await refusal(`${base}/elsewhere?token=wrong`)).status).toBe(401); // token first, then the route
    expect((await refusal(`${base}/elsewhere?token=secret`)).status).toBe(404);
  });

  it('tells Pi-DE when the agent cannot be reached: refused, or no handshake within the timeout', async () => {
    const holder = createServer((socket: Socket) => socket.on('error', () => {})); // accepts, never answers
    netServers.push(holder);
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const silentPort = (holder.address() as { port: number }).port;
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const server = await serve({ proxyConnectTimeoutMs: 300 });
    const socket = await connectPastInit(server.url);
    await roundTrip(socket, registerText('a', agentNode(silentPort, 'silent')), { id: 'a', result: { status: 'registered' } });
    await roundTrip(socket, registerText('b', agentNode(closedPort, 'gone')), { id: 'b', result: { status: 'registered' } });

    const slow = await openAgentView(`ws://127.0.0.1:${server.port}/ws/agent/silent`);
    expect(await slow.next()).toEqual({ text: '{"error":"Cannot reach agent: no answer within 300 ms"}' });
    expect((await slow.closed).code).toBe(1014);
    const refused = await openAgentView(`ws://127.0.0.1:${server.port}/ws/agent/gone`);
    expect(await refused.next()).toEqual({ text: `{"error":"Cannot reach agent: connect ECONNREFUSED 127.0.0.1:${closedPort}"}` });
    expect((await refused.closed).code).toBe(1014);
    await until(() => {
      const n = server.proxyStats().length;
      return n === 0 ? n : undefined;
    }, WAIT_MS, 'both proxies are gone');
  });

  it('counts proxy connections against maxConnections', async () => {
    const { server, viewUrl } = await serveWithAgent({ maxConnections: 2 });
    const view = await openAgentView(viewUrl); // the registering socket + this proxy = 2
    expect((await refusal(server.url)).status).toBe(503);
    expect((await refusal(viewUrl)).status).toBe(503);
    view.ws.close();
    await view.closed;
    await until(() => {
      const n = server.proxyStats().length;
      return n === 0 ? n : undefined;
    }, WAIT_MS, 'the proxy is gone');
    const again = await openAgentView(viewUrl);
    again.ws.send('z');
    expect(await again.next()).toEqual({ text: 'echo:z' });
  });
});

describe('backpressure', STEPS, () => {
  const LIMIT = 256 * 1024;
  const FRAME = 64 * 1024;

  it('stops reading the agent while Pi-DE does not read, and delivers everything once it does', async () => {
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: LIMIT });
    const view = await openAgentView(viewUrl);
    let receivedBytes = 0;
    view.ws.on('message', (data: Buffer) => (receivedBytes += data.length));
    view.ws.pause(); // Pi-DE stops reading
    await until(async () => {
      const s = await agent.ask('stats');
      return s.clients === 1 ? s : undefined;
    }, WAIT_MS, 'serve connected to the agent');
    await agent.ask('flood', { frameBytes: FRAME, cap: 4 * 1024 * 1024 });
    // The agent fills its own buffer: serve stopped taking more from it.
    await until(async () => {
      const s = await agent.ask('stats');
      return s.flood?.stuck === true && s.bufferedAmount >= 4 * 1024 * 1024 ? s : undefined;
    }, WAIT_MS, 'the agent is stuck');
    const stats = await until(() => {
      const s = server.proxyStats()[0];
      return s?.agentPaused === true ? s : undefined;
    }, WAIT_MS, 'serve stopped reading the agent');
    expect(stats).toMatchObject({ state: 'relaying', agentPaused: true, clientPaused: false });
    // serve holds at most the limit plus what one socket read brought in, whatever the agent sent.
    expect(stats!.clientBuffered).toBeLessThanOrEqual(LIMIT + 2 * FRAME);
    const sent = (await agent.ask('stopFlood')).flood!.sent;
    expect(sent).toBeGreaterThan(LIMIT * 8);
    view.ws.resume();
    await until(() => {
      const n = receivedBytes;
      return n >= sent ? n : undefined;
    }, WAIT_MS, 'Pi-DE received everything');
    expect(receivedBytes).toBe(sent);
    expect(server.proxyStats()[0]).toMatchObject({ agentPaused: false, clientPaused: false });
  });

  it('stops reading Pi-DE while the agent does not read, and delivers everything once it does', async () => {
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: LIMIT });
    await agent.ask('pause'); // the agent stops reading, from its first connection on
    const view = await openAgentView(viewUrl);
    const frame = Buffer.alloc(FRAME, 0x62);
    let sent = 0;
    // Pi-DE sends until its own socket holds 4 MiB unsent: serve must have stopped reading it.
    while (view.ws.bufferedAmount < 4 * 1024 * 1024) {
      view.ws.send(frame, { binary: true });
      sent += FRAME;
      if (sent % (16 * FRAME) === 0) await sleepMs(5); // let the sockets move between bursts
      expect(sent).toBeLessThan(64 * 1024 * 1024); // serve must have stopped reading long before
    }
    // The kernel's loopback buffers grow while they fill, so serve may be between a resume and the
    // next pause at this instant; it must settle paused while the agent still does not read.
    const stats = await until(() => {
      const s = server.proxyStats()[0];
      return s?.clientPaused === true ? s : undefined;
    }, WAIT_MS, 'serve stopped reading Pi-DE');
    expect(stats).toMatchObject({ state: 'relaying', clientPaused: true, agentPaused: false });
    expect(stats!.agentBuffered).toBeLessThanOrEqual(LIMIT + 2 * FRAME);
    await agent.ask('resume');
    await until(async () => {
      const s = await agent.ask('stats');
      return s.receivedBytes >= sent ? s : undefined;
    }, WAIT_MS, 'the agent received everything');
    expect((await agent.ask('stats')).receivedBytes).toBe(sent);
    expect(server.proxyStats()[0]).toMatchObject({ agentPaused: false, clientPaused: false });
  });
});

describe('a frame larger than the mark, streamed', STEPS, () => {
  const LIMIT = 64 * 1024;
  /** What one read from a socket may bring in at once. */
  const ONE_READ = 64 * 1024;
  const FRAME = 12 * 1024 * 1024;

  it('holds at most the mark and one read of a 12 MiB frame for a Pi-DE that does not read, not the frame', async () => {
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: LIMIT });
    const view = await openAgentView(viewUrl);
    (view.ws as unknown as { _socket: { pause(): void } })._socket.pause(); // Pi-DE never reads
    await until(async () => (await agent.ask('stats')).clients === 1 || undefined, WAIT_MS, 'serve connected to the agent');
    await agent.ask('big', { bytes: FRAME });
    const stats = await until(() => {
      const s = server.proxyStats()[0];
      return s?.state === 'relaying' && s.agentPaused && s.clientBuffered > 0 ? s : undefined;
    }, WAIT_MS, 'serve stopped reading the agent, with some of the frame unsent to Pi-DE');
    expect(stats.clientBuffered).toBeLessThanOrEqual(LIMIT + ONE_READ);
  });

  it('holds at most the mark and one read of a 12 MiB frame from Pi-DE for an agent that does not read', async () => {
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: LIMIT });
    await agent.ask('pause');
    const view = await openAgentView(viewUrl);
    view.ws.send(Buffer.alloc(FRAME, 0x64), { binary: true });
    const stats = await until(() => {
      const s = server.proxyStats()[0];
      return s?.state === 'relaying' && s.clientPaused && s.agentBuffered > 0 ? s : undefined;
    }, WAIT_MS, 'serve stopped reading Pi-DE, with some of the frame unsent to the agent');
    expect(stats.agentBuffered).toBeLessThanOrEqual(LIMIT + ONE_READ);
  });

  it('closes both sides, with a log line, once more than the hard limit is unsent to one side', async () => {
    const lines: string[] = [];
    // A mark above the hard limit: nothing pauses the agent before the hard limit is passed.
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: 1024 * 1024, proxyHardLimit: 8 * 1024, quiet: false, log: (l) => lines.push(l) });
    const view = await openAgentView(viewUrl);
    (view.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await until(async () => (await agent.ask('stats')).clients === 1 || undefined, WAIT_MS, 'serve connected to the agent');
    await agent.ask('flood', { frameBytes: 64 * 1024, cap: 4 * 1024 * 1024 });
    await until(() => lines.find((l) => l.includes('hard limit')), WAIT_MS, () => `the log line (serve logged ${JSON.stringify(lines)}; proxies ${JSON.stringify(server.proxyStats())})`);
    expect(lines.filter((l) => l.includes('hard limit'))).toEqual([
      expect.stringMatching(new RegExp(`^serve: proxy to ${ID} \\(127\\.0\\.0\\.1:\\d+\\): \\d+ bytes unsent to Pi-DE, over the hard limit of 8192: closed$`)),
    ]);
    await until(() => server.proxyStats().length === 0 || undefined, WAIT_MS, 'the proxy is gone');
    await until(async () => (await agent.ask('stats')).clients === 0 || undefined, WAIT_MS, 'the agent side is closed');
  });
});

describe('frames over the limit, and handshakes that are not WebSocket ones', STEPS, () => {
  it('closes both sides with 1009 when Pi-DE sends a frame over the frame limit; the agent gets nothing of it', async () => {
    const { agent, viewUrl } = await serveWithAgent({ maxPayload: 64 * 1024 });
    const view = await openAgentView(viewUrl);
    view.ws.send('x');
    await view.next();
    view.ws.send(Buffer.alloc(64 * 1024 + 1, 0x65), { binary: true });
    expect((await view.closed).code).toBe(1009);
    const stats = await until(async () => {
      const s = await agent.ask('stats');
      return s.closes.length === 1 ? s : undefined;
    }, WAIT_MS, 'the agent saw the close');
    expect(stats.closes[0]!.code).toBe(1009);
    expect(stats.receivedBytes).toBe(1);
  });

  it('closes both sides with 1009 when the agent sends a frame over the frame limit', async () => {
    const { agent, viewUrl } = await serveWithAgent({ maxPayload: 64 * 1024 });
    const view = await openAgentView(viewUrl);
    await until(async () => (await agent.ask('stats')).clients === 1 || undefined, WAIT_MS, 'serve connected to the agent');
    await agent.ask('big', { bytes: 64 * 1024 + 1 });
    expect((await view.closed).code).toBe(1009);
    expect(view.frames).toEqual([]);
    const stats = await until(async () => {
      const s = await agent.ask('stats');
      return s.closes.length === 1 ? s : undefined;
    }, WAIT_MS, 'the agent saw the close');
    expect(stats.closes[0]!.code).toBe(1009);
  });

  it('answers 400 to an upgrade on the proxy path that is not a WebSocket one', async () => {
    const { server } = await serveWithAgent();
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectTcp(server.port, '127.0.0.1', () => resolve(s)).once('error', reject);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.write(`GET /ws/agent/${ID} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n`);
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Missing or invalid Sec-WebSocket-Key header$/);
  });
});

describe('Pi-DE through serve, bounded in time', STEPS, () => {
  const LIMIT = 256 * 1024;
  const FRAME = 64 * 1024;
  it('closes a proxy, with a log line, whose agent does not read for a whole ping interval', async () => {
    const lines: string[] = [];
    const { agent, server, viewUrl, socket } = await serveWithAgent({ proxyBufferLimit: LIMIT, pingIntervalMs: 150, quiet: false, log: (l) => lines.push(l) });
    await agent.ask('pause');
    const view = await openAgentView(viewUrl);
    const frame = Buffer.alloc(FRAME, 0x62);
    // Pi-DE sends and then stops reading too: without a bound in time, neither side would ever move.
    while (view.ws.bufferedAmount < 2 * 1024 * 1024) {
      view.ws.send(frame, { binary: true });
      await sleepMs(1);
    }
    (view.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await until(() => {
      const ok = lines.some((l) => l.includes('did not read'));
      return ok ? ok : undefined;
    }, WAIT_MS, 'the log line');
    expect(lines.filter((l) => l.includes('did not read'))).toEqual(['serve: an agent proxy connection: the agent did not read for over 150 ms: terminated']);
    await until(() => {
      const n = server.proxyStats().length;
      return n === 0 ? n : undefined;
    }, WAIT_MS, 'the proxy is gone');
    await roundTrip(socket, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 1, version: '0.1.0' } });
  });

  it('closes a proxy, with a log line, whose Pi-DE does not read for a whole ping interval', async () => {
    const lines: string[] = [];
    const { agent, server, viewUrl } = await serveWithAgent({ proxyBufferLimit: LIMIT, pingIntervalMs: 150, quiet: false, log: (l) => lines.push(l) });
    const view = await openAgentView(viewUrl);
    (view.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    await until(async () => (await agent.ask('stats')).clients === 1 || undefined, WAIT_MS, 'serve connected to the agent');
    await agent.ask('flood', { frameBytes: FRAME, cap: 4 * 1024 * 1024 });
    await until(() => lines.find((l) => l.includes('did not read')), WAIT_MS, 'the log line');
    expect(lines.filter((l) => l.includes('did not read'))).toEqual(['serve: an agent proxy connection: Pi-DE did not read for over 150 ms: terminated']);
    await until(() => server.proxyStats().length === 0 || undefined, WAIT_MS, 'the proxy is gone');
    await agent.ask('stopFlood');
  });

  it('closes a proxy, with a log line, whose Pi-DE reads but never answers a ping', async () => {
    const lines: string[] = [];
    const { server } = await serveWithAgent({ pingIntervalMs: 150, quiet: false, log: (l) => lines.push(l) });
    // A Pi-DE by hand: the handshake, then it reads everything and answers nothing.
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connectTcp(server.port, '127.0.0.1', () => resolve(s)).once('error', reject);
    });
    socket.on('data', () => {});
    socket.on('error', () => {});
    socket.write(`GET /ws/agent/${ID} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${'A'.repeat(22)}==\r\n\r\n`);
    await until(() => lines.find((l) => l.includes('did not answer a ping')), WAIT_MS, 'the log line');
    expect(lines.filter((l) => l.includes('did not answer a ping'))).toEqual(['serve: an agent proxy connection did not answer a ping: terminated']);
    await new Promise((resolve) => (socket.destroyed ? resolve(undefined) : socket.once('close', resolve)));
    await until(() => server.proxyStats().length === 0 || undefined, WAIT_MS, 'the proxy is gone');
  });
});

// One budget for every byte serve holds unsent, whoever it is for (registry clients' init, events
// and replies; both sides of every agent proxy): past it, the connections holding the most are
// closed, largest first, until serve is back under it, and one line says so.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { RegistryServer } from '../../src/server/index.js';
import { until } from '../support/wait.js';
import { cleanup, connectPastInit, registerText, roundTrip, serve } from './helpers.js';

const WAIT_MS = 15_000;
const MB = 1024 * 1024;
const children: ChildProcess[] = [];
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await cleanup();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

/** ~4 MB of nodes: every init and list_nodes reply is that large, more than a socket's kernel buffers take. */
function fill(s: RegistryServer): number {
  s.registry.restore(
    Array.from({ length: 1000 }, (_, i) => ({ id: `n${i}`, machine: 'box', cwd: `/${'d'.repeat(4000)}`, port: i, status: 'offline' })),
    [],
  );
  return Buffer.byteLength(JSON.stringify(s.registry.listNodes()));
}

/** A registry client that never reads, after asking list_nodes `n` times. */
async function deafAsking(url: string, n: number): Promise<WebSocket> {
  const ws = new WebSocket(url);
  sockets.push(ws);
  ws.on('error', () => {});
  ws.once('upgrade', (res) => res.socket.pause());
  await new Promise((resolve) => ws.once('open', resolve));
  for (let i = 0; i < n; i++) ws.send(`{"id":"l${i}","method":"list_nodes"}`);
  return ws;
}

describe('the budget of all unsent bytes', () => {
  it('closes the registry client holding the most first, only as many as it takes, with one line', async () => {
    const lines: string[] = [];
    // Replies are not held back per client here, so each holds what it asked for.
    const s = await serve({ quiet: false, log: (l) => lines.push(l), readPauseBytes: 256 * MB, bufferBudget: 20 * MB });
    const reply = fill(s);
    await deafAsking(s.url, 1);
    await until(() => s.peerStats().length === 1 && s.peerStats()[0]!.buffered > reply || undefined, WAIT_MS, 'the first client holds its reply');
    await deafAsking(s.url, 3);
    await until(() => (s.peerStats()[1]?.buffered ?? 0) > 3 * reply || undefined, WAIT_MS, 'the second client holds its replies');
    await deafAsking(s.url, 2); // now ~4 (init, shared) + 4 + 12 + 8 MB: over 20
    await until(() => lines.find((l) => l.includes('over the budget')), WAIT_MS, 'the budget line');
    expect(lines.filter((l) => l.includes('over the budget'))).toEqual([
      expect.stringMatching(/^serve: \d+ bytes unsent in all, over the budget of 20971520: closed the largest first: connection 2 \(\d+ bytes\)$/),
    ]);
    // Seen from serve's side: a client that does not read does not see its close either.
    await until(() => !s.peerStats().some((p) => p.serial === 2) || undefined, WAIT_MS, 'the client holding the most is closed');
    expect(s.peerStats().map((p) => p.serial)).toEqual([1, 3]);
    expect(s.bufferedBytes()).toBeLessThanOrEqual(20 * MB);
    const other = await connectPastInit(s.url, { maxPayload: 64 * MB });
    await roundTrip(other, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 1000, version: '0.1.0' } });
  });

  it('counts both sides of an agent proxy: one whose Pi-DE never reads is closed past it, with the line', async () => {
    const lines: string[] = [];
    const agent = fork(fileURLToPath(new URL('../support/pide-agent.mjs', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    children.push(agent);
    const port = await new Promise<number>((resolve) => agent.once('message', (m) => resolve((m as { port: number }).port)));
    const s = await serve({ quiet: false, log: (l) => lines.push(l), proxyBufferLimit: 4 * MB, proxyHardLimit: 64 * MB, bufferBudget: MB });
    const registering = await connectPastInit(s.url);
    await roundTrip(registering, registerText('r', { id: 'a1', machine: '127.0.0.1', cwd: '/w', port, status: 'active' }), { id: 'r', result: { status: 'registered' } });
    const view = new WebSocket(`ws://127.0.0.1:${s.port}/ws/agent/a1`);
    sockets.push(view);
    view.on('error', () => {});
    await new Promise<void>((resolve) => view.once('upgrade', (res) => (res.socket.pause(), resolve())));
    await until(() => s.proxyStats()[0]?.state === 'relaying' || undefined, WAIT_MS, 'the proxy relays');
    agent.send({ id: 1, cmd: 'flood', frameBytes: 64 * 1024, cap: 8 * MB });
    await until(() => lines.find((l) => l.includes('over the budget')), WAIT_MS, 'the budget line');
    expect(lines.filter((l) => l.includes('over the budget'))).toEqual([
      expect.stringMatching(/^serve: \d+ bytes unsent in all, over the budget of 1048576: closed the largest first: proxy to a1 \(\d+ bytes\)$/),
    ]);
    await until(() => s.proxyStats().length === 0 || undefined, WAIT_MS, 'the proxy is gone');
  });
});

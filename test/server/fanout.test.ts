// Events and init go out in flushes (fanout.ts): the events of requests handled together reach
// each client in one write (counted in write system calls of a serve process of its own), and a
// client that connects meanwhile gets an init that holds every change before it and then only
// the events after it.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { MeasuredChild } from '../support/measured-child.js';
import { describeOn } from '../support/platform.js';
import { cleanup, connect, connectPastInit, node, registerText, serve, type RawClient } from './helpers.js';

let child: MeasuredChild | undefined;

afterEach(async () => {
  await cleanup();
  await child?.stop();
  child = undefined;
});

/** Write-like system calls a process made so far (write, writev, send...). */
function writeCalls(pid: number): number {
  return Number(/^syscw:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1]);
}

const WAIT_MS = 15_000;
const BURST = 50;

/** Sends these frames in one TCP write: serve reads them in one go. */
function inOneWrite(ws: WebSocket, texts: readonly string[]): void {
  const socket = (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
  socket.cork();
  for (const text of texts) ws.send(text);
  socket.uncork();
}

async function joinedIds(client: RawClient, n: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < n) ids.push((JSON.parse(await client.next('event', WAIT_MS)) as { node: { id: string } }).node.id);
  return ids;
}

const registers = Array.from({ length: BURST }, (_, i) => registerText(`r${i}`, node(`n${i}`, { port: 9000 + i })));

describeOn(['linux'], 'write system calls are counted from /proc/<pid>/io')('a burst of registers', () => {
  it('reaches every client in one write of all its events, not one write per event', async () => {
    child = new MeasuredChild('./serve-child.mjs', ['{}']);
    const { url } = await child.ready<{ url: string }>();
    const pid = child.child.pid!;
    const watchers = await Promise.all(Array.from({ length: 5 }, () => connectPastInit(url)));
    const agent = await connectPastInit(url);
    // Every client has its init: the last one's answer to a request comes after it.
    agent.send('{"id":"p","method":"ping"}');
    await agent.reply(WAIT_MS);
    const before = writeCalls(pid);
    inOneWrite(agent.ws, registers);
    for (const w of watchers) expect(await joinedIds(w, BURST)).toEqual(registers.map((_, i) => `n${i}`));
    await joinedIds(agent, BURST);
    const calls = writeCalls(pid) - before;
    // 50 replies to the agent, and one write of the 50 events to each of the 6 clients (not 300).
    expect(calls).toBeLessThan(BURST + 6 + BURST);
  });
});

describe('a burst of registers and a client that connects', () => {
  it('gives a client that connects during it every node once: in its init, or in an event after it', async () => {
    const s = await serve();
    const agent = await connectPastInit(s.url);
    inOneWrite(agent.ws, registers.slice(0, BURST / 2));
    const late = await connect(s.url); // its init comes with a flush, after or between the two halves
    inOneWrite(agent.ws, registers.slice(BURST / 2));
    const init = JSON.parse(await late.next('event', WAIT_MS)) as { nodes: { id: string }[] };
    const inInit = init.nodes.map((n) => n.id);
    const after = await joinedIds(late, BURST - inInit.length);
    expect([...inInit, ...after].sort()).toEqual(registers.map((_, i) => `n${i}`).sort());
    await late.expectSilence(200);
  });
});

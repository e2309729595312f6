// Shared helpers for the registry server tests: real servers on 127.0.0.1 port 0, raw ws
// clients that record every frame, and a fake clock the tests advance by hand.
import { expect } from 'vitest';
import { WebSocket, type ClientOptions } from 'ws';
import { startRegistryServer, type RegistryServer, type RegistryServerOptions } from '../../src/server/index.js';

/** 2023-11-14T22:13:20Z: a whole second, so Unix-second timestamps are exact. */
export const T0_MS = 1_700_000_000_000;
export const T0 = T0_MS / 1000;

export class FakeClock {
  ms = T0_MS;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type FrameKind = 'any' | 'event' | 'reply';

export interface RawClient {
  readonly ws: WebSocket;
  /** The next frame not yet read, of that kind, as the exact text the server sent. */
  next(kind?: FrameKind, timeoutMs?: number): Promise<string>;
  /** The next response, skipping (but keeping for `next('event')`) the events before it. */
  reply(timeoutMs?: number): Promise<string>;
  send(text: string): void;
  /** Resolves when no unread frame is there after `ms`; fails with the frames otherwise. */
  expectSilence(ms?: number): Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

const opened: WebSocket[] = [];
const servers: RegistryServer[] = [];

/** Closes every client and server a test opened. Call from afterEach. */
export async function cleanup(): Promise<void> {
  for (const ws of opened.splice(0)) ws.terminate();
  await Promise.all(servers.splice(0).map((s) => s.close()));
}

export async function serve(opts: RegistryServerOptions = {}): Promise<RegistryServer> {
  const server = await startRegistryServer({ host: '127.0.0.1', port: 0, quiet: true, ...opts });
  servers.push(server);
  return server;
}

interface Frame {
  readonly text: string;
  readonly isEvent: boolean;
  taken: boolean;
}

function matches(frame: Frame, kind: FrameKind): boolean {
  return !frame.taken && (kind === 'any' || (kind === 'event') === frame.isEvent);
}

export function connect(url: string, opts: ClientOptions = {}): Promise<RawClient> {
  const ws = new WebSocket(url, opts);
  opened.push(ws);
  const frames: Frame[] = [];
  const waiters: { kind: FrameKind; resolve: (text: string) => void }[] = [];
  const take = (kind: FrameKind): string | undefined => {
    const frame = frames.find((f) => matches(f, kind));
    if (!frame) return undefined;
    frame.taken = true;
    return frame.text;
  };
  ws.on('message', (data: Buffer) => {
    const text = data.toString('utf8');
    frames.push({ text, isEvent: 'event' in (JSON.parse(text) as object), taken: false });
    for (const waiter of [...waiters]) {
      const got = take(waiter.kind);
      if (got === undefined) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(got);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
  });
  const next = (kind: FrameKind = 'any', timeoutMs = 2000): Promise<string> => {
    const ready = take(kind);
    if (ready !== undefined) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const waiter = {
        kind,
        resolve: (text: string) => {
          clearTimeout(timer);
          resolve(text);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no ${kind} frame within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.push(waiter);
    });
  };
  const client: RawClient = {
    ws,
    closed,
    next,
    reply: (timeoutMs) => next('reply', timeoutMs),
    send(text) {
      ws.send(text);
    },
    async expectSilence(ms = 300) {
      await sleepMs(ms);
      expect(frames.filter((f) => !f.taken).map((f) => f.text)).toEqual([]);
    },
    async close() {
      if (ws.readyState !== WebSocket.CLOSED) ws.close();
      await closed;
    },
  };
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
  });
}

/** A client with the init frame already read. */
export async function connectPastInit(url: string, opts: ClientOptions = {}): Promise<RawClient> {
  const client = await connect(url, opts);
  await client.next();
  return client;
}

/** A WebSocket attempt the server refuses: the HTTP status and body it answered with. */
export function refusal(url: string): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url);
  opened.push(ws);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('error', () => {}); // ws reports the refusal as an error after unexpected-response
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
  });
}

function keysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(keysDeep);
  if (typeof value !== 'object' || value === null) return null;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, keysDeep(v)]));
}

/** The frame is exactly `expected`: same values, same keys (none extra, none null), same text. */
export function expectFrame(text: string, expected: unknown): void {
  const parsed: unknown = JSON.parse(text);
  expect(parsed).toEqual(expected);
  expect(keysDeep(parsed)).toStrictEqual(keysDeep(expected));
  expect(text).toBe(JSON.stringify(expected));
}

/** Sends `request` and asserts the exact reply (events that arrive meanwhile stay unread). */
export async function roundTrip(client: RawClient, request: string, expected: unknown): Promise<void> {
  client.send(request);
  expectFrame(await client.reply(), expected);
}

export function node(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, machine: 'box', cwd: '/work', port: 9000, status: 'active', ...extra };
}

export function registerText(reqId: string, params: Record<string, unknown>): string {
  return JSON.stringify({ id: reqId, method: 'register', params });
}

/** A registered node as the server stores it at T0 (clock not advanced). */
export function stored(params: Record<string, unknown>, at = T0): Record<string, unknown> {
  const { id, machine, cwd, port, pid, pid_started_at } = params;
  const out: Record<string, unknown> = { id, machine, cwd, port, status: 'active' };
  if (pid !== undefined) out.pid = pid;
  out.last_seen = at;
  out.registered_at = at;
  if (pid_started_at !== undefined) out.pid_started_at = pid_started_at;
  return out;
}

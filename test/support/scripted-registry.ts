// A registry whose every frame the test decides: a real ws server on 127.0.0.1 (random port)
// for the cases a well-behaved registry never produces (garbage, silence, 401, huge frames).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

export interface ScriptedRegistry {
  readonly url: string;
  readonly port: number;
  /** Every request the clients sent, parsed. */
  readonly requests: { method: string; id: unknown; params?: unknown }[];
  /** Every upgrade attempt's URL (path + query). */
  readonly upgrades: string[];
  sockets(): WebSocket[];
  send(frame: unknown): void;
  close(): Promise<void>;
}

export interface Script {
  /** First frame on connect; default an empty init with claims. */
  init?: (req: IncomingMessage) => unknown;
  /** Answer a request; return undefined to stay silent. */
  answer?: (req: { id: unknown; method: string; params?: unknown }, ws: WebSocket) => unknown;
  /** Refuse upgrades with this HTTP status. */
  refuse?: number;
}

export async function startScriptedRegistry(script: Script = {}, port = 0): Promise<ScriptedRegistry> {
  const requests: ScriptedRegistry['requests'] = [];
  const upgrades: string[] = [];
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  http.on('upgrade', (req, socket, head) => {
    upgrades.push(req.url ?? '');
    if (script.refuse) {
      socket.end(`HTTP/1.1 ${script.refuse} Refused\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const init = script.init ? script.init(req) : { event: 'init', nodes: [], protocol_version: '1', claims: [] };
      if (init !== undefined) ws.send(typeof init === 'string' ? init : JSON.stringify(init));
      ws.on('message', (data) => {
        let req: { id: unknown; method: string; params?: unknown };
        try {
          req = JSON.parse(String(data));
        } catch {
          return;
        }
        requests.push(req);
        const answer = script.answer?.(req, ws);
        if (answer !== undefined) ws.send(typeof answer === 'string' ? answer : JSON.stringify(answer));
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const actual = (http.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${actual}/ws`,
    port: actual,
    requests,
    upgrades,
    sockets: () => [...wss.clients],
    send(frame) {
      const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
      for (const ws of wss.clients) ws.send(text);
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

export { until } from './wait.js';

export const node = (id: string, fields: Record<string, unknown> = {}) => ({
  id,
  machine: 'devbox',
  cwd: '/repo',
  port: 4000,
  status: 'active',
  last_seen: 1_800_000_000,
  ...fields,
});

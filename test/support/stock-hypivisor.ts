// A stand-in for a STOCK hypivisor (csells/hyper-pi at da01fe7), written from protocols.md §1 and
// nothing else: none of ghostwatch serve's §2 extensions (no registered_at, no pid_started_at
// stamping, no claims: `list_claims` is "Method not found"), string ids only (a numeric id or
// invalid JSON is dropped without a reply), offline on socket close, machine:port eviction on
// register, a token compared after lenient percent-decoding. Tests run against it to prove that
// ghostwatch works unchanged against the real registry, not only against its own.
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';

type NodeInfo = Record<string, unknown> & { id: string; machine?: unknown; port?: unknown; status: string };

export interface StockHypivisor {
  readonly url: string;
  readonly port: number;
  readonly nodes: Map<string, NodeInfo>;
  close(): Promise<void>;
}

/** Lenient percent-decoding: a `%` not followed by two hex digits stays as it is. */
function decodeLeniently(text: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text.slice(i + 1, i + 3);
    if (text[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** `tls`: serve wss:// with this key and certificate (PEM). */
export async function startStockHypivisor(opts: { token?: string; tls?: { key: string; cert: string } } = {}): Promise<StockHypivisor> {
  const nodes = new Map<string, NodeInfo>();
  const owner = new Map<WebSocket, string>();
  const now = () => Math.floor(Date.now() / 1000);
  const notFound = (_req: unknown, res: { writeHead(code: number): { end(): void } }) => res.writeHead(404).end();
  const http: Server = opts.tls ? createTlsServer(opts.tls, notFound) : createServer(notFound);
  const wss = new WebSocketServer({ noServer: true });
  const broadcast = (frame: object) => {
    const text = JSON.stringify(frame);
    for (const c of wss.clients) if (c.readyState === WebSocket.OPEN) c.send(text);
  };
  const remove = (id: string) => {
    if (nodes.delete(id)) broadcast({ event: 'node_removed', id });
  };

  http.on('upgrade', (req, socket, head) => {
    const [path, query = ''] = (req.url ?? '/').split('?');
    if (opts.token) {
      const raw = /(?:^|&)token=([^&]*)/.exec(query)?.[1];
      if (raw === undefined || decodeLeniently(raw) !== opts.token) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        return;
      }
    }
    if (path !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ event: 'init', nodes: [...nodes.values()], protocol_version: '1' }));
      ws.on('ping', () => {
        const id = owner.get(ws);
        const n = id === undefined ? undefined : nodes.get(id);
        if (n) n.last_seen = now();
      });
      ws.on('message', (data) => {
        let m: { id?: unknown; method?: unknown; params?: Record<string, unknown> };
        try {
          m = JSON.parse(String(data));
        } catch {
          return; // dropped silently
        }
        if (typeof m.id !== 'string' || typeof m.method !== 'string') return;
        const reply = (body: object) => ws.send(JSON.stringify({ id: m.id, ...body }));
        const p = m.params;
        switch (m.method) {
          case 'list_nodes':
            return reply({ result: [...nodes.values()] });
          case 'ping':
            return reply({ result: { status: 'healthy', nodes: nodes.size, version: '0.1.0' } });
          case 'register': {
            if (!p) return reply({ error: 'Missing params' });
            if (typeof p.id !== 'string' || typeof p.status !== 'string') return reply({ error: 'Invalid node info' });
            for (const other of [...nodes.values()]) {
              if (other.id !== p.id && other.machine === p.machine && other.port === p.port) remove(other.id);
            }
            const node: NodeInfo = { ...(p as NodeInfo), status: 'active', last_seen: now() };
            delete node.offline_since;
            nodes.set(node.id, node);
            owner.set(ws, node.id);
            reply({ result: { status: 'registered' } });
            return broadcast({ event: 'node_joined', node });
          }
          case 'deregister': {
            if (!p || typeof p.id !== 'string') return reply({ error: 'Missing params.id' });
            const mine = owner.get(ws);
            if (mine !== undefined && mine !== p.id) return reply({ error: 'Unauthorized: cannot deregister another node' });
            if (!nodes.has(p.id)) return reply({ result: { status: 'not_found' } });
            remove(p.id);
            return reply({ result: { status: 'deregistered' } });
          }
          default:
            return reply({ error: `Method not found: ${m.method}` });
        }
      });
      ws.on('close', () => {
        const id = owner.get(ws);
        owner.delete(ws);
        const n = id === undefined ? undefined : nodes.get(id);
        if (!n || [...owner.values()].includes(n.id)) return;
        n.status = 'offline';
        n.offline_since = now();
        broadcast({ event: 'node_offline', id: n.id });
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? 'wss' : 'ws'}://127.0.0.1:${port}/ws`,
    port,
    nodes,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

// A hostile hypivisor for the flood figures: a raw `ws` server speaking the registry's protocol
// (protocols.md §1) that answers each client's connect with an `init` of many nodes, then pushes
// node_joined / node_offline / node_removed events at the rate a control connection asks for
// (method `bench_flood`), to every client. It keeps its table as the events say, so a re-sync's list_nodes agrees with them.
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FloodOptions {
  readonly nodes: number;
  /** Pids of this host's live processes and of dead ones: a tenth of the nodes are this host's, on these. */
  readonly livePids: readonly number[];
  readonly deadPids: readonly number[];
}

interface NodeInfo {
  id: string;
  machine: string;
  cwd: string;
  port: number;
  status: 'active' | 'offline';
  pid?: number | undefined;
  last_seen: number;
  offline_since?: number | undefined;
}

/** Events are sent in batches this far apart (the count due by the clock, so a late tick catches up). */
const TICK_MS = 10;

export class FloodRegistry {
  private readonly wss: WebSocketServer;
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly ids: string[] = [];
  private readonly controls = new Set<WebSocket>();
  private timer: NodeJS.Timeout | undefined;
  private nextId = 0;
  private seed = 7;
  /** Events sent over every connection, and when the first and the last went. */
  sent = 0;
  private firstAt = 0;
  private lastAt = 0;

  private constructor(
    private readonly opts: FloodOptions,
    wss: WebSocketServer,
  ) {
    this.wss = wss;
    for (let i = 0; i < opts.nodes; i++) this.add();
    wss.on('connection', (ws, req) => this.serve(ws, req.url?.includes('bench-control') === true));
  }

  static async start(opts: FloodOptions): Promise<FloodRegistry> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws' });
    await new Promise<void>((resolve, reject) => wss.once('listening', resolve).once('error', reject));
    return new FloodRegistry(opts, wss);
  }

  get url(): string {
    const address = this.wss.address();
    if (address === null || typeof address === 'string') throw new Error('the flood registry is not listening on a port');
    return `ws://127.0.0.1:${address.port}/ws`;
  }

  async close(): Promise<void> {
    this.setRate(0);
    for (const ws of this.wss.clients) ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  get sentPerSecond(): number {
    return this.lastAt > this.firstAt ? Math.round(this.sent / ((this.lastAt - this.firstAt) / 1000)) : 0;
  }

  private random(): number {
    this.seed = (Math.imul(this.seed, 1_664_525) + 1_013_904_223) >>> 0;
    return this.seed / 2 ** 32;
  }

  /** A new node: a tenth of them this host's (live or dead pids), the rest spread over other machines. */
  private add(): NodeInfo {
    const n = this.nextId++;
    const { livePids, deadPids } = this.opts;
    const local = n % 10 === 0;
    const pid = local ? (n % 30 === 0 ? deadPids[n % deadPids.length] : livePids[n % livePids.length]) : 100_000 + n;
    const node: NodeInfo = {
      id: this.uuid(n),
      machine: local ? hostname() : `host-${n % 211}.example`,
      // The agent's number in its folder: the monitor side reads the cursor's row by it.
      cwd: `/home/dev/work/agent-${n}`,
      port: 20_000 + (n % 40_000),
      status: 'active',
      pid,
      last_seen: Math.floor(Date.now() / 1000),
    };
    this.nodes.set(node.id, node);
    this.ids.push(node.id);
    return node;
  }

  /**
   * A session id shaped as pi's (UUIDv7): its first 12 hex digits a creation time in ms, so ids
   * of sessions started close together share their start, as real ones do; the rest random.
   */
  private uuid(n: number): string {
    const hex = (digits: number) => Math.floor(this.random() * 16 ** digits).toString(16).padStart(digits, '0');
    const ms = (1_770_000_000_000 + n * 1_000).toString(16).padStart(12, '0');
    return `${ms.slice(0, 8)}-${ms.slice(8)}-7${hex(3)}-${(8 + Math.floor(this.random() * 4)).toString(16)}${hex(3)}-${hex(6)}${hex(6)}`;
  }

  private pick(): NodeInfo | undefined {
    // ids of removed nodes stay in the array until picked: then they are swapped out.
    while (this.ids.length > 0) {
      const at = Math.floor(this.random() * this.ids.length);
      const node = this.nodes.get(this.ids[at]!);
      if (node) return node;
      this.ids[at] = this.ids[this.ids.length - 1]!;
      this.ids.pop();
    }
    return undefined;
  }

  /** One event, applied to the table, as its frame. Roughly as many join as leave, so the table keeps its size. */
  private nextEvent(): string {
    const roll = this.random();
    const node = this.pick();
    const now = Math.floor(Date.now() / 1000);
    if (!node || roll < 0.15) return JSON.stringify({ event: 'node_joined', node: this.add() });
    if (roll < 0.3) {
      this.nodes.delete(node.id);
      return JSON.stringify({ event: 'node_removed', id: node.id });
    }
    if (roll < 0.65 && node.status === 'active') {
      node.status = 'offline';
      node.offline_since = now;
      return JSON.stringify({ event: 'node_offline', id: node.id });
    }
    // A re-registration: active again, seen now.
    node.status = 'active';
    node.offline_since = undefined;
    node.last_seen = now;
    return JSON.stringify({ event: 'node_joined', node });
  }

  /** Events a second from now on, to every client (0 stops the flood); the control connection asks with `bench_flood`. */
  setRate(eventsPerSecond: number): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (eventsPerSecond <= 0) return;
    const t0 = performance.now();
    let sentHere = 0;
    this.firstAt ||= t0;
    this.timer = setInterval(() => {
      const now = performance.now();
      const due = Math.floor(((now - t0) / 1000) * eventsPerSecond);
      for (; sentHere < due; sentHere++, this.sent++) {
        const frame = this.nextEvent();
        for (const ws of this.wss.clients) if (ws.readyState === ws.OPEN && !this.controls.has(ws)) ws.send(frame);
      }
      this.lastAt = now;
    }, TICK_MS);
  }

  /** `control`: the bench's own connection (`/ws?bench-control`), which gets no init and no events. */
  private serve(ws: WebSocket, control: boolean): void {
    if (control) this.controls.add(ws);
    ws.on('message', (data) => {
      let request: { id?: unknown; method?: unknown; params?: { eventsPerSecond?: unknown } };
      try {
        request = JSON.parse(String(data)) as typeof request;
      } catch {
        return; // hypivisor drops invalid JSON silently
      }
      if (typeof request.id !== 'string') return;
      if (request.method === 'bench_flood' && control) this.setRate(Number(request.params?.eventsPerSecond ?? 0));
      const reply =
        request.method === 'list_nodes'
          ? { id: request.id, result: [...this.nodes.values()] }
          : request.method === 'ping'
            ? { id: request.id, result: { status: 'healthy', nodes: this.nodes.size, version: '0.1.0' } }
            : request.method === 'bench_flood'
              ? { id: request.id, result: { status: 'ok' } }
              : { id: request.id, error: `Method not found: ${String(request.method)}` };
      ws.send(JSON.stringify(reply));
    });
    ws.once('close', () => this.controls.delete(ws));
    if (!control) ws.send(JSON.stringify({ event: 'init', nodes: [...this.nodes.values()], protocol_version: '1' }));
  }
}

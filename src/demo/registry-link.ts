// One demo agent's connection to the registry, the way pi-socket holds one: its own WebSocket,
// `register` with its NodeInfo, WebSocket ping frames as heartbeats, and the socket kept open.
// A connection speaks for the one id it last registered (protocols.md §1), so an agent that
// stands for several entries opens one link per entry.
import WebSocket from 'ws';

export interface DemoNode {
  readonly id: string;
  readonly machine: string;
  readonly cwd: string;
  readonly port: number;
  readonly status: 'active';
  readonly pid?: number;
  /** Unix ms: when the process behind `pid` started (ghostwatch's extension, protocols.md §2). */
  readonly pid_started_at?: number;
}

const REQUEST_TIMEOUT_MS = 5_000;
/** pi-socket pings every 30 s; the demo pings more often so `last_seen` visibly moves. */
export const HEARTBEAT_MS = 10_000;

export class RegistryLink {
  private seq = 0;
  private readonly waiting = new Map<string, (answer: { result?: unknown; error?: unknown }) => void>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly removedListeners = new Set<() => void>();
  /** The id this connection last registered. */
  registeredId: string | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => this.receive(String(data)));
    ws.on('close', () => {
      this.stopHeartbeat();
      for (const answer of this.waiting.values()) answer({ error: 'connection closed' });
      this.waiting.clear();
    });
    ws.on('error', () => {}); // a refused or reset connection ends in 'close', which is handled
  }

  static open(url: string): Promise<RegistryLink> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`no connection to ${url} within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      ws.once('open', () => {
        clearTimeout(timer);
        resolve(new RegistryLink(ws));
      });
      ws.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  private receive(text: string): void {
    let frame: { id?: unknown; event?: unknown; result?: unknown; error?: unknown };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    if (frame.event === 'node_removed' && 'id' in frame && frame.id === this.registeredId && this.registeredId !== undefined) {
      for (const listener of this.removedListeners) listener();
      return;
    }
    if (frame.event !== undefined || typeof frame.id !== 'string') return;
    const answer = this.waiting.get(frame.id);
    if (!answer) return;
    this.waiting.delete(frame.id);
    answer(frame);
  }

  /** One request; resolves with its result, rejects with the registry's error text or a timeout. */
  request(method: string, params?: unknown): Promise<unknown> {
    // The id must be a JSON string: hypivisor drops numeric ids without a reply.
    const id = `demo-${++this.seq}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: no answer within ${REQUEST_TIMEOUT_MS} ms`));
      }, REQUEST_TIMEOUT_MS);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.error !== undefined) reject(new Error(`${method}: ${String(answer.error)}`));
        else resolve(answer.result);
      });
      this.ws.send(JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  async register(node: DemoNode): Promise<void> {
    await this.request('register', node);
    this.registeredId = node.id;
  }

  /** A claim held by the id this link registered (the registry refuses any other holder). */
  async claim(resource: string): Promise<void> {
    await this.request('claim', { resource, holder: this.registeredId });
  }

  async deregister(): Promise<void> {
    if (this.registeredId !== undefined && this.open) await this.request('deregister', { id: this.registeredId });
  }

  /** Called when the registry removes this link's node (someone evicted it, or the sweep). */
  onRemoved(listener: () => void): void {
    this.removedListeners.add(listener);
  }

  startHeartbeat(everyMs = HEARTBEAT_MS): void {
    this.stopHeartbeat();
    this.heartbeatTimer = setInterval(() => {
      if (this.open) this.ws.ping();
    }, everyMs);
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  /** A normal close (the registry marks the node offline); terminated if it takes too long. */
  close(): Promise<void> {
    this.stopHeartbeat();
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const force = setTimeout(() => this.ws.terminate(), 1_000);
      this.ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      this.ws.close(1000, 'agent done');
    });
  }
}

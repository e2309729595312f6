// Nodes registered on a real `ghostwatch serve` over the wire, as agents do: one connection
// that registers them (and stays open, so they stay active), and an admin connection that
// never registers (so it may deregister anything, like the monitor).
import { WebSocket } from 'ws';

export interface NodeParams {
  readonly id: string;
  readonly machine: string;
  readonly cwd: string;
  readonly port: number;
  readonly pid?: number | undefined;
  /** Unix ms: the process's start time as the agent read it (ghostwatch serve's extension). */
  readonly pid_started_at?: number | undefined;
}

export interface WireClient {
  /** Sends one request and resolves with its result (or rejects with its error string). */
  call(method: string, params?: object): Promise<unknown>;
  close(): void;
}

export async function openClient(url: string): Promise<WireClient> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const waiting = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: string; event?: string; result?: unknown; error?: string };
    if (message.event !== undefined || message.id === undefined) return;
    const w = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error !== undefined) w?.reject(new Error(message.error));
    else w?.resolve(message.result);
  });
  let serial = 0;
  return {
    call(method, params) {
      const id = `b-${++serial}`;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        ws.send(JSON.stringify({ id, method, ...(params ? { params } : {}) }));
      });
    },
    close: () => ws.terminate(),
  };
}

/** Registers every node on one connection (pipelined) and resolves once every one is answered. */
export async function registerNodes(client: WireClient, nodes: readonly NodeParams[]): Promise<void> {
  await Promise.all(nodes.map((n) => client.call('register', { ...n, status: 'active' })));
}

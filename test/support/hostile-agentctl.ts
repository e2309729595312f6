// An agentctl daemon (protocols.md §3: one unix socket, newline-delimited JSON) whose every
// string is the test's: records, locks, warnings, and an error for every change it is asked for.
import { rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';

export interface HostileDaemon {
  readonly socketPath: string;
  close(): Promise<void>;
}

export async function startHostileAgentctl(
  socketPath: string,
  lists: { sessions: unknown[]; locks: unknown[]; warnings: string[] },
  refusal: { code: string; message: string },
): Promise<HostileDaemon> {
  const conns = new Set<Socket>();
  const server = createServer((conn) => {
    conns.add(conn);
    conn.on('close', () => conns.delete(conn));
    conn.on('error', () => undefined);
    conn.setEncoding('utf8');
    let buffer = '';
    conn.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const req = JSON.parse(buffer.slice(0, nl)) as { id: string; method: string };
        buffer = buffer.slice(nl + 1);
        const reply =
          req.method === 'session.list'
            ? { id: req.id, result: { sessions: lists.sessions, warnings: lists.warnings } }
            : req.method === 'lock.list'
              ? { id: req.id, result: lists.locks }
              : { id: req.id, error: refusal };
        conn.write(`${JSON.stringify(reply)}\n`);
      }
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, () => resolve()));
  return {
    socketPath,
    async close() {
      for (const c of conns) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(socketPath, { force: true });
    },
  };
}

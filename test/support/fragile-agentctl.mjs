// A stand-in for the agentctl daemon's socket server that is as fragile as the real one
// (OrgLoop/agentctl v1.9.1, src/daemon/server.ts): no 'error' handler on client sockets, so a
// reply written to a client that has closed is an unhandled EPIPE and the process dies. Its
// adapters are synchronous here: each request keeps the event loop busy for BUSY_MS before the
// reply is written, so the reply goes out before the daemon has read the client's close (the
// race that crashed the real daemon). Run as its own process: `node fragile-agentctl.mjs <socket>`;
// prints "ready" once listening, "received <method>" as it reads a request and "replied <method>" after each reply it writes. Plain JS (no build step) so a test can start it with node.
import { createServer } from 'node:net';

const socketPath = process.argv[2];
const busyMs = Number(process.env.BUSY_MS ?? 300);
const sessions = JSON.parse(process.env.SESSIONS ?? '[]');

function answer(method) {
  if (method === 'session.list') return { result: sessions };
  if (method === 'lock.list') return { result: [] };
  if (method === 'session.prune') return { result: { pruned: 0 } };
  return { error: { code: 'ERR', message: `Unknown method: ${method}` } };
}

const server = createServer((conn) => {
  let buffer = '';
  conn.on('data', (chunk) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      let req;
      try {
        req = JSON.parse(line);
      } catch {
        continue; // malformed: no reply
      }
      process.stdout.write(`received ${req.method}\n`);
      const until = Date.now() + busyMs;
      while (Date.now() < until); // a synchronous adapter scan
      conn.write(`${JSON.stringify({ id: req.id, ...answer(req.method) })}\n`);
      process.stdout.write(`replied ${req.method}\n`);
    }
  });
});
server.listen(socketPath, () => process.stdout.write('ready\n'));

// A stand-in for a real pi agent with the pi-socket extension, as protocols.md §1 "What real pi
// agents do" describes it — one process that:
//   - serves its own WebSocket endpoint (127.0.0.1, port from PI_SOCKET_PORT or a free one),
//   - connects to the registry itself and sends `register` with id (UUIDv7), machine
//     (os.hostname()), cwd, port, status "active" and its own pid — never pid_started_at,
//   - sends a WebSocket ping frame every 30 s,
//   - on SIGINT (pi's clean exit path here) sends `deregister`, waits for the answer, closes;
//   - on SIGKILL, SIGTERM or SIGHUP sends nothing: the kernel closes the socket;
//   - on SIGUSR1 (a test hook) drops its registry connection and lives on.
// Usage: node pi-agent.mjs <registry ws url> [--no-pid] [--id ID] [--sessions N]
//   --no-pid      an agent from before pi-socket's 2026-02-23 change: no pid, no pings
//   --sessions N  N extension instances in this one process, each with its own endpoint and
//                 registry connection, registered 1.1 s apart (an old pi after /new: the previous
//                 session's instance lives on in the same process)
// Prints one JSON line {"registered": [ids...], "ports": [...], "pid": n} once the registry answered.
// It exits when its stdin closes, so a test that dies leaves no agent behind.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { WebSocket, WebSocketServer } = require('ws');

const [url, ...flags] = process.argv.slice(2);
const flag = (name) => (flags.includes(name) ? flags[flags.indexOf(name) + 1] : undefined);
const withPid = !flags.includes('--no-pid');
const sessions = Number(flag('--sessions') ?? 1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A UUIDv7: 48 bits of Unix ms, then random bits with the version and variant set. */
function uuidv7() {
  const b = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** One pi-socket instance: its endpoint, its registry connection, its registration. */
async function instance(id) {
  const server = new WebSocketServer({ host: '127.0.0.1', port: Number(process.env.PI_SOCKET_PORT ?? 0) });
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  server.on('connection', (ws) => ws.on('message', (data, binary) => ws.send(data, { binary }))); // echo, like an agent answering
  const port = server.address().port;

  const registry = new WebSocket(url);
  await new Promise((resolve, reject) => registry.once('open', resolve).once('error', reject));
  const answers = new Map();
  registry.on('message', (data) => {
    let m;
    try {
      m = JSON.parse(String(data));
    } catch {
      return;
    }
    if (typeof m.id === 'string' && answers.has(m.id)) answers.get(m.id)(m);
  });
  const call = (rid, method, params) =>
    new Promise((resolve) => {
      answers.set(rid, resolve);
      registry.send(JSON.stringify({ id: rid, method, params }));
    });
  const node = { id, machine: hostname(), cwd: process.cwd(), port, status: 'active', ...(withPid ? { pid: process.pid } : {}) };
  const reply = await call('reg', 'register', node);
  if (reply.error !== undefined) {
    process.stderr.write(`register refused: ${reply.error}\n`);
    process.exit(3);
  }
  if (withPid) setInterval(() => registry.ping(), 30_000);
  return { id, port, registry, call };
}

const started = [];
for (let i = 0; i < sessions; i++) {
  if (i > 0) await sleep(1_100); // the registry's clock has seconds: the next registration is newer
  started.push(await instance(i === 0 ? (flag('--id') ?? uuidv7()) : uuidv7()));
}
process.stdout.write(`${JSON.stringify({ registered: started.map((s) => s.id), ports: started.map((s) => s.port), pid: process.pid })}\n`);

process.on('SIGINT', async () => {
  for (const s of started) await s.call('dereg', 'deregister', { id: s.id });
  for (const s of started) s.registry.close();
  process.exit(0);
});
// Test hook: lose the registry connection while the process runs on (a network drop, seen from here).
process.on('SIGUSR1', () => {
  for (const s of started) s.registry.terminate();
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();

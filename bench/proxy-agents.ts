// Agents behind serve's `/ws/agent/<id>` proxy for the serve load figures, in a process of their
// own (node dist/bench/proxy-agents.js '{"flood":N,"deaf":N,"frameBytes":B}'): WebSocket servers
// on loopback, one per agent. A flooding agent sends `frameBytes` frames to whoever connects as
// fast as its socket takes them and never reads; a deaf agent never reads and sends nothing.
// Tells its parent the ports over IPC: {flood: number[], deaf: number[]}.
import { WebSocketServer, type WebSocket } from 'ws';
import { pumpFrames } from './flood-pump.js';

interface Options {
  readonly flood: number;
  readonly deaf: number;
  readonly frameBytes: number;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as Options;
// One frame for every send: server frames are not masked, so nothing is copied.
const frame = Buffer.alloc(opts.frameBytes, 0x61);

function flood(ws: WebSocket): void {
  pumpFrames(ws, frame, 2 * frame.length);
}

function listen(mode: 'flood' | 'deaf'): Promise<number> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 1024 });
  wss.on('connection', (ws) => {
    ws.pause(); // never reads
    ws.on('error', () => {});
    if (mode === 'flood') flood(ws);
  });
  return new Promise((resolve) => wss.once('listening', () => resolve((wss.address() as { port: number }).port)));
}

const ports = { flood: [] as number[], deaf: [] as number[] };
for (let i = 0; i < opts.flood; i++) ports.flood.push(await listen('flood'));
for (let i = 0; i < opts.deaf; i++) ports.deaf.push(await listen('deaf'));
process.send!(ports);
process.on('disconnect', () => process.exit(0));

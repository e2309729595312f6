// A stand-in for a pi agent's own WebSocket server (pi-socket listens on `port`; Pi-DE reaches it
// through the registry's /ws/agent/<id> proxy), in a child process of its own. It echoes small
// frames, and on IPC commands sends (big: one frame of any size), floods, stops reading, closes,
// and reports what it saw.
import { WebSocketServer } from 'ws';

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
const clients = new Set();
const closes = [];
const received = [];
let receivedBytes = 0;
let paused = false;
let flood;

wss.on('connection', (ws) => {
  clients.add(ws);
  if (paused) ws.pause();
  ws.on('message', (data, isBinary) => {
    receivedBytes += data.length;
    if (received.length < 50 && data.length <= 64) received.push(isBinary ? { binary: data.toString('hex') } : { text: data.toString('utf8') });
    if (data.length > 64) return;
    if (isBinary) ws.send(Buffer.concat([Buffer.from([0xec]), data]), { binary: true });
    else ws.send(`echo:${data.toString('utf8')}`);
  });
  ws.on('close', (code, reason) => {
    clients.delete(ws);
    closes.push({ code, reason: reason.toString('utf8') });
  });
});

/**
 * Sends frames of `frameBytes` to the first client while its unsent bytes stay under `cap`. One turn
 * sends at most twice `cap` (what the kernel's buffers take comes on top of `cap`): once serve
 * resets the connection mid-turn (its hard limit), the socket is destroyed, a send adds nothing to
 * `bufferedAmount` any more, and a loop "while under cap" never ended: this process answered no
 * IPC question again (the hard-limit test's timeout on CI). bench/flood-pump.ts is the same pump.
 */
function startFlood(frameBytes, cap) {
  const ws = [...clients][0];
  const frame = Buffer.alloc(frameBytes, 0x61);
  const burst = Math.ceil((2 * cap) / frameBytes);
  flood = { sent: 0, stuck: false, stopped: false };
  const state = flood;
  const pump = () => {
    if (state.stopped || ws.readyState !== ws.OPEN) return;
    for (let n = 0; n < burst && ws.bufferedAmount < cap; n++) {
      ws.send(frame, { binary: true });
      state.sent += frameBytes;
    }
    if (ws.bufferedAmount < cap) return void setImmediate(pump);
    state.stuck = true; // nothing more fits: whoever is downstream has stopped reading
    setTimeout(pump, 20);
  };
  pump();
}

const stats = () => {
  const ws = [...clients][0];
  return {
    clients: clients.size,
    closes,
    received,
    receivedBytes,
    bufferedAmount: ws ? ws.bufferedAmount : 0,
    flood: flood ? { sent: flood.sent, stuck: flood.stuck } : undefined,
  };
};

process.on('message', ({ id, cmd, ...args }) => {
  if (cmd === 'send') for (const ws of clients) ws.send(args.binary ? Buffer.from(args.hex, 'hex') : args.text, { binary: Boolean(args.binary) });
  if (cmd === 'flood') startFlood(args.frameBytes, args.cap);
  if (cmd === 'big') for (const ws of clients) ws.send(Buffer.alloc(args.bytes, 0x63), { binary: true });
  if (cmd === 'stopFlood' && flood) flood.stopped = true;
  if (cmd === 'pause') {
    paused = true;
    for (const ws of clients) ws.pause();
  }
  if (cmd === 'resume') {
    paused = false;
    for (const ws of clients) ws.resume();
  }
  if (cmd === 'close') for (const ws of clients) ws.close(args.code, args.reason);
  if (cmd === 'terminate') for (const ws of clients) ws.terminate();
  process.send({ id, stats: stats() });
});

wss.on('listening', () => process.send({ port: wss.address().port }));

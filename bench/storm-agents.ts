// A reconnect storm for the serve figures, in a process of its own (node dist/bench/storm-agents.js
// '{"url":…,"count":N}'): N agents open their registry connection at once, as after a registry
// restart, and each registers on open, as pi-socket does. Tells its parent over IPC when it starts
// ({startedAt}), when the last connection opened ({openedAt}) and when the last register was
// answered ({answeredAt}; Date.now()), or {error}.
import { WebSocket } from 'ws';
import { stormAgent } from './serve-process.js';

const { url, count } = JSON.parse(process.argv[2] ?? '{}') as { url: string; count: number };

let answered = 0;
let opened = 0;
const sockets: WebSocket[] = [];
process.send!({ startedAt: Date.now() });
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  sockets.push(ws);
  ws.on('open', () => {
    ws.send(JSON.stringify({ id: 'reg', method: 'register', params: stormAgent(i) }));
    if (++opened === count) process.send!({ openedAt: Date.now() });
  });
  ws.on('message', (data: Buffer) => {
    // Events ({"event":…) are most of what comes: told from replies ({"id":…) by one byte, unparsed.
    if (data[2] !== 0x69) return;
    const text = data.toString('utf8');
    if (!text.startsWith('{"id":"reg"')) return;
    if (!text.includes('"registered"')) process.send!({ error: text });
    if (++answered === count) process.send!({ answeredAt: Date.now() });
  });
  ws.on('error', (err) => process.send!({ error: err.message }));
}
process.on('disconnect', () => {
  for (const ws of sockets) ws.terminate();
  process.exit(0);
});

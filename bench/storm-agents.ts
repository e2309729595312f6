// A reconnect storm for the serve figures, in a process of its own (node dist/bench/storm-agents.js
// '{"url":…,"count":N}'): N agents open their registry connection at once, as after a registry
// restart, and each registers on open, as pi-socket does. Tells its parent over IPC when it starts
// ({startedAt}) and when the last register was answered ({answeredAt}; Date.now()), or {error}.
import { WebSocket } from 'ws';

const { url, count } = JSON.parse(process.argv[2] ?? '{}') as { url: string; count: number };

function agentParams(i: number): Record<string, unknown> {
  const hex = i.toString(16).padStart(12, '0');
  return { id: `019a3f2c-7b1e-7c00-9000-${hex}`, machine: 'storm-box', cwd: `/home/dev/work/project-${i % 97}`, port: 8080 + i, status: 'active', pid: 400_000 + i };
}

let answered = 0;
const sockets: WebSocket[] = [];
process.send!({ startedAt: Date.now() });
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  sockets.push(ws);
  ws.on('open', () => ws.send(JSON.stringify({ id: 'reg', method: 'register', params: agentParams(i) })));
  ws.on('message', (data) => {
    const text = String(data);
    if (text.startsWith('{"id":"reg"')) {
      if (!text.includes('"registered"')) process.send!({ error: text });
      if (++answered === count) process.send!({ answeredAt: Date.now() });
    }
  });
  ws.on('error', (err) => process.send!({ error: err.message }));
}
process.on('disconnect', () => {
  for (const ws of sockets) ws.terminate();
  process.exit(0);
});

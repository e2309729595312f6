// An agent as `spawn_agent` starts it (no arguments: a test's spawn command is a two-line sh script
// that execs this file with a mode), reading what serve gives every agent: HYPIVISOR_WS, HYPI_TOKEN,
// its cwd. Modes:
//   register  registers as pi-socket does (its pid, cwd, a port it listens on) and stays
//   linger    stays without registering (pi without pi-socket, or waiting for its person)
// Each start appends one JSON line to $GW_SPAWN_RECORD: pid, ppid, cwd, whether stdin is a
// terminal, $TMUX_PANE, whether a token came, and (register) the id the registry accepted.
// It exits after two minutes whatever happens, so a failed test leaves nothing running for long.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';

const require = createRequire(import.meta.url);
const { WebSocket } = require('ws');

const mode = process.argv[2] ?? 'register';
setTimeout(() => process.exit(0), 120_000);

const record = (fields) => {
  const line = {
    pid: process.pid,
    ppid: process.ppid,
    cwd: process.cwd(),
    tty: process.stdin.isTTY === true,
    tmuxPane: process.env.TMUX_PANE ?? null,
    token: process.env.HYPI_TOKEN !== undefined,
    ...fields,
  };
  if (process.env.GW_SPAWN_RECORD) appendFileSync(process.env.GW_SPAWN_RECORD, `${JSON.stringify(line)}\n`);
};

if (mode === 'linger') {
  record({ mode });
} else {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const token = process.env.HYPI_TOKEN;
  const url = `${process.env.HYPIVISOR_WS}${token ? `?token=${encodeURIComponent(token)}` : ''}`;
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const id = randomUUID();
  const node = { id, machine: hostname(), cwd: process.cwd(), port: server.address().port, status: 'active', pid: process.pid };
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.id === 'reg') record({ mode, registered: m.result?.status === 'registered' ? id : null });
  });
  ws.send(JSON.stringify({ id: 'reg', method: 'register', params: node }));
}

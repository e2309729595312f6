// "A settled, idle run writes 0 bytes to the terminal": the built CLI in a real tmux pane against
// a real `ghostwatch serve` with ~20 agents (live children, a SIGKILLed ghost, one on another
// host, one without a pid), and every byte the program writes to the pty counted with
// `tmux pipe-pane` for 10 s. A control in the same test registers one more agent and checks that
// bytes do arrive, so a broken counter cannot pass. Needs tmux and a built dist/.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/wait.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';
import { fileSleeper, killAndReap } from '../support/processes.js';

const hasTmux = HAS_TMUX;
const built = BUILT;
const socket = `gw-idle-${process.pid}`;
const { run: tmux, capture } = tmuxOn(socket);
const dir = mkdtempSync(join(tmpdir(), 'gw-idle-'));
const OUT = join(dir, 'pty-output.bin');
const env = tuiEnv({ XDG_STATE_HOME: dir });

const IDLE_MS = 10_000;
/** After the rows show: the 250 ms, 2 s and 5 s probes have each run at least once by then. */
const SETTLE_MS = 2_500;

let server: RegistryServer;
let listener: ChildProcess | undefined;
const agents: WebSocket[] = [];
let nextPort = 9100;

async function register(id: string, fields: { pid?: number; machine?: string; port?: number } = {}): Promise<void> {
  const ws = new WebSocket(server.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  const params = { id, machine: fields.machine ?? hostname(), cwd: `/tmp/idle/${id}`, port: fields.port ?? nextPort++, status: 'active', pid: fields.pid };
  ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params }));
  await done;
}

/** kill-server leaves the socket file behind: remember where it is to remove it too. */
let socketPath: string | undefined;
function killPanes(): void {
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no tmux server
  }
  if (socketPath) rmSync(socketPath, { force: true });
}

const outputBytes = (): number => (existsSync(OUT) ? statSync(OUT).size : 0);
/** The captured bytes as `cat -v` would show them, for a failure message. */
const visible = (b: Buffer): string =>
  [...b.subarray(0, 4000)].map((c) => (c === 0x1b ? '^[' : c === 0x0a ? '\\n\n' : c < 0x20 ? `^${String.fromCharCode(c + 64)}` : c > 0x7e ? `M-${c.toString(16)}` : String.fromCharCode(c))).join('');

describe.runIf(hasTmux && built)('an idle ghostwatch in a real tmux pane', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    for (let i = 0; i < 17; i++) await register(`live-${String(i).padStart(2, '0')}`, { pid: fileSleeper().pid });
    const doomed = fileSleeper();
    await register('ghost-agent', { pid: doomed.pid });
    await killAndReap(doomed);
    await register('remote-agent', { pid: 4242, machine: 'build-server.example' });
    // No pid: its port is probed instead, and its owner found. A child that only listens and
    // sleeps serves it: the test's own process (or another node, whose GC runs on after its start)
    // costs CPU and memory that move, and the CPU% and MEM of that row would be redrawn rightly.
    const listen = 'import socket, time\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen()\nprint(s.getsockname()[1], flush=True)\ntime.sleep(1e6)';
    listener = spawn('python3', ['-c', listen], { stdio: ['ignore', 'pipe', 'ignore'] });
    const port = await new Promise<number>((resolve, reject) => {
      listener!.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      listener!.once('exit', (code) => reject(new Error(`the listener exited (${code})`)));
    });
    await register('portonly-agent', { port });
  });

  afterAll(async () => {
    killPanes();
    if (listener) await killAndReap(listener);
    for (const a of agents) a.terminate();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes 0 bytes in 10 s once settled, and redraws when an agent joins', { timeout: 45_000 }, async () => {
    killPanes();
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '120', '-y', '40', `exec node '${BIN}' --registry ${server.url}`], { env });
    socketPath = tmux('display', '-p', '#{socket_path}').trim();
    await until(() => /20 sessions/.test(capture()) && /!ghost\s+ghost-agent/.test(capture()) && /remote-agent/.test(capture()), 10_000, 'the 20 rows on screen');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    // The AGE column is redrawn at the moment a shown age changes, and every agent here registered
    // (and the ghost was first probed) well under a minute before the window ends: nothing turns in
    // it. The events pane's minute clock may re-render the same frame: Ink must write nothing then.

    tmux('pipe-pane', '-o', '-t', 'gw', `cat >> '${OUT}'`);
    // The redirection creates the file once the pipe's shell runs: from then on every byte counts.
    await until(() => existsSync(OUT), 3000, 'the pipe-pane file');
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = outputBytes();
    expect(idle, `bytes written while idle:\n${visible(readFileSync(OUT))}`).toBe(0);
    expect(tmux('display', '-p', '-t', 'gw', '#{pane_dead}').trim(), 'the monitor still runs').toBe('0');

    // Control: a change must reach the pty through the same pipe, or the 0 above proves nothing.
    await register('late-agent', { pid: fileSleeper().pid });
    await until(() => /late-agent/.test(capture()) && /21 sessions/.test(capture()), 5000, 'the new agent on screen');
    await until(() => readFileSync(OUT).toString('latin1').includes('late-agent'), 3000, 'the new frame through the pipe');
    expect(outputBytes()).toBeGreaterThan(0);
  });
});

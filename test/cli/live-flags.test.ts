// The live monitor's own flags, through the launcher in a real tmux pane against a real
// `ghostwatch serve` registry: --read-only, --no-color / NO_COLOR, --interval, and their config
// file keys. Each assertion fails when its flag or key is ignored.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/wait.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';
import { fileSleeper, killAndReap } from '../support/processes.js';

let server: RegistryServer;
let dir: string;
let panes = 0;
let pane: ReturnType<typeof tmuxOn> | undefined;
const agents: WebSocket[] = [];
const ESC = '\u001b';

async function register(id: string, pid: number, port: number): Promise<void> {
  const ws = new WebSocket(server.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/flags', port, status: 'active', pid } }));
  await done;
}

/** The monitor in a fresh tmux server; `prefix` goes before `node` on the shell's line (NO_COLOR=1). */
function startMonitor(args: string[], prefix = ''): ReturnType<typeof tmuxOn> {
  const socket = `gw-flags-${process.pid}-${++panes}`;
  const env = tuiEnv({ XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(dir, 'config'), HYPIVISOR_WS: server.url, HYPI_TOKEN: '' });
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '100', '-y', '24', 'sh'], { env });
  pane = tmuxOn(socket);
  pane.run('send-keys', '-t', 'gw', `${prefix}node ${BIN} ${args.join(' ')}`, 'Enter');
  return pane;
}

/** The pane with its colours and attributes as escape sequences. */
const withEscapes = (p: ReturnType<typeof tmuxOn>): string => p.run('capture-pane', '-p', '-e', '-t', 'gw');

function config(keys: Record<string, unknown>): void {
  writeFileSync(join(dir, 'config/ghostwatch/config.json'), JSON.stringify(keys));
}

describe.runIf(HAS_TMUX && BUILT)('the live monitor\'s flags in a real pane', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    await register('live-agent', fileSleeper().pid, 9201);
    const ghost = fileSleeper();
    await register('dead-agent', ghost.pid, 9202);
    await killAndReap(ghost);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-live-flags-'));
    mkdirSync(join(dir, 'config/ghostwatch'), { recursive: true });
  });
  afterEach(() => {
    try {
      pane?.run('kill-server');
    } catch {
      // already gone
    }
    pane = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    for (const a of agents) a.terminate();
    await server?.close();
  });

  const ghostOnScreen = (p: ReturnType<typeof tmuxOn>) => until(() => /ghost\s+dead-agent/.test(p.capture()), 8000, 'the ghost on screen');
  const ids = () => server.registry.listNodes().map((n: { id: string }) => n.id);

  it.each([
    ['--read-only', ['--read-only'], {}],
    ['the file\'s "read-only"', [], { 'read-only': true }],
  ])('%s: the eviction key explains itself and evicts nothing', async (_what, args, file) => {
    config(file);
    const p = startMonitor(args);
    await ghostOnScreen(p);
    p.run('send-keys', '-t', 'gw', 'd');
    await until(() => /read-only: eviction is off/.test(p.capture()), 3000, 'the read-only message');
    expect(p.capture()).not.toMatch(/Evict 1 entry/);
    expect(ids()).toContain('dead-agent');
  });

  it('without --read-only the same key asks to evict (the control of the case above)', async () => {
    const p = startMonitor([]);
    await ghostOnScreen(p);
    p.run('send-keys', '-t', 'gw', 'd');
    await until(() => /Evict 1 entry from the registry\?/.test(p.capture()), 3000, 'the confirm dialog');
    p.run('send-keys', '-t', 'gw', 'n');
  });

  it('colours by default; none with --no-color, NO_COLOR=1 or the file\'s "no-color"', async () => {
    const coloured = startMonitor([]);
    await ghostOnScreen(coloured);
    expect(withEscapes(coloured)).toContain(`${ESC}[`);
    coloured.run('kill-server');
    for (const [args, prefix, file] of [
      [['--no-color'], '', {}],
      [[], 'NO_COLOR=1 ', {}],
      [[], '', { 'no-color': true }],
    ] as const) {
      config(file);
      const p = startMonitor([...args], prefix);
      await ghostOnScreen(p);
      expect(withEscapes(p), JSON.stringify([args, prefix, file])).not.toContain(ESC);
      p.run('kill-server');
    }
  });

  it.each([
    ['--interval 60', ['--interval', '60'], {}, 'victim-flag', 9203],
    ['the file\'s "interval": 60', [], { interval: 60 }, 'victim-file', 9204],
  ] as const)('%s: a death is not seen within 2 s (at the default 0.25 s it is)', async (_what, args, file, id, port) => {
    config(file);
    const victim = fileSleeper();
    await register(id, victim.pid, port);
    const p = startMonitor([...args]);
    await until(() => new RegExp(`live\\s+${id}`).test(p.capture()), 8000, 'the victim live');
    await killAndReap(victim);
    await new Promise((r) => setTimeout(r, 2000));
    expect(p.capture()).toMatch(new RegExp(`live\\s+${id}`));
    // The control: the default cadence sees it.
    p.run('kill-server');
    config({});
    const q = startMonitor([]);
    await until(() => new RegExp(`ghost\\s+${id}`).test(q.capture()), 8000, 'the victim a ghost');
  });
});

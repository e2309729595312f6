// The live monitor never takes its view from a view.json another user planted: tmux runs the built
// CLI against a real `ghostwatch serve` (a live agent, a ghost) with a temp XDG_STATE_HOME whose
// view.json (problems only) belongs to uid 65534. The live row stays on screen and the status line
// says why the file was ignored; our own view.json there still hides it. Needs tmux, root (chown)
// and a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';
import { fileSleeper, killAndReap } from '../support/processes.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';
import { until } from '../support/wait.js';

const planting = plantingRequirement();
const runs = (planting === undefined && HAS_TMUX && BUILT) || process.env.CI === 'true';
const PROBLEMS_ONLY = JSON.stringify({ tab: 'sessions', sortColumn: null, sortReverse: false, problemsOnly: true });

let server: RegistryServer;
const agents: WebSocket[] = [];
let dir: string;
let panes = 0;
let current = tmuxOn(`gw-planted-${process.pid}-0`);

async function register(id: string, pid: number, port: number): Promise<void> {
  const ws = new WebSocket(server.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/e2e-planted', port, status: 'active', pid } }));
  await done;
}

function killPane(): void {
  try {
    current.run('kill-server');
  } catch {
    // no tmux server yet
  }
}

/** The monitor in a fresh 160x30 pane, its state folder `state`. */
function startPane(state: string): void {
  killPane();
  const socket = `gw-planted-${process.pid}-${++panes}`;
  current = tmuxOn(socket);
  const env = tuiEnv({ XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(dir, 'no-config') });
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '160', '-y', '30', 'sh'], { env });
  current.run('send-keys', '-t', 'gw', `node ${BIN} --registry ${server.url}`, 'Enter');
}

describe.runIf(runs)('a view.json another user planted, in a real tmux pane', () => {
  beforeAll(async () => {
    if (planting !== undefined || !HAS_TMUX || !BUILT) throw new Error(`CI=true and this test ${planting ?? 'needs tmux and a built dist/'}`);
    dir = mkdtempSync(join(tmpdir(), 'gw-planted-view-'));
    chmodSync(dir, 0o755);
    server = await startRegistryServer({ port: 0, log: () => {} });
    await register('live-agent', fileSleeper().pid, 9001);
    const dead = fileSleeper();
    await register('dead-agent', dead.pid, 9002);
    await killAndReap(dead);
  });
  afterAll(async () => {
    killPane();
    for (const a of agents) a.terminate();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("uid 65534's view.json (problems only) is not applied: the live row shows, and the status line says why", async () => {
    const state = join(dir, 'state-planted');
    const path = PLANTINGS[0]!.plant(join(state, 'ghostwatch'), 'view.json', PROBLEMS_ONLY);
    startPane(state);
    await until(() => /!ghost\s+dead-agent/.test(current.capture()) && /live\s+live-agent/.test(current.capture()), 8000, 'both rows on screen');
    expect(current.capture().replace(/\n/g, '')).toContain(`view settings ${path} ignored: it belongs to uid 65534`);
    current.run('send-keys', '-t', 'gw', 'q');
  });

  it('our own view.json there (0600, folder 0700) is applied: problems only, the live row hidden', async () => {
    const state = join(dir, 'state-ours');
    ownFile(join(state, 'ghostwatch'), 'view.json', PROBLEMS_ONLY);
    startPane(state);
    await until(() => /!ghost\s+dead-agent/.test(current.capture()), 8000, 'the ghost on screen');
    expect(current.capture()).not.toMatch(/live-agent/);
    expect(current.capture()).not.toMatch(/ignored/);
    current.run('send-keys', '-t', 'gw', 'q');
  });
});

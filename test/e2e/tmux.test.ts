// End to end in a real terminal: tmux runs the built CLI against a real `ghostwatch serve` with a
// real ghost (a registered child that was SIGKILLed); keys evict it; the pane is resized; q quits
// and the shell's screen comes back. Needs tmux and a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/wait.js';
import { BIN, BUILT, HAS_TMUX, SHELL_PROMPT, tmuxOn, tuiEnv, typeAtPrompt } from '../support/tmux.js';
import { fileSleeper, killAndReap } from '../support/processes.js';

const hasTmux = HAS_TMUX;
const built = BUILT;
// A fresh tmux server (socket) for every pane: a killed server can still hold its socket for a
// moment, and a new session on it then fails.
let panes = 0;
let socket = `gw-e2e-${process.pid}-0`;
let current = tmuxOn(socket);
const tmux = (...args: string[]): string => current.run(...args);
const capture = (): string => current.capture();
/** The pane's lines (capture-pane ends every line, the last one too, with a newline). */
const paneLines = (): string[] => capture().replace(/\n$/, '').split('\n');
const state = mkdtempSync(join(tmpdir(), 'gw-e2e-'));

const env = tuiEnv({ XDG_STATE_HOME: state });

let server: RegistryServer;
const agents: WebSocket[] = [];

async function register(id: string, pid: number, port: number): Promise<void> {
  const ws = new WebSocket(server.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/e2e', port, status: 'active', pid } }));
  await done;
}

async function ghost(id: string, port: number): Promise<void> {
  const c = fileSleeper();
  await register(id, c.pid, port);
  await killAndReap(c);
}

function killPanes(): void {
  try {
    tmux('kill-server');
  } catch {
    // no tmux server yet
  }
}

async function startPane(columns: number, rows: number): Promise<void> {
  killPanes();
  socket = `gw-e2e-${process.pid}-${++panes}`;
  current = tmuxOn(socket);
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', String(columns), '-y', String(rows), 'sh'], { env });
  await typeAtPrompt(current.run, current.capture, `echo before-ghostwatch; node ${BIN} --registry ${server.url}`);
}

describe.runIf(hasTmux && built)('ghostwatch in a real tmux pane', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    await register('live-agent', fileSleeper().pid, 9001);
    await ghost('dead-agent', 9002);
  });
  afterAll(async () => {
    killPanes();
    for (const a of agents) a.terminate();
    await server?.close();
  });

  it('flags the ghost, evicts it with keys, survives a resize, and restores the shell on q (80x24)', async () => {
    await startPane(80, 24);
    await until(() => /!ghost\s+dead-agent/.test(capture()) && /live\s+live-agent/.test(capture()), 8000, 'the ghost on screen');
    const frame = paneLines();
    expect(frame.length).toBeLessThanOrEqual(24);
    expect(capture().match(/^ghostwatch {2}/gm), 'one frame, not frames stacked').toHaveLength(1);
    for (const line of frame) expect(stringWidth(line)).toBeLessThanOrEqual(80);
    expect(tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim()).toBe('1');

    // The ghost is the first row: problems come first. d asks, y confirms.
    tmux('send-keys', '-t', 'gw', 'd');
    await until(() => /Evict 1 entry from the registry\?/.test(capture()), 3000, 'the confirm dialog');
    expect(capture()).toMatch(/ghost session dead-agent/);
    tmux('send-keys', '-t', 'gw', 'y');
    await until(() => /evicted ghost dead-agent/.test(capture()), 5000, 'the eviction summary, naming the entry');
    expect(server.registry.listNodes().map((n: { id: string }) => n.id)).toEqual(['live-agent']);
    const audit = readFileSync(join(state, 'ghostwatch/evictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(audit.map((r: { kind: string }) => r.kind)).toEqual(['intent', 'outcome']);
    expect(statSync(join(state, 'ghostwatch/evictions.jsonl')).mode & 0o777).toBe(0o600);

    tmux('resize-window', '-t', 'gw', '-x', '60', '-y', '15');
    await until(() => paneLines().length <= 15 && /live-agent/.test(capture()), 3000, 'the narrow frame');
    expect(capture().match(/^ghostwatch {2}/gm), 'one frame after the resize').toHaveLength(1);
    for (const line of paneLines()) expect(stringWidth(line)).toBeLessThanOrEqual(60);

    tmux('send-keys', '-t', 'gw', 'q');
    await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 3000, 'the main screen');
    await until(() => SHELL_PROMPT.test(capture()), 3000, 'the shell prompt');
    const after = capture();
    expect(after).toContain('before-ghostwatch');
    expect(after).not.toMatch(/VERDICT|live-agent/);
  });

  it('fits a 60x15 pane from the start, a full table under its titles, and quits with Ctrl-C', async () => {
    await ghost('second-ghost', 9003);
    // More rows than the pane holds: the title line, the header and the cursor row must all stay.
    for (let i = 0; i < 12; i++) await ghost(`filler-${i}`, 9100 + i);
    await startPane(60, 15);
    await until(() => (capture().match(/!ghost\s+(second-ghost|filler-)/g) ?? []).length >= 9, 8000, 'the ghosts on screen');
    const lines = paneLines();
    expect(lines.length).toBeLessThanOrEqual(15);
    expect(lines[0]).toMatch(/^ghostwatch {2}/);
    expect(lines[1]).toMatch(/^ {2}VERDICTv?\s+SESSION/);
    expect(lines[2]).toMatch(/^> /);
    expect(lines.filter((l) => /^[> ] [!?\- ]\w/.test(l))).toHaveLength(10);
    expect(capture().match(/^ghostwatch {2}/gm), 'one frame, not frames stacked').toHaveLength(1);
    for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(60);
    expect(capture()).toMatch(/VERDICTv?\s+SESSION\s+PID/);
    tmux('send-keys', '-t', 'gw', 'C-c');
    await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 3000, 'the main screen');
    await until(() => SHELL_PROMPT.test(capture()), 3000, 'the shell prompt');
  });

  it.each(['SIGTERM', 'SIGHUP'] as const)('restores the shell when the monitor gets %s', async (signal) => {
    await startPane(80, 24);
    await until(() => /VERDICTv?\s+SESSION/.test(capture()), 8000, 'the table');
    const shellPid = tmux('display', '-p', '-t', 'gw', '#{pane_pid}').trim();
    const node = execFileSync('pgrep', ['-P', shellPid, '-f', 'ghostwatch.js'], { encoding: 'utf8' }).trim().split('\n')[0]!;
    process.kill(Number(node), signal);
    await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 3000, 'the main screen');
    await until(() => SHELL_PROMPT.test(capture()), 3000, 'the shell prompt');
    expect(capture()).not.toMatch(/VERDICT/);
  });
});

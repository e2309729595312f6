// A registry time that is no time (a start 1e300 ms after the epoch) reaches the built CLI in a real
// tmux pane: its row opens on Enter and says "invalid time", Esc goes back, the table keeps
// updating and q quits. The registry is the stock hypivisor stand-in, which keeps whatever a
// client registers (ghostwatch serve does not keep such a time: it stamps the real start). Needs tmux and dist/.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startStockHypivisor, type StockHypivisor } from '../support/stock-hypivisor.js';
import { until } from '../support/wait.js';
import { BIN, BUILT, HAS_TMUX, SHELL_PROMPT, tmuxOn, tuiEnv, typeAtPrompt } from '../support/tmux.js';
import { fileSleeper, killAndReap, type LiveChild } from '../support/processes.js';

const socket = `gw-time-${process.pid}`;
const { run: tmux, capture } = tmuxOn(socket);

let registry: StockHypivisor;
let live: LiveChild;
const agents: WebSocket[] = [];

async function register(params: Record<string, unknown>): Promise<void> {
  const ws = new WebSocket(registry.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: 'r', method: 'register', params }));
  await done;
}

describe.runIf(HAS_TMUX && BUILT)('a time out of range in a real tmux pane', () => {
  beforeAll(async () => {
    registry = await startStockHypivisor();
    live = fileSleeper();
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    for (const a of agents) a.terminate();
    await registry?.close();
    if (live) await killAndReap(live);
  });

  it('pid_started_at 1e300: Enter shows "invalid time", Esc goes back, the table updates, q quits', async () => {
    await register({ id: 'far-future', machine: hostname(), cwd: '/tmp/e2e-time', port: 9401, status: 'active', pid: live.pid, pid_started_at: 1e300 });
    const state = mkdtempSync(join(tmpdir(), 'gw-time-'));
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '120', '-y', '40', 'sh'], { env: tuiEnv({ XDG_STATE_HOME: state }) });
    await typeAtPrompt(tmux, capture, `node ${BIN} --registry ${registry.url}`);
    // Judged first (not "checking…"): the detail of a row not yet probed has no process facts to compare.
    await until(() => / live\s+far-future/.test(capture()), 8000, () => `the row, judged:\n${capture()}`);

    tmux('send-keys', '-t', 'gw', 'Enter');
    await until(() => /pid_started_at\s+invalid time/.test(capture()), 5000, () => `the detail view:\n${capture()}`);
    expect(capture()).not.toMatch(/Invalid time value|RangeError/);
    // The evidence says it was not used: the start was checked against when ghostwatch first saw the row.
    expect(capture()).toMatch(/invalid time\s+pid_started_at 1e\+300: no time within 100 years of now, not used/);
    await until(() => /process started .* first observed/.test(capture()), 5000, () => `the start-time evidence:\n${capture()}`);

    tmux('send-keys', '-t', 'gw', 'Escape');
    await until(() => /VERDICT/.test(capture()), 3000, () => `the table again:\n${capture()}`);
    // Judged on what is known: alive, its start unknown (not "started long before 1e300").
    expect(capture()).toMatch(/ live\s+far-future/);
    // The monitor still follows the registry.
    await register({ id: 'newcomer', machine: hostname(), cwd: '/tmp/e2e-time', port: 9402, status: 'active', pid: live.pid });
    await until(() => /newcomer/.test(capture()), 8000, () => `the new row:\n${capture()}`);

    tmux('send-keys', '-t', 'gw', 'q');
    await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 5000, 'the main screen');
    await until(() => SHELL_PROMPT.test(capture()), 3000, () => `the shell prompt:\n${capture()}`);
  });
});

// The frame-diffing output layer in a real terminal: two tmux panes of the same size run the
// built CLI against one real `ghostwatch serve`, one with the layer (the default), one with Ink's
// own whole-frame writes (GHOSTWATCH_TEST_STANDARD_RENDER=1). Sessions join, die (real children,
// SIGKILLed) and leave, keys move the cursor, the panes are resized and the table shrinks; after
// every step the two panes hold the same screen, colours included (capture-pane -e).
// Needs tmux and a built dist/.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/scripted-registry.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';

const socket = `gw-diff-${process.pid}`;
const { run: tmux } = tmuxOn(socket);
/** The pane's screen with its colours (-e): equal captures, equal screens. */
const capture = (target: string): string => tmux('capture-pane', '-e', '-p', '-t', target);
const text = (target: string): string => tmux('capture-pane', '-p', '-t', target);
const state = mkdtempSync(join(tmpdir(), 'gw-diff-'));

let server: RegistryServer;
const children: ChildProcess[] = [];
const agents = new Map<string, WebSocket>();

async function rpc(ws: WebSocket, method: string, params: object): Promise<void> {
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: `${method}-${Math.random()}`, method, params }));
  await done;
}

async function joinAs(id: string, port: number): Promise<ChildProcess> {
  const c = spawn('sleep', ['300'], { stdio: 'ignore' });
  children.push(c);
  const ws = new WebSocket(server.url);
  agents.set(id, ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  await rpc(ws, 'register', { id, machine: hostname(), cwd: `/tmp/e2e-diff/${id}`, port, status: 'active', pid: c.pid });
  return c;
}

async function kill(c: ChildProcess): Promise<void> {
  await new Promise((r) => {
    c.once('exit', r);
    c.kill('SIGKILL');
  });
}

async function leave(id: string): Promise<void> {
  const ws = agents.get(id)!;
  await rpc(ws, 'deregister', { id });
  ws.terminate();
  agents.delete(id);
}

/** Both panes hold the same screen, the table drawn (and `expect` on it), within a few seconds. */
async function same(step: string, expect_: RegExp): Promise<void> {
  try {
    await until(() => expect_.test(text('standard')) && capture('diff') === capture('standard'), 8000, step);
  } catch {
    // Fails with the two screens side by side.
    expect(capture('diff'), step).toBe(capture('standard'));
    expect(text('standard'), step).toMatch(expect_);
  }
}

function keys(...k: string[]): void {
  for (const target of ['diff', 'standard']) tmux('send-keys', '-t', target, ...k);
}

/**
 * Both panes show the same screen and it holds still (no probe result or re-sort on its way):
 * a key sent then lands on the same rows in both. A key sent while an update is in flight may be
 * taken before it in one pane and after it in the other, and the two cursors then rightly differ.
 */
async function quiet(step: string): Promise<void> {
  let last = '';
  let since = Date.now();
  await until(
    () => {
      const now = capture('standard');
      if (now !== last || now !== capture('diff') || /checking/.test(now)) {
        last = now;
        since = Date.now();
        return false;
      }
      return Date.now() - since >= 300;
    },
    8000,
    step,
  );
}

describe.runIf(HAS_TMUX && BUILT)('the frame-diffing layer in real tmux panes', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // not started
    }
    for (const ws of agents.values()) ws.terminate();
    for (const c of children) c.kill('SIGKILL');
    await server?.close();
  });

  it('draws the same screens as the whole-frame renderer through joins, deaths, keys, a resize and a shrinking table', async () => {
    const base = tuiEnv({ XDG_STATE_HOME: state });
    const start = (name: string, extra: Record<string, string>): void => {
      execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', name, '-x', '100', '-y', '30', `node ${BIN} --registry ${server.url}`], {
        env: { ...base, ...extra },
      });
    };
    const live: ChildProcess[] = [];
    for (let i = 0; i < 6; i++) live.push(await joinAs(`agent-${i}`, 9200 + i));
    start('diff', {});
    start('standard', { GHOSTWATCH_TEST_STANDARD_RENDER: '1' });
    await same('the first frame', /agent-5/);

    // Many updates: each one a row or two of a frame that otherwise stays.
    for (let i = 6; i < 18; i++) {
      live.push(await joinAs(`agent-${i}`, 9200 + i));
      await same(`agent-${i} joined`, new RegExp(`agent-${i}\\b`));
      if (i % 3 === 0) {
        await kill(live[i - 4]!);
        await same(`agent-${i - 4} died`, new RegExp(`ghost\\s+agent-${i - 4}\\b`));
      }
      if (i % 2 === 0) {
        await quiet(`still after agent-${i}`);
        keys('j');
      }
    }
    await quiet('still before j j k');
    keys('j', 'j', 'k');
    await same('the cursor moved', /agent-17/);

    // A resize: smaller, then larger again.
    for (const name of ['diff', 'standard']) tmux('resize-window', '-t', name, '-x', '70', '-y', '14');
    await same('after the resize to 70x14', /VERDICT/);
    for (const name of ['diff', 'standard']) tmux('resize-window', '-t', name, '-x', '110', '-y', '34');
    await same('after the resize to 110x34', /agent-17/);
    // Height alone: tmux drops rows from the top of a screen whose cursor is on its last row.
    for (const name of ['diff', 'standard']) tmux('resize-window', '-t', name, '-x', '110', '-y', '20');
    await same('after the resize to 110x20', /VERDICT/);

    // The table shrinks: rows leave, the frame gets shorter.
    for (let i = 17; i >= 4; i--) {
      await leave(`agent-${i}`);
      await same(`agent-${i} left`, new RegExp(`^(?![\\s\\S]*agent-${i}\\b)`));
    }
    expect(text('diff')).toMatch(/agent-3\b/);
    expect(text('diff').split('\n').filter((l) => /agent-\d/.test(l))).toHaveLength(4);
  });
});

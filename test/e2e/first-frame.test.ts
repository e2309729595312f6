// The kept first frame in a real tmux pane: the first start draws its first frame with Ink (inside
// a synchronized update) and keeps it; the next start with the same key draws that frame at once,
// before Ink has loaded (outside any synchronized update), and Ink's first frame over it then
// writes no row. The kept file is 0600 and holds no token. Needs tmux and a built dist/.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/scripted-registry.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';

const socket = `gw-first-${process.pid}`;
const { run: tmux, capture } = tmuxOn(socket);
const dir = mkdtempSync(join(tmpdir(), 'gw-first-frame-'));
const cache = join(dir, 'cache');
const TOKEN = 'first-frame-sekrit-token';
const env = tuiEnv({ XDG_STATE_HOME: join(dir, 'state'), XDG_CACHE_HOME: cache, HYPI_TOKEN: TOKEN });
const framesFile = join(cache, 'ghostwatch', 'first-frames.json');
const PROMPT = /^[$#] ?$/m;
const SYNC_BEGIN = '\u001b[?2026h';

let server: RegistryServer;
let agent: WebSocket | undefined;
let sleeper: ChildProcess | undefined;

/** One start of the monitor in the pane, its output (from before the Enter) in `out`; q quits it. */
async function startOnce(out: string): Promise<string> {
  tmux('pipe-pane', '-t', 'gw', `cat >> '${out}'`);
  tmux('send-keys', '-t', 'gw', `node ${BIN} --registry ${server.url}`, 'Enter');
  await until(() => /live\s+first-agent/.test(capture()), 10_000, 'the live agent on screen');
  await until(() => existsSync(framesFile), 5_000, 'the kept first frame');
  tmux('send-keys', '-t', 'gw', 'q');
  await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 5_000, 'the main screen');
  await until(() => PROMPT.test(capture()), 5_000, 'the shell prompt');
  tmux('pipe-pane', '-t', 'gw');
  return readFileSync(out, 'latin1');
}

describe.runIf(HAS_TMUX && BUILT)('the kept first frame in a real tmux pane', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    agent = new WebSocket(server.url);
    await new Promise((r, j) => agent!.once('open', r).once('error', j));
    const done = new Promise((r) => agent!.once('message', r));
    agent.send(JSON.stringify({ id: 'r1', method: 'register', params: { id: 'first-agent', machine: hostname(), cwd: '/tmp/first', port: 9301, status: 'active', pid: sleeper.pid } }));
    await done;
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '100', '-y', '30', 'sh'], { env });
  });
  afterAll(async () => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    agent?.terminate();
    sleeper?.kill('SIGKILL');
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the second start draws the kept frame before Ink, and Ink then rewrites no row of it', async () => {
    const first = await startOnce(join(dir, 'run1.out'));
    // The first start: nothing kept, the first title row comes inside Ink's synchronized update.
    expect(first.indexOf(SYNC_BEGIN)).toBeGreaterThanOrEqual(0);
    expect(first.indexOf(SYNC_BEGIN)).toBeLessThan(first.indexOf('VERDICT'));
    expect(statSync(framesFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(cache, 'ghostwatch')).mode & 0o777).toBe(0o700);
    const kept = readFileSync(framesFile, 'utf8');
    expect(kept).toContain('VERDICT');
    expect(kept).not.toContain(TOKEN);
    const keptAt = statSync(framesFile).mtimeMs;

    const second = await startOnce(join(dir, 'run2.out'));
    // The kept frame: drawn before any synchronized update, so before Ink had drawn anything.
    const begin = second.indexOf(SYNC_BEGIN);
    expect(second.indexOf('VERDICT')).toBeGreaterThanOrEqual(0);
    expect(second.indexOf('VERDICT')).toBeLessThan(begin);
    // Ink's first frame over it: no row written (the same frame), only the brackets and the cursor.
    const inkFirst = second.slice(begin, second.indexOf('\u001b[?2026l', begin));
    expect(inkFirst).not.toMatch(/\u001b\[\d+;1H/);
    // It was right, so it was not written again.
    expect(statSync(framesFile).mtimeMs).toBe(keptAt);
  });
});

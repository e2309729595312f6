// ghostwatch never crashes the agentctl daemon it reads. The real daemon has no 'error' handler
// on client sockets: a reply written to a client that closed kills it (EPIPE), and nothing
// restarts it. The stand-in here (test/support/fragile-agentctl.mjs, its own process) dies the
// same way; each test closes ghostwatch's side while a request is in flight and checks the
// daemon still lives and answers: `check --timeout 0.005`, a stop (what `watch` does on quit)
// mid-request, and giving up on a frozen (SIGSTOPped) daemon that wakes up later.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { runCli } from '../support/cli.js';
import { HOST, onCleanup, tempDir, until } from '../engine/helpers.js';

const FRAGILE = join(import.meta.dirname, '..', 'support', 'fragile-agentctl.mjs');

interface Fragile {
  readonly child: ChildProcess;
  readonly socketPath: string;
  readonly stderr: () => string;
  /** How many requests it has read so far. */
  readonly received: () => number;
  /** How many replies it has written so far. */
  readonly replies: () => number;
}

async function fragileDaemon(busyMs: number): Promise<Fragile> {
  const socketPath = join(tempDir(), 'agentctl.sock');
  const sessions = JSON.stringify([{ id: 's-1', adapter: 'claude-code', status: 'running', startedAt: new Date().toISOString(), pid: process.pid, meta: {} }]);
  const child = spawn(process.execPath, [FRAGILE, socketPath], { env: { ...process.env, BUSY_MS: String(busyMs), SESSIONS: sessions }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the stand-in exited (${code}): ${err}`)));
  });
  return {
    child,
    socketPath,
    stderr: () => err,
    received: () => out.split('\n').filter((l) => l.startsWith('received')).length,
    replies: () => out.split('\n').filter((l) => l.startsWith('replied')).length,
  };
}

const alive = (d: Fragile): boolean => d.child.exitCode === null && d.child.signalCode === null;

/** Until the daemon has written `n` replies (and a moment more for an EPIPE to kill it), or died. */
async function afterReplies(d: Fragile, n: number): Promise<void> {
  await until(() => d.replies() >= n || !alive(d), 10_000, `${n} replies written`);
  await sleep(200);
}

/** One request from a fresh client: the daemon still answers. */
function answers(socketPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socketPath, () => c.write(`${JSON.stringify({ id: 'probe', method: 'lock.list', params: {} })}\n`));
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      got += d;
      if (got.includes('\n')) {
        c.end();
        resolve(got.trim());
      }
    });
    c.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('agentctl: never crash the daemon we read', () => {
  it('survives `check --timeout 0.1` (ghostwatch asks, then gives up before the replies come)', async () => {
    const d = await fragileDaemon(300);
    const home = tempDir();
    // 0.1 s: time to connect and ask, far less than the 300 ms each answer takes.
    const out = await runCli(['check', '--source', 'agentctl', '--agentctl-socket', d.socketPath, '--timeout', '0.1'], {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: tempDir(),
      XDG_STATE_HOME: tempDir(),
      NO_COLOR: '1',
    });
    expect(out.code).not.toBe(99);
    // It asked, and gave up before the answers came; a socket closed then would kill the daemon
    // as it writes them (EPIPE).
    await until(() => d.received() >= 1, 5000, 'a request read');
    await afterReplies(d, d.received());
    expect(d.stderr()).not.toMatch(/EPIPE|Unhandled 'error'/);
    expect(alive(d)).toBe(true);
    expect(await answers(d.socketPath)).toMatch(/"id":"probe","result":\[\]/);
  });

  it('survives a stop with requests in flight (`watch` quitting mid-request)', async () => {
    const d = await fragileDaemon(300);
    const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, pollIntervalMs: 50, requestTimeoutMs: 5000 });
    src.start();
    await sleep(100); // connected, the first session.list and lock.list sent, the daemon busy on them
    await src.stop();
    await afterReplies(d, 2);
    expect(d.stderr()).not.toMatch(/EPIPE/);
    expect(alive(d)).toBe(true);
    expect(await answers(d.socketPath)).toMatch(/"id":"probe"/);
  });

  it('survives being given up on while frozen, when it wakes up and answers', async () => {
    const d = await fragileDaemon(20);
    d.child.kill('SIGSTOP'); // frozen: the kernel still accepts the connection and queues our requests
    const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, pollIntervalMs: 50, requestTimeoutMs: 200, closeWaitMs: 100, lingerMs: 5000 });
    src.start();
    await until(() => src.snapshot().state.status === 'unreachable', 5000, 'the requests time out');
    const t0 = Date.now();
    await src.stop(); // gives up: stop() returns after closeWaitMs, the socket stays open for the replies
    expect(Date.now() - t0).toBeLessThan(2000);
    await sleep(300);
    d.child.kill('SIGCONT');
    await afterReplies(d, 2);
    expect(d.stderr()).not.toMatch(/EPIPE/);
    expect(alive(d)).toBe(true);
    expect(await answers(d.socketPath)).toMatch(/"id":"probe"/);
  });

  it('the stand-in does die when a client closes with a reply in flight (the test can fail)', async () => {
    const d = await fragileDaemon(300);
    const c = createConnection(d.socketPath, () => c.write(`${JSON.stringify({ id: 'x', method: 'session.list', params: { all: true } })}\n`));
    c.on('error', () => undefined);
    await sleep(50);
    c.destroy();
    await until(() => !alive(d), 5000, 'the stand-in dies of EPIPE');
    expect(d.stderr()).toMatch(/EPIPE/);
  });
});

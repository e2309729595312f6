// ghostwatch never crashes the agentctl daemon it reads. The real daemon has no 'error' handler
// on client sockets: a reply written to a client that closed kills it (EPIPE), and nothing
// restarts it. The stand-in here (test/support/fragile-agentctl.mjs, its own process) dies the
// same way; each test closes ghostwatch's side while a request is in flight and checks the
// daemon still lives and answers: `check --timeout 0.005`, a stop (what `watch` does on quit)
// mid-request, and giving up on a frozen (SIGSTOPped) daemon that wakes up later, also long after
// the grace (its socket stays open while its process is stopped, its state says so, and it is
// asked nothing more meanwhile); a daemon that runs but stays silent still gets only the grace.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { describe, expect, it } from 'vitest';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { DAEMON_STOPPED } from '../../src/sources/agentctl/daemon-process.js';
import { App } from '../../src/ui/app.js';
import { BIN } from '../support/tmux.js';
import { FakeClock } from '../engine/fake-clock.js';
import { engineFor, HOST, onCleanup, tempDir, until } from '../engine/helpers.js';
import { runCli } from '../support/cli.js';
import { newSocket, ownSockets } from '../support/own-sockets.js';

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

/** The process state letter (R, S, T ...) from /proc. */
const stateOf = (pid: number): string | undefined => /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];

/** A source on `socketPath` started and connected, and the inode of its socket to the daemon. */
async function connectedSource(socketPath: string, opts: { requestTimeoutMs: number; lingerMs: number }): Promise<{ src: AgentctlSource; socket: string }> {
  const before = ownSockets();
  const src = new AgentctlSource({ socketPath, host: HOST, pollIntervalMs: 50, closeWaitMs: 100, ...opts });
  onCleanup(() => src.stop());
  src.start();
  const socket = await until(() => newSocket(before), 5000, 'the source connected');
  return { src, socket };
}

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

  it('keeps a stopped daemon\'s socket open past the grace, for as long as it is stopped: continued, it answers and lives', async () => {
    const d = await fragileDaemon(20);
    const { src, socket } = await connectedSource(d.socketPath, { requestTimeoutMs: 200, lingerMs: 200 });
    await until(() => src.snapshot().state.status === 'connected', 5000, 'a first read');
    d.child.kill('SIGSTOP');
    await until(() => src.snapshot().state.status === 'unreachable', 5000, 'the requests time out');
    await src.stop(); // what `check` and `watch` do next: requests are still due
    // Past the grace (200 ms): either the socket is kept for the stopped daemon (its state says so),
    // or it was closed (the way that kills agentctl when it is continued).
    const kept = await until(
      () => (/stays open until it is continued/.test(src.snapshot().state.lastError ?? '') ? 'kept' : !ownSockets().has(socket) ? 'closed' : undefined),
      10_000,
      'the grace to end',
    );
    expect(stateOf(d.child.pid!)).toBe('T');
    d.child.kill('SIGCONT');
    await afterReplies(d, d.received());
    expect(d.stderr()).not.toMatch(/EPIPE/);
    expect(alive(d)).toBe(true);
    expect(kept).toBe('kept');
    expect(await answers(d.socketPath)).toMatch(/"id":"probe"/);
    // Answered: the socket is ended gently, and nothing keeps this process.
    await until(() => !ownSockets().has(socket), 5000, 'the socket closed once answered');
  });

  it('a daemon that runs but stays silent still gets only the grace', async () => {
    const d = await fragileDaemon(60_000); // each request keeps it busy (running, state R) for a minute
    const { src, socket } = await connectedSource(d.socketPath, { requestTimeoutMs: 200, lingerMs: 200 });
    await until(() => d.received() >= 1, 5000, 'a request read');
    await src.stop();
    await until(() => !ownSockets().has(socket), 10_000, 'the socket closed after the grace');
    expect(stateOf(d.child.pid!)).not.toMatch(/[Tt]/);
    expect(d.replies()).toBe(0);
  });

  it('says "agentctl\'s daemon is stopped (SIGSTOP)" in its state and in the header while it is', async () => {
    const d = await fragileDaemon(20);
    const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, pollIntervalMs: 50, requestTimeoutMs: 200, closeWaitMs: 100, lingerMs: 200 });
    const engine = engineFor([src]);
    await until(() => src.snapshot().state.status === 'connected', 5000, 'a first read');
    d.child.kill('SIGSTOP');
    const state = await until(() => (src.snapshot().state.lastError === DAEMON_STOPPED ? src.snapshot().state : undefined), 5000, 'the stopped daemon named');
    expect(state).toMatchObject({ status: 'unreachable', cause: DAEMON_STOPPED });
    const ui = render(createElement(App, { engine, size: { columns: 200, rows: 24 }, onQuit: () => {} }));
    onCleanup(() => ui.unmount());
    await until(() => (ui.lastFrame() ?? '').split('\n')[0]!.includes(`agentctl ${d.socketPath}: not connected since`) && (ui.lastFrame() ?? '').split('\n')[0]!.includes(`(${DAEMON_STOPPED})`), 5000, () => `the header to name it:\n${ui.lastFrame()}`);
    d.child.kill('SIGCONT');
    await until(() => src.snapshot().state.status === 'connected', 5000, 'connected again once continued');
    expect(src.snapshot().state.lastError).toBeUndefined();
  });

  it('asks a stopped daemon nothing more while it stays stopped: continued, it reads only the read that went unanswered', async () => {
    const d = await fragileDaemon(20);
    const clock = new FakeClock(Date.now()); // the poll timers only: the requests' own timeouts are real
    const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, timers: clock, requestTimeoutMs: 200, closeWaitMs: 100, lingerMs: 200 });
    onCleanup(() => src.stop());
    src.start();
    await until(() => src.snapshot().state.status === 'connected' && clock.timeouts().length === 1, 5000, 'a first read');
    expect(d.received()).toBe(2); // session.list and lock.list
    d.child.kill('SIGSTOP');
    /** The poll due now runs, and the one after it is armed. */
    const nextPoll = async (what: string): Promise<void> => {
      const due = clock.timeouts()[0]!;
      await clock.advanceTo(due);
      await until(() => clock.timeouts().length === 1 && clock.timeouts()[0]! > due, 5000, what);
    };
    await nextPoll('a read that goes unanswered');
    const said = src.snapshot().state.lastError;
    for (let i = 0; i < 5; i++) await nextPoll(`poll ${i + 1} while it is stopped`);
    await src.stop();
    d.child.kill('SIGCONT');
    await afterReplies(d, 4);
    expect(d.received()).toBe(4);
    expect(alive(d)).toBe(true);
    expect(said).toBe(DAEMON_STOPPED);
  });

  it('`check` names the stopped daemon in its one line', async () => {
    const d = await fragileDaemon(20);
    d.child.kill('SIGSTOP');
    const env = { ...process.env, HOME: tempDir(), XDG_CONFIG_HOME: tempDir(), XDG_STATE_HOME: tempDir(), NO_COLOR: '1' };
    const check = spawn(process.execPath, [BIN, 'check', '--source', 'agentctl', '--agentctl-socket', d.socketPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    onCleanup(() => check.kill('SIGKILL'));
    let err = '';
    check.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    check.stdout!.resume();
    const code = new Promise<number | null>((resolve) => check.once('exit', (c) => resolve(c)));
    // It waits out agentctl's request timeout (8 s), then reports.
    await until(() => err.includes('\n'), 20_000, 'the report');
    expect(err).toContain(`ghostwatch: agentctl at ${d.socketPath}: ${DAEMON_STOPPED}\n`);
    d.child.kill('SIGCONT');
    expect(await code).toBe(2);
    await afterReplies(d, d.received());
    expect(d.stderr()).not.toMatch(/EPIPE/);
    expect(alive(d)).toBe(true);
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

// The real agentctl daemon (OrgLoop/agentctl) frozen with SIGSTOP while ghostwatch reads it. It has
// no 'error' handler on client sockets: a reply it writes, once continued, to a socket ghostwatch
// closed kills it with EPIPE, and nothing restarts it. ghostwatch keeps the socket of a stopped
// daemon open past its grace (lingerMs, small here) for as long as it stays stopped, and says so.
// Each daemon runs in a pid namespace of its own with a temp HOME (harness.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { DAEMON_STOPPED } from '../../src/sources/agentctl/daemon-process.js';
import { newSocket, ownSockets } from '../support/own-sockets.js';
import { BIN } from '../support/tmux.js';
import { until } from '../support/wait.js';
import { ask, buildAgentctl, startDaemon, type RealDaemon } from './harness.js';

const HOST = 'real-agentctl-test';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let cli = '';
const seen: string[] = [];
beforeAll(async () => {
  const built = await buildAgentctl();
  cli = built.cli;
  seen.push(`agentctl ${built.version}: ${cli}`);
});
afterAll(() => {
  process.stdout.write(`\nreal agentctl runs:\n${seen.map((l) => `  ${l}`).join('\n')}\n`);
});

async function daemon(): Promise<RealDaemon> {
  const d = await startDaemon(cli, mkdtempSync(join(tmpdir(), 'gw-real-agentctl-')));
  cleanups.push(() => d.stop());
  return d;
}

const stateOf = (pid: number): string | undefined => /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];

/** A source with a small grace, started and read once; the inode of its socket to the daemon. */
async function readingSource(d: RealDaemon): Promise<{ src: AgentctlSource; socket: string }> {
  const before = ownSockets();
  const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, pollIntervalMs: 100, requestTimeoutMs: 300, closeWaitMs: 100, lingerMs: 300 });
  cleanups.push(() => src.stop());
  src.start();
  await until(() => src.snapshot().state.status === 'connected', 10_000, 'a first read of the real daemon');
  return { src, socket: (await until(() => newSocket(before), 5_000, 'its socket')) as string };
}

describe('the real agentctl daemon, stopped (SIGSTOP) while ghostwatch reads it', () => {
  it('stopped past the grace, then continued: it lives, and answers a new request', async () => {
    const d = await daemon();
    const { src, socket } = await readingSource(d);
    process.kill(d.pid, 'SIGSTOP');
    await until(() => src.snapshot().state.status === 'unreachable', 10_000, 'its requests to time out');
    await src.stop();
    const t0 = Date.now();
    // Past the grace (300 ms): kept for the stopped daemon (the state says so), or closed.
    const outcome = await until(
      () => (/stays open until it is continued/.test(src.snapshot().state.lastError ?? '') ? 'kept' : !ownSockets().has(socket) ? 'closed' : undefined),
      20_000,
      'the grace to end',
    );
    const heldMs = Date.now() - t0;
    expect(stateOf(d.pid)).toBe('T');
    process.kill(d.pid, 'SIGCONT');
    // Continued, it writes its replies: to the socket kept open, which ghostwatch then ends gently; or
    // to the one closed, and it dies of EPIPE.
    if (outcome === 'kept') await until(() => !ownSockets().has(socket) || !d.alive(), 10_000, 'the socket closed once answered');
    else await until(() => !d.alive(), 10_000, 'the daemon to die').catch(() => undefined);
    const reply = d.alive() ? await ask(d.socketPath, 'lock.list').catch((e: Error) => `no answer (${e.message})`) : 'dead';
    seen.push(`stopped past a 300 ms grace (${outcome} after ${heldMs} ms), continued: ${d.alive() ? 'alive' : 'dead'}; a new lock.list: ${reply}`);
    expect(d.output()).not.toMatch(/EPIPE|Unhandled 'error'/);
    expect(d.alive()).toBe(true);
    expect(outcome).toBe('kept');
    expect(reply).toBe('{"id":"probe","result":[]}');
  });

  it('says "agentctl\'s daemon is stopped (SIGSTOP)" in its state while it is, and reads again once continued', async () => {
    const d = await daemon();
    const { src } = await readingSource(d);
    process.kill(d.pid, 'SIGSTOP');
    const state = await until(() => (src.snapshot().state.lastError === DAEMON_STOPPED ? src.snapshot().state : undefined), 10_000, 'the stopped daemon named');
    expect(state).toMatchObject({ status: 'unreachable', cause: DAEMON_STOPPED });
    process.kill(d.pid, 'SIGCONT');
    await until(() => src.snapshot().state.status === 'connected', 10_000, 'read again once continued');
    expect(src.snapshot().state.lastError).toBeUndefined();
    expect(d.alive()).toBe(true);
  });

  it("`check`'s one line names the stopped daemon; continued, the daemon lives and check ends", async () => {
    const d = await daemon();
    process.kill(d.pid, 'SIGSTOP');
    const env = { ...process.env, HOME: d.home, XDG_CONFIG_HOME: d.home, XDG_STATE_HOME: d.home, NO_COLOR: '1' };
    const check = spawn(process.execPath, [BIN, 'check', '--source', 'agentctl', '--agentctl-socket', d.socketPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => check.kill('SIGKILL'));
    let err = '';
    check.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    check.stdout!.resume();
    const code = new Promise<number | null>((resolve) => check.once('exit', (c) => resolve(c)));
    await until(() => err.includes('\n'), 30_000, 'the report');
    seen.push(`check on a stopped daemon: ${err.trim()}`);
    expect(err).toBe(`ghostwatch: agentctl at ${d.socketPath}: ${DAEMON_STOPPED}\n`);
    process.kill(d.pid, 'SIGCONT');
    expect(await code).toBe(2);
    await until(() => d.alive() && ask(d.socketPath, 'lock.list'), 10_000, 'an answer from the continued daemon');
    expect(d.output()).not.toMatch(/EPIPE/);
  });
});

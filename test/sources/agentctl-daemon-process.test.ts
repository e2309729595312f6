// The agentctl daemon's process, as the source asks about it when requests go unanswered: the one
// holding the socket's listening end, running or stopped (SIGSTOP), never a pid file's word alone.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { DaemonProcess } from '../../src/sources/agentctl/daemon-process.js';
import { describeOn } from '../support/platform.js';
import { onCleanup, sleeper, tempDir, until } from '../engine/helpers.js';

/** A stand-in daemon: `node` listening on `<dir>/agentctl.sock`; its pid. */
async function listening(dir: string): Promise<number> {
  const code = `require('node:net').createServer(() => {}).listen(process.argv[1], () => console.log('ready'))`;
  const child = spawn(process.execPath, ['-e', code, join(dir, 'agentctl.sock')], { stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  });
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  return child.pid!;
}

describeOn(['linux'], 'the daemon is found through /proc')('DaemonProcess', () => {
  it('reads the state of the process holding the socket: running, stopped, running again', async () => {
    const dir = tempDir();
    const pid = await listening(dir);
    const daemon = new DaemonProcess(join(dir, 'agentctl.sock'));
    expect(await daemon.state()).toEqual({ state: 'running', pid });
    // A signal lands a moment after kill() returns: each state is waited for.
    process.kill(pid, 'SIGSTOP');
    expect(await until(async () => (await daemon.stopped()) && daemon.state(), 5000, 'stopped')).toEqual({ state: 'stopped', pid });
    process.kill(pid, 'SIGCONT');
    expect(await until(async () => !(await daemon.stopped()) && daemon.state(), 5000, 'running again')).toEqual({ state: 'running', pid });
  });

  it('is not fooled by a pid file that names another, stopped process', async () => {
    const dir = tempDir();
    const pid = await listening(dir);
    const other = sleeper();
    process.kill(other.pid, 'SIGSTOP');
    writeFileSync(join(dir, 'agentctl.pid'), `${other.pid}\n`);
    expect(await new DaemonProcess(join(dir, 'agentctl.sock')).state()).toEqual({ state: 'running', pid });
  });

  it('is unknown (so the grace applies) when nothing listens on the socket', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agentctl.pid'), `${sleeper().pid}\n`);
    expect(await new DaemonProcess(join(dir, 'agentctl.sock')).state()).toMatchObject({ state: 'unknown', why: expect.stringMatching(/nothing listens/) });
  });
});

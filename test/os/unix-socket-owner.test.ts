// Who serves a Unix socket path: its listening row in /proc/net/unix, and the real process holding
// it, found whatever a pid file says (a stale pid, or the pid 1 a daemon in its own pid namespace
// writes), and nothing when nothing listens.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOwnerHints } from '../../src/os/port-owner.js';
import { listeningUnixInodes, unixSocketServer } from '../../src/os/unix-socket-owner.js';
import { describeOn } from '../support/platform.js';
import { childrenOf, onCleanup, sleeper, tempDir, until } from '../engine/helpers.js';

const HEADER = 'Num       RefCount Protocol Flags    Type St Inode Path';
const row = (flags: string, st: string, inode: number, path = ''): string => `0000000012345678: 00000002 00000000 ${flags} 0001 ${st} ${inode}${path ? ` ${path}` : ''}`;

describe('listeningUnixInodes', () => {
  it('keeps the listening rows bound to the path, spaces in it and all', () => {
    const table = [
      HEADER,
      row('00010000', '01', 101, '/home/a/.agentctl/agentctl.sock'), // listening
      row('00000000', '03', 102, '/home/a/.agentctl/agentctl.sock'), // an accepted connection on it
      row('00000000', '03', 103), // a client: no path
      row('00010000', '01', 104, '/home/a/.agentctl/agentctl.sock.old'),
      row('00010000', '01', 105, '@/home/a/.agentctl/agentctl.sock'), // abstract
      row('00010000', '01', 106, '/tmp/a dir/x.sock'),
      'garbage',
      '',
    ].join('\n');
    expect(listeningUnixInodes(table, '/home/a/.agentctl/agentctl.sock')).toEqual([101]);
    expect(listeningUnixInodes(table, '/tmp/a dir/x.sock')).toEqual([106]);
    expect(listeningUnixInodes(table, '/nowhere.sock')).toEqual([]);
  });
});

/** `node` listening on `path` as a child (under `prefix`, e.g. unshare): the pid that holds the socket. */
async function listener(path: string, prefix: readonly string[] = []): Promise<number> {
  const code = `require('node:net').createServer(() => {}).listen(process.argv[1], () => console.log('ready'))`;
  const cmd = [...prefix, process.execPath, '-e', code, path];
  const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => child.kill('SIGKILL'));
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  if (prefix.length === 0) return child.pid!;
  return (await until(() => childrenOf(child.pid!)[0], 5_000, 'the namespaced listener')) as number;
}

describeOn(['linux'], 'the socket table and fds are read from /proc')('unixSocketServer', () => {
  it('finds the process listening on the path, not the stale pid it was told to read first', async () => {
    const path = join(tempDir(), 'daemon.sock');
    const pid = await listener(path);
    const stale = sleeper().pid;
    expect(await unixSocketServer(path, { hints: createOwnerHints(), likelyPid: stale })).toEqual({ ok: true, pid });
  });

  it('finds a listener in a pid namespace of its own, whose pid file would say 1', async () => {
    const path = join(tempDir(), 'daemon.sock');
    const pid = await listener(path, ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child']);
    const hints = createOwnerHints();
    expect(await unixSocketServer(path, { hints, likelyPid: 1 })).toEqual({ ok: true, pid });
    // Asked again, the hints read that one process first.
    expect(hints.byInode.size).toBe(1);
    expect([...hints.byInode.values()]).toEqual([pid]);
  });

  it('says nothing listens when nothing does', async () => {
    const path = join(tempDir(), 'none.sock');
    expect(await unixSocketServer(path)).toEqual({ ok: false, why: `nothing listens on ${path}` });
  });

  it('says why when the table cannot be read', async () => {
    const r = await unixSocketServer('/x.sock', { tablePath: join(tempDir(), 'missing') });
    expect(r).toMatchObject({ ok: false, why: expect.stringMatching(/cannot read .*missing \(ENOENT\)/) });
  });
});

// /proc mounted with hidepid=2 (common on shared servers): another user's live process answers
// kill(pid, 0) with EPERM while /proc/<pid> does not exist for us. Only kill decides existence, so
// such a process is live ("details hidden"), never a ghost. A real proc mount in a private mount
// namespace, and the real CLI running as an unprivileged user.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { cliCopyForAnyUser, otherUserRequirement, runCommand as run } from '../support/cli.js';
import { isLinux, killAndReap, spawnSleep } from '../support/processes.js';
import { deadPid as aDeadPid } from '../support/processes.js';

const requirement = otherUserRequirement('unshare --mount, mount -t proc');
// Under CI a missing requirement is a failure, never a silent pass.
const maybe = requirement === undefined || process.env.CI === 'true' ? describe : describe.skip;

maybe('a hardened /proc (hidepid=2) and an unprivileged monitor', () => {
  let server: RegistryServer;
  let dir: string;
  const sleeper = isLinux ? spawnSleep(120) : undefined;
  let deadPid = 0;

  beforeAll(async () => {
    if (requirement !== undefined) throw new Error(`CI=true and this test ${requirement}`);
    // A copy of the launcher and the bundle that the unprivileged user can read.
    dir = cliCopyForAnyUser('gw-hidepid-');
    deadPid = await aDeadPid();
    server = await startRegistryServer({ port: 0, log: () => {} });
    const ws = new WebSocket(server.url);
    await new Promise((r) => ws.once('open', r));
    for (const [id, pid, port] of [['alive-root', sleeper!.pid, 40_001], ['dead', deadPid, 40_002]] as const) {
      await new Promise((resolve) => {
        ws.once('message', function skipInit() {
          ws.once('message', resolve);
        });
        ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/repo', port, status: 'active', pid } }));
      });
    }
  });
  afterAll(async () => {
    if (sleeper) await killAndReap(sleeper);
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the setup is real: as nobody, kill says EPERM and /proc shows nothing for the root-owned process', async () => {
    const shell = `mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'test -e /proc/${sleeper!.pid}/stat && echo visible || echo hidden; kill -0 ${sleeper!.pid} 2>&1 || true'`;
    const r = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell], process.env);
    expect(r.stdout + r.stderr).toMatch(/hidden/);
    expect(r.stdout + r.stderr).toMatch(/not permitted/i);
  });

  it('`check` calls the hidden live process live (details hidden), and still finds the real ghost', async () => {
    const shell = `mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" "$@"`;
    const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, 'none'), XDG_STATE_HOME: join(dir, 'state'), NO_COLOR: '1', HYPIVISOR_WS: server.url };
    const r = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell, process.execPath, join(dir, 'bin/ghostwatch.js'), 'check', '--json'], env);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as { findings: { id: string; verdict: string; note?: string; reason: string; evidence: { kill?: string } }[] };
    const alive = report.findings.find((f) => f.id === 'alive-root');
    expect(alive).toMatchObject({ verdict: 'live', note: 'details hidden', evidence: { kill: 'EPERM' } });
    expect(alive?.reason).toMatch(/details hidden \(hidepid\)/);
    expect(report.findings.find((f) => f.id === 'dead')).toMatchObject({ verdict: 'ghost', evidence: { kill: 'ESRCH' } });
    expect(r.code).toBe(1); // one problem: the real ghost
  });
});

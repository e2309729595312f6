// The fake hosts the fleet tests stand on (test/support/fake-host.ts): each is its own hostname,
// its own pids and /proc, and a real OpenSSH server on loopback that a batch-mode client reaches
// with the args it returns; sshd can go down, come back, drop its connections or hang; a wrong
// host key and a missing client key fail with OpenSSH's own words, never a prompt. Everything a
// host started is gone after close().
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FAKE_HOST_REQUIREMENT, startFakeHost, startPiAgentIn, type FakeHost } from '../support/fake-host.js';
import { startStockHypivisor } from '../support/stock-hypivisor.js';
import { describeOn } from '../support/platform.js';
import { inCi } from '../support/summary-reporter.js';

const describeLinux = describeOn(['linux'], 'namespaces (unshare, nsenter) are Linux only', FAKE_HOST_REQUIREMENT === undefined || inCi());

function nsLink(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** Processes of this machine whose PID namespace is `ns`. */
function processesIn(ns: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((p) => nsLink(p) === ns);
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), read inside the host over ssh. */
async function startTicks(host: FakeHost, insidePid: number): Promise<string> {
  const r = await host.ssh(`cut -d')' -f2- /proc/${insidePid}/stat | awk '{print $20}'`);
  expect(r.stderr).toBe('');
  return r.stdout.trim();
}

describeLinux('fake hosts in namespaces, reached over real SSH', () => {
  let a: FakeHost;
  let b: FakeHost;
  const namespaces: string[] = [];

  beforeAll(async () => {
    if (FAKE_HOST_REQUIREMENT !== undefined) throw new Error(`CI=true and fake hosts ${FAKE_HOST_REQUIREMENT}`);
    [a, b] = await Promise.all([startFakeHost({ hostname: 'build-42' }), startFakeHost({ hostname: 'gpu-7' })]);
    namespaces.push(a.pidNamespace, b.pidNamespace);
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    for (const ns of namespaces) expect(processesIn(ns)).toEqual([]);
  });

  it('answers ssh with its own hostname, its own PID namespace and small pids', async () => {
    const r = await a.ssh('hostname; echo $$; readlink /proc/self/ns/pid');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [name, pid, ns] = r.stdout.trim().split('\n');
    expect(name).toBe('build-42');
    expect(Number(pid)).toBeLessThan(1000);
    expect(ns).toBe(a.pidNamespace);
    // initPid is the host's pid 1, seen from here.
    expect(readFileSync(`/proc/${a.initPid}/status`, 'utf8')).toMatch(new RegExp(`^NSpid:\\s+${a.initPid}\\s+1$`, 'm'));
    const other = await b.ssh('hostname; readlink /proc/self/ns/pid');
    expect(other.stdout.trim().split('\n')).toEqual(['gpu-7', b.pidNamespace]);
    expect(b.pidNamespace).not.toBe(a.pidNamespace);
    expect(b.sshPort).not.toBe(a.sshPort);
  });

  it('runs commands without this machine’s shell start-up files (empty inside the host, untouched outside)', async () => {
    const bashrc = join(homedir(), '.bashrc');
    const created = !existsSync(bashrc);
    if (created) writeFileSync(bashrc, 'echo from-this-machine\n');
    const before = readFileSync(bashrc, 'utf8');
    const c = await startFakeHost({ hostname: 'dotfiles-1' });
    try {
      expect(before.length).toBeGreaterThan(0);
      const r = await c.ssh('wc -c < ~/.bashrc; echo ok');
      expect(r.stdout).toBe('0\nok\n');
      expect(readFileSync(bashrc, 'utf8')).toBe(before);
    } finally {
      await c.close();
      if (created) rmSync(bashrc);
    }
    // Checked at once: a namespace's id is reused by the next one made (other test files make hosts).
    expect(processesIn(c.pidNamespace)).toEqual([]);
  });

  it('the same host through its ssh_config alias', async () => {
    const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn('ssh', ['-F', a.sshConfigFile, 'build-42', 'hostname'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.once('close', (code) => resolve({ code, out }));
    });
    expect(r).toEqual({ code: 0, out: 'build-42\n' });
  });

  it('a process spawned in the host is alive there by its inside pid, and not here by that pid', async () => {
    const agent = await a.spawnInHost('sleep', ['300']);
    expect(nsLink(agent.outsidePid)).toBe(a.pidNamespace);
    expect(agent.insidePid).not.toBe(agent.outsidePid);
    expect(readFileSync(`/proc/${agent.outsidePid}/status`, 'utf8')).toMatch(new RegExp(`^NSpid:\\s+${agent.outsidePid}\\s+${agent.insidePid}$`, 'm'));
    // Here, the inside pid is nobody, or a process of another namespace.
    expect(nsLink(agent.insidePid)).not.toBe(a.pidNamespace);
    const seen = await a.ssh(`kill -0 ${agent.insidePid} && tr "\\0" " " < /proc/${agent.insidePid}/cmdline`);
    expect(seen).toMatchObject({ code: 0, stdout: 'sleep 300 ', stderr: '' });
    // The other host has no such process (its pids are its own).
    const elsewhere = await b.ssh(`ls /proc/${agent.insidePid}/cmdline 2>/dev/null; readlink /proc/${agent.insidePid}/ns/pid 2>/dev/null; true`);
    expect(elsewhere.stdout).not.toContain(a.pidNamespace);
    await agent.kill();
    const gone = await a.ssh(`kill -0 ${agent.insidePid}`);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/No such process/);
  });

  it('an agent in the host registers with the registry on loopback under the host’s name and its inside pid', async () => {
    const registry = await startStockHypivisor();
    try {
      const agent = await startPiAgentIn(a, registry.url);
      const node = registry.nodes.get(agent.id);
      expect(node).toMatchObject({ machine: 'build-42', pid: agent.insidePid, port: agent.port, status: 'active', cwd: process.cwd() });
      expect(agent.insidePid).not.toBe(agent.outsidePid);
      expect((await a.ssh(`kill -0 ${agent.insidePid} && echo alive`)).stdout).toBe('alive\n');
      await agent.kill();
      await expect.poll(() => registry.nodes.get(agent.id)?.status).toBe('offline');
    } finally {
      await registry.close();
    }
  });

  it('a zombie in the host, reaped by the host’s pid 1 once its parent dies', async () => {
    const { insidePid, parent } = await a.makeZombie();
    const r = await a.ssh(`ps -o stat= -p ${insidePid}`);
    expect(r.stdout.trim()).toMatch(/^Z/);
    await parent.kill();
    await expect.poll(async () => (await a.ssh(`kill -0 ${insidePid} 2>&1`)).stdout).toMatch(/No such process/);
  });

  it('a recycled pid: a new process under a dead one’s inside pid, with another start time', async () => {
    const first = await a.spawnInHost('sleep', ['300']);
    const before = await startTicks(a, first.insidePid);
    await first.kill();
    await new Promise((r) => setTimeout(r, 30)); // at least one clock tick later
    const second = await a.spawnWithPid(first.insidePid, 'sleep', ['301']);
    expect(second.insidePid).toBe(first.insidePid);
    expect(second.outsidePid).not.toBe(first.outsidePid);
    const after = await startTicks(a, second.insidePid);
    expect(after).not.toBe(before);
    expect((await a.ssh(`tr "\\0" " " < /proc/${second.insidePid}/cmdline`)).stdout).toBe('sleep 301 ');
    await second.kill();
  });

  it('after a pid is asked for, the host goes on from its newest pid: no dead pid of the test comes back', async () => {
    const older = await a.spawnInHost('sleep', ['300']);
    const newer = await a.spawnInHost('sleep', ['300']);
    await older.kill();
    await newer.kill();
    const again = await a.spawnWithPid(older.insidePid, 'sleep', ['301']);
    expect(again.insidePid).toBe(older.insidePid);
    const next = await a.spawnInHost('sleep', ['300']);
    expect(next.insidePid).toBeGreaterThan(newer.insidePid);
    await Promise.all([again.kill(), next.kill()]);
  });

  it('sshd stopped: the batch-mode client fails at once (refused), and works again once started', async () => {
    await a.stopSshd();
    expect(a.sshdRunning).toBe(false);
    const down = await a.ssh('hostname');
    expect(down.code).toBe(255);
    expect(down.stderr).toMatch(/Connection refused/);
    expect(down.stdout).toBe('');
    // The host itself is still there: only its sshd went.
    const agent = await a.spawnInHost('sleep', ['300']);
    await a.startSshd();
    expect(a.sshdRunning).toBe(true);
    const up = await a.ssh(`hostname; kill -0 ${agent.insidePid} && echo alive`);
    expect(up).toMatchObject({ code: 0, stdout: 'build-42\nalive\n' });
    await agent.kill();
  });

  it('connections dropped: a long-lived ssh ends, a new one connects', async () => {
    const session = spawn('ssh', [...a.sshArgs, '-F', '/dev/null', a.destination, 'echo up; exec sleep 300'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const ended = new Promise<number | null>((resolve) => session.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => session.stdout.on('data', (d: Buffer) => d.toString().includes('up') && resolve()));
    await a.dropConnections();
    expect(await ended).toBe(255);
    expect(a.sshdRunning).toBe(true);
    expect((await a.ssh('hostname')).stdout).toBe('build-42\n');
  });

  it('sshd hung: connects are accepted and the client gives up at its ConnectTimeout', async () => {
    a.pauseSshd();
    try {
      const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn('ssh', [...a.sshArgs, '-F', '/dev/null', '-o', 'ConnectTimeout=1', a.destination, 'hostname'], { stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.once('close', (code) => resolve({ code, err }));
      });
      expect(r.code).toBe(255);
      expect(r.err).toMatch(/timed out/);
    } finally {
      a.resumeSshd();
    }
    expect((await a.ssh('hostname')).stdout).toBe('build-42\n');
  });

  it('close() leaves no process of the host, no sshd and no temp dir', async () => {
    const host = await startFakeHost({ hostname: 'short-lived' });
    const agent = await host.spawnInHost('sleep', ['300']);
    await host.makeZombie();
    expect(processesIn(host.pidNamespace).length).toBeGreaterThanOrEqual(4); // pid 1, sshd, sleep, zombie's parent
    await host.close();
    expect(processesIn(host.pidNamespace)).toEqual([]);
    expect(existsSync(`/proc/${agent.outsidePid}`)).toBe(false);
    expect(existsSync(host.dir)).toBe(false);
    await host.close(); // twice is fine
  });
});

describeLinux('fake hosts that refuse the client', () => {
  const hosts: FakeHost[] = [];

  beforeAll(() => {
    if (FAKE_HOST_REQUIREMENT !== undefined) throw new Error(`CI=true and fake hosts ${FAKE_HOST_REQUIREMENT}`);
  });

  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.close()));
    for (const h of hosts) expect(processesIn(h.pidNamespace)).toEqual([]);
  });

  it('a wrong host key: a host key error, nothing run, no prompt', async () => {
    const host = await startFakeHost({ hostname: 'impostor', hostKey: 'wrong' });
    hosts.push(host);
    const r = await host.ssh('echo ran');
    expect(r.code).toBe(255);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED/);
    expect(r.stderr).toMatch(/Host key verification failed/);
  });

  it('the client key not authorized: Permission denied (publickey), no prompt', async () => {
    const host = await startFakeHost({ hostname: 'locked', authorized: false });
    hosts.push(host);
    const r = await host.ssh('echo ran');
    expect(r.code).toBe(255);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/Permission denied \(publickey\)/);
  });
});

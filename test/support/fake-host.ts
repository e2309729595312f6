// Real "other hosts" on this machine, for the fleet tests (issue 16): the fleet hosts of
// src/demo/fleet-hosts.ts (own hostname, pids, /proc, a private sshd on loopback, keys in a temp
// dir), plus what only tests need: a wrong host key or an unauthorized client, a process under a
// chosen (recycled) pid, a zombie, a hung sshd, and `ssh` as a test asks the host.
//
// FAKE_HOST_REQUIREMENT says what this machine lacks, if anything. No vitest import here, so
// benches can use it too. close() also waits for the ssh clients ssh() started.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fleetHostRequirement, SSHD, startFleetHost, type FleetHost, type InHostProcess, type SpawnInHostOptions } from '../../src/demo/fleet-hosts.js';
import { keygen } from '../../src/demo/fleet-ssh.js';
import { exited, nsPids, signal } from '../../src/demo/host-processes.js';
import { PI_AGENT_SCRIPT } from './pi-agent.js';

export { SSHD, type InHostProcess, type SpawnInHostOptions };

/** Why fake hosts cannot be made on this machine, or undefined when they can. */
export const FAKE_HOST_REQUIREMENT: string | undefined = (() => {
  const missing = fleetHostRequirement();
  return missing === undefined ? undefined : `needs ${missing.needs}`;
})();

export interface FakeHostOptions {
  /** The host's name: `hostname` inside it, and the Host alias in sshConfigFile. */
  readonly hostname: string;
  /** The login (an existing local user with a shell); root by default. */
  readonly user?: string;
  /** 'wrong': the client's known-hosts file holds another key than the one sshd presents. */
  readonly hostKey?: 'right' | 'wrong';
  /** false: sshd knows no key for the client (publickey auth fails: "Permission denied"). */
  readonly authorized?: boolean;
}

export interface SshResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface FakeHost extends FleetHost {
  /** Like spawnInHost, the process getting inside pid `insidePid` (free in the host): a recycled pid. */
  spawnWithPid(insidePid: number, cmd: string, args: readonly string[], opts?: SpawnInHostOptions): Promise<InHostProcess>;
  /** A zombie in the host: a child of `parent` (a `sleep` that never waits), until parent is killed. */
  makeZombie(): Promise<{ insidePid: number; parent: InHostProcess }>;
  /** `ssh <sshArgs> -o ConnectTimeout=5 destination command`, stdin closed: the way a test asks the host. */
  ssh(command: string): Promise<SshResult>;
  /** SIGSTOP / SIGCONT every sshd process of the host: connects are accepted, nothing answers (a hung host). */
  pauseSshd(): void;
  resumeSshd(): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startFakeHost(options: FakeHostOptions): Promise<FakeHost> {
  if (FAKE_HOST_REQUIREMENT !== undefined) throw new Error(`fake hosts: this machine ${FAKE_HOST_REQUIREMENT}`);
  const host = await startFleetHost({ hostname: options.hostname, ...(options.user === undefined ? {} : { user: options.user }) });
  const clients = new Set<ChildProcess>();
  try {
    if (options.hostKey === 'wrong') {
      const other = keygen(join(host.dir, 'other_host_key'), 'not-this-host');
      writeFileSync(host.knownHostsFile, `[127.0.0.1]:${host.sshPort} ${other}\n`);
    }
    // sshd reads the authorized keys at every login: emptied now, no login succeeds.
    if (options.authorized === false) writeFileSync(host.authorizedKeysFile, '');
  } catch (error) {
    await host.close();
    throw error;
  }
  const name = options.hostname;

  const spawnWithPid = async (insidePid: number, cmd: string, args: readonly string[], opts: SpawnInHostOptions = {}): Promise<InHostProcess> => {
    if (!Number.isInteger(insidePid) || insidePid < 2) throw new Error(`fake hosts: cannot ask for pid ${insidePid}`);
    // The next pid the host's namespace hands out is ns_last_pid + 1. Something else of the host may
    // take it first (a forking sshd, or the probe loop's watchers, whose `sleep 0.5` then holds it for
    // up to a second): try again for a while, not a fixed number of times in a row.
    // The counter is wound back only for this spawn: afterwards it goes on from where it was, or
    // every process the host starts later (sshd's sessions, the probes) would be handed the pids
    // of processes that died since `insidePid` was new, and a test's dead pid would come back alive.
    const saved = join(host.dir, `ns-last-pid-${insidePid}`);
    await host.runInHost(`cat /proc/sys/kernel/ns_last_pid > '${saved}'`);
    const windForward = (): Promise<void> =>
      host.runInHost(`h=$(cat '${saved}'); c=$(cat /proc/sys/kernel/ns_last_pid); if [ "$c" -lt "$h" ]; then echo "$h" > /proc/sys/kernel/ns_last_pid; fi; rm -f '${saved}'`);
    const end = Date.now() + 5_000;
    while (Date.now() < end) {
      await host.runInHost(`echo ${insidePid - 1} > /proc/sys/kernel/ns_last_pid`);
      const proc = await host.spawnInHost(cmd, args, opts);
      if (proc.insidePid === insidePid) {
        await windForward();
        return proc;
      }
      await proc.kill();
      await sleep(50);
    }
    await windForward();
    throw new Error(`fake host ${name}: pid ${insidePid} is not free in the host`);
  };

  const makeZombie = async (): Promise<{ insidePid: number; parent: InHostProcess }> => {
    // sh starts a child that exits at once, prints its pid, and becomes a sleep that never waits.
    // The child lives 0.2 s: one that exits before the exec may be reaped by sh itself.
    const parent = await host.spawnInHost('sh', ['-c', 'sleep 0.2 & echo "$!"; exec sleep 3600'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const insidePid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      parent.child.once('exit', () => reject(new Error(`fake host ${name}: the zombie's parent exited`)));
    });
    // Wait until it is one: state Z in the host's /proc, seen from here through its outside pid.
    const end = Date.now() + 5000;
    for (;;) {
      const zombie = host.processes().find((p) => nsPids(p)?.at(-1) === insidePid);
      let state: string | undefined;
      try {
        state = zombie === undefined ? undefined : /^State:\s+(\S)/m.exec(readFileSync(`/proc/${zombie}/status`, 'utf8'))?.[1];
      } catch {
        state = undefined;
      }
      if (state === 'Z') return { insidePid, parent };
      if (Date.now() > end) throw new Error(`fake host ${name}: pid ${insidePid} did not become a zombie`);
      await sleep(5);
    }
  };

  const ssh = (command: string): Promise<SshResult> =>
    new Promise((resolve) => {
      const child = spawn('ssh', [...host.sshArgs, '-F', '/dev/null', '-o', 'ConnectTimeout=5', host.destination, command], { stdio: ['ignore', 'pipe', 'pipe'] });
      clients.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('close', (code) => {
        clients.delete(child);
        resolve({ code, stdout, stderr });
      });
    });

  const close = async (): Promise<void> => {
    await host.close();
    const late = setTimeout(() => clients.forEach((c) => c.pid !== undefined && signal(c.pid, 'SIGKILL')), 5000);
    await Promise.all([...clients].map(exited));
    clearTimeout(late);
  };

  // The fleet host underneath, as the prototype: its getters (sshdRunning) stay live.
  return Object.assign(Object.create(host) as FleetHost, {
    spawnWithPid,
    makeZombie,
    ssh,
    pauseSshd: () => host.sshdPids().forEach((p) => signal(p, 'SIGSTOP')),
    resumeSshd: () => host.sshdPids().forEach((p) => signal(p, 'SIGCONT')),
    close,
  });
}

export interface HostAgent extends InHostProcess {
  /** The first (or only) session's id and port, as the agent registered them. */
  readonly id: string;
  readonly port: number;
  readonly ids: readonly string[];
  readonly ports: readonly number[];
}

/**
 * test/support/pi-agent.mjs started inside `host`: it registers with the registry at `url`
 * (loopback: the hosts share this machine's network) as machine `host.hostname` with its inside
 * pid. Resolves once registered. It leaves when its stdin closes, or by kill().
 */
export async function startPiAgentIn(host: FakeHost, url: string, flags: readonly string[] = []): Promise<HostAgent> {
  const proc = await host.spawnInHost(process.execPath, [PI_AGENT_SCRIPT, url, ...flags], { stdio: ['pipe', 'pipe', 'pipe'] });
  const { child } = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (error: Error): void => {
      clearTimeout(timer);
      void proc.kill();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`pi agent in ${host.hostname} did not register in 10 s: ${err}`)), 10_000);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const early = (code: number | null, sig: NodeJS.Signals | null): void => fail(new Error(`pi agent in ${host.hostname} exited (${code ?? sig}) before registering: ${err}`));
    child.once('exit', early);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n') || line === undefined) return;
      clearTimeout(timer);
      child.off('exit', early);
      const m = JSON.parse(line) as { registered: string[]; ports: number[]; pid: number };
      if (m.pid !== undefined && m.pid !== proc.insidePid) return fail(new Error(`pi agent in ${host.hostname} says pid ${m.pid}, its inside pid is ${proc.insidePid}`));
      resolve({ ...proc, id: m.registered[0]!, port: m.ports[0]!, ids: m.registered, ports: m.ports });
    });
  });
}

// Real "other hosts" on this machine, for the fleet tests (issue 16): each fake host is a process
// tree in new UTS, PID and mount namespaces (its own hostname, its own pids and /proc, its own /run
// and /var/log), running a private OpenSSH server on a free loopback port with keys made for it
// in a temp dir. The network is this machine's (loopback only): agents in a fake host reach the
// registry on 127.0.0.1 as they would on one machine, and its sshd listens on 127.0.0.1:PORT.
//
// Linux, root, util-linux (unshare, nsenter) and openssh-server (/usr/sbin/sshd) are needed:
// FAKE_HOST_REQUIREMENT says which is missing. No vitest import here, so benches can use it too.
//
// Teardown: close() SIGKILLs the host's pid 1 through unshare (--kill-child), which takes every
// process of the PID namespace with it, then removes the temp dir. Should the test process die
// first, pid 1 reads its stdin (a pipe from this process) and leaves at EOF: the host goes too.
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PI_AGENT_SCRIPT } from './pi-agent.js';

export const SSHD = '/usr/sbin/sshd';

/** Why fake hosts cannot be made on this machine, or undefined when they can. */
export const FAKE_HOST_REQUIREMENT: string | undefined = (() => {
  if (process.platform !== 'linux') return 'needs Linux (namespaces)';
  if (process.getuid?.() !== 0) return 'needs root (unshare --pid --uts --mount, nsenter)';
  for (const tool of ['unshare', 'nsenter', 'ssh', 'ssh-keygen']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `needs ${tool} (${tool.startsWith('ssh') ? 'openssh-client' : 'util-linux'})`;
    }
  }
  try {
    accessSync(SSHD, constants.X_OK);
  } catch {
    return `needs ${SSHD} (openssh-server)`;
  }
  return undefined;
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

export interface InHostProcess {
  /** The nsenter process this test spawned; its stdio are the in-host process's. */
  readonly child: ChildProcess;
  /** The in-host process's pid on this machine (a child of `child`). */
  readonly outsidePid: number;
  /** Its pid inside the host's PID namespace (what the host's ps and kill see). */
  readonly insidePid: number;
  /** SIGKILL (by its outside pid) and wait until nsenter has reaped it and exited. */
  kill(): Promise<void>;
}

export interface SpawnInHostOptions {
  readonly stdio?: StdioOptions;
  readonly env?: NodeJS.ProcessEnv;
  /** Working directory inside the host (the file system is this machine's, but /run and /var/log); this process's by default. */
  readonly cwd?: string;
}

export interface SshResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface FakeHost {
  readonly hostname: string;
  readonly user: string;
  /** The loopback port sshd listens on (the same after stopSshd/startSshd). */
  readonly sshPort: number;
  /** `user@127.0.0.1`. */
  readonly destination: string;
  /**
   * Everything an OpenSSH client needs besides the destination: -p PORT, -i KEY, and -o
   * UserKnownHostsFile, GlobalKnownHostsFile=/dev/null, StrictHostKeyChecking=yes, BatchMode=yes,
   * IdentitiesOnly=yes. No -F: add `-F sshConfigFile` or `-F /dev/null` to leave ~/.ssh/config out.
   */
  readonly sshArgs: readonly string[];
  /** An ssh_config with `Host <hostname>` (HostName 127.0.0.1, Port, User, the same options), for `ssh -F FILE <hostname>`. */
  readonly sshConfigFile: string;
  readonly identityFile: string;
  readonly knownHostsFile: string;
  /** The temp dir holding keys, config, pid file (removed by close). */
  readonly dir: string;
  /** The host's pid 1, as this machine sees it (nsenter -t this). */
  readonly initPid: number;
  /** `/proc/<pid>/ns/pid` of the host: a process is in the host when its link reads the same. */
  readonly pidNamespace: string;
  /** Run `cmd args` inside the host's namespaces (not through ssh); resolves once both pids are known. */
  spawnInHost(cmd: string, args: readonly string[], opts?: SpawnInHostOptions): Promise<InHostProcess>;
  /** Like spawnInHost, the process getting inside pid `insidePid` (free in the host): a recycled pid. */
  spawnWithPid(insidePid: number, cmd: string, args: readonly string[], opts?: SpawnInHostOptions): Promise<InHostProcess>;
  /** A zombie in the host: a child of `parent` (a `sleep` that never waits), until parent is killed. */
  makeZombie(): Promise<{ insidePid: number; parent: InHostProcess }>;
  /** `ssh <sshArgs> -o ConnectTimeout=5 destination command`, stdin closed: the way a test asks the host. */
  ssh(command: string): Promise<SshResult>;
  /** Whether sshd runs (started and not stopped). */
  readonly sshdRunning: boolean;
  /** Kill sshd and every connection it holds: the host stops answering SSH (connection refused). */
  stopSshd(): Promise<void>;
  /** Start sshd again, same port and keys. */
  startSshd(): Promise<void>;
  /** Kill the connections' sshd processes only; the listener stays (a dropped link, the host still up). */
  dropConnections(): Promise<void>;
  /** SIGSTOP / SIGCONT every sshd process of the host: connects are accepted, nothing answers (a hung host). */
  pauseSshd(): void;
  resumeSshd(): void;
  /** What sshd wrote (-e: its log on stderr), for a failing test's message. */
  sshdLog(): string;
  /** Kill everything of the host and remove its temp dir. Safe to call twice. */
  close(): Promise<void>;
}

const INIT_SH = `
hostname "$1" || exit 1
mount -t tmpfs -o mode=0755 gw-run /run || exit 1
mkdir -m 0755 /run/sshd || exit 1
mount -t tmpfs -o mode=0755 gw-log /var/log || exit 1
: > /var/log/wtmp; : > /var/log/lastlog
trap 'exit 0' TERM
echo ready
read -r _
`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The NSpid line of /proc/<pid>/status: [outside, ..., innermost]. */
function nsPids(pid: number): number[] | undefined {
  try {
    const line = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return line?.trim().split(/\s+/).map(Number);
  } catch {
    return undefined;
  }
}

function nsLink(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

function keygen(file: string, comment: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
}

export async function startFakeHost(options: FakeHostOptions): Promise<FakeHost> {
  if (FAKE_HOST_REQUIREMENT !== undefined) throw new Error(`fake hosts: this machine ${FAKE_HOST_REQUIREMENT}`);
  if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/.test(options.hostname)) throw new Error(`fake hosts: not a host name: ${options.hostname}`);
  const user = options.user ?? 'root';
  const dir = mkdtempSync(join(tmpdir(), `gw-fakehost-${options.hostname}-`));
  const children = new Set<ChildProcess>();
  let init: ChildProcess | undefined;
  let hostInit: { pid: number; ns: string } | undefined;
  let closed = false;

  const track = (child: ChildProcess): ChildProcess => {
    children.add(child);
    child.once('exit', () => children.delete(child));
    return child;
  };

  const teardown = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    // SIGKILL to the host's pid 1: the kernel kills every process of its PID namespace, and the
    // nsenter and unshare processes here exit as their children do. Killing an nsenter would not
    // reach its child, so they are only waited for (a stray one is killed after 5 s).
    if (hostInit !== undefined && nsLink(hostInit.pid) === hostInit.ns) signal(hostInit.pid, 'SIGKILL');
    else if (init?.pid !== undefined) signal(init.pid, 'SIGKILL'); // no pid 1 yet: unshare --kill-child takes it
    const late = setTimeout(() => children.forEach((c) => c.pid !== undefined && signal(c.pid, 'SIGKILL')), 5000);
    await Promise.all([...children].map(exited));
    clearTimeout(late);
    if (hostInit !== undefined) {
      const ns = hostInit.ns;
      const inNs = (): boolean => readdirSync('/proc').some((e) => /^\d+$/.test(e) && nsLink(Number(e)) === ns);
      for (const end = Date.now() + 5000; inNs() && Date.now() < end; ) await sleep(10);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const hostKey = join(dir, 'host_key');
    const identityFile = join(dir, 'client_key');
    const presented = keygen(hostKey, `${options.hostname}-host`);
    const clientKey = keygen(identityFile, 'ghostwatch-test-client');
    const known = options.hostKey === 'wrong' ? keygen(join(dir, 'other_host_key'), 'not-this-host') : presented;
    const authorizedKeys = join(dir, 'authorized_keys');
    writeFileSync(authorizedKeys, options.authorized === false ? '' : `${clientKey}\n`);

    init = track(
      spawn('unshare', ['--uts', '--pid', '--mount', '--fork', '--mount-proc', '--propagation', 'private', '--kill-child=SIGKILL', 'bash', '-c', INIT_SH, 'gw-fake-host', options.hostname], {
        stdio: ['pipe', 'pipe', 'pipe'],
      }),
    );
    let initErr = '';
    init.stderr!.on('data', (d: Buffer) => (initErr += d.toString()));
    await new Promise<void>((resolve, reject) => {
      let out = '';
      init!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready\n')) resolve();
      });
      init!.once('exit', (code, sig) => reject(new Error(`fake host ${options.hostname}: unshare exited (${code ?? sig}): ${initErr.trim()}`)));
      init!.once('error', reject);
    });
    const unsharePid = init.pid!;
    const initPid = childPids(unsharePid)[0];
    const pidNamespace = initPid === undefined ? undefined : nsLink(initPid);
    if (initPid === undefined || pidNamespace === undefined) throw new Error(`fake host ${options.hostname}: no pid 1 under unshare ${unsharePid}`);
    hostInit = { pid: initPid, ns: pidNamespace };

    const enter = (args: readonly string[], cwd?: string): string[] => ['-t', String(initPid), '--uts', '--pid', '--mount', ...(cwd ? [`--wd=${cwd}`] : []), '--', ...args];

    /** Processes of this host, by their outside pid. */
    const inHost = (): number[] => readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((p) => nsLink(p) === pidNamespace);

    const spawnInHost = async (cmd: string, args: readonly string[], opts: SpawnInHostOptions = {}): Promise<InHostProcess> => {
      if (closed) throw new Error(`fake host ${options.hostname} is closed`);
      const child = track(spawn('nsenter', enter([cmd, ...args], opts.cwd ?? process.cwd()), { stdio: opts.stdio ?? 'ignore', env: opts.env ?? process.env }));
      const end = Date.now() + 5000;
      for (;;) {
        const outside = child.pid === undefined ? undefined : childPids(child.pid)[0];
        const pids = outside === undefined ? undefined : nsPids(outside);
        if (outside !== undefined && pids !== undefined && pids.length >= 2) {
          const insidePid = pids[pids.length - 1]!;
          return {
            child,
            outsidePid: outside,
            insidePid,
            kill: async () => {
              signal(outside, 'SIGKILL');
              await exited(child);
            },
          };
        }
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > end) {
          signal(child.pid ?? 0, 'SIGKILL');
          throw new Error(`fake host ${options.hostname}: ${cmd} did not start in the host (nsenter ${child.exitCode ?? child.signalCode ?? 'still running'})`);
        }
        await sleep(5);
      }
    };

    const runInHost = (script: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const child = track(spawn('nsenter', enter(['sh', '-c', script]), { stdio: ['ignore', 'ignore', 'pipe'] }));
        let err = '';
        child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fake host ${options.hostname}: ${script}: ${err.trim()}`))));
      });

    const spawnWithPid = async (insidePid: number, cmd: string, args: readonly string[], opts: SpawnInHostOptions = {}): Promise<InHostProcess> => {
      if (!Number.isInteger(insidePid) || insidePid < 2) throw new Error(`fake hosts: cannot ask for pid ${insidePid}`);
      for (let attempt = 0; attempt < 5; attempt++) {
        // The next pid the host's namespace hands out is ns_last_pid + 1 (a forking sshd may take it first: try again).
        await runInHost(`echo ${insidePid - 1} > /proc/sys/kernel/ns_last_pid`);
        const proc = await spawnInHost(cmd, args, opts);
        if (proc.insidePid === insidePid) return proc;
        await proc.kill();
      }
      throw new Error(`fake host ${options.hostname}: pid ${insidePid} is not free in the host`);
    };

    const makeZombie = async (): Promise<{ insidePid: number; parent: InHostProcess }> => {
      // sh starts a child that exits at once, prints its pid, and becomes a sleep that never waits.
      // The child lives 0.2 s: one that exits before the exec may be reaped by sh itself.
      const parent = await spawnInHost('sh', ['-c', 'sleep 0.2 & echo "$!"; exec sleep 3600'], { stdio: ['ignore', 'pipe', 'ignore'] });
      const insidePid = await new Promise<number>((resolve, reject) => {
        let out = '';
        parent.child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(Number(out.trim()));
        });
        parent.child.once('exit', () => reject(new Error(`fake host ${options.hostname}: the zombie's parent exited`)));
      });
      // Wait until it is one: state Z in the host's /proc, seen from here through its outside pid.
      const end = Date.now() + 5000;
      for (;;) {
        const zombie = inHost().find((p) => nsPids(p)?.at(-1) === insidePid);
        const state = zombie === undefined ? undefined : /^State:\s+(\S)/m.exec(readFileSync(`/proc/${zombie}/status`, 'utf8'))?.[1];
        if (state === 'Z') return { insidePid, parent };
        if (Date.now() > end) throw new Error(`fake host ${options.hostname}: pid ${insidePid} did not become a zombie`);
        await sleep(5);
      }
    };

    // sshd
    const sshdConfig = join(dir, 'sshd_config');
    let sshPort = 0;
    let sshd: ChildProcess | undefined;
    let log = '';
    const writeSshdConfig = (port: number): void =>
      writeFileSync(
        sshdConfig,
        [
          `Port ${port}`,
          'ListenAddress 127.0.0.1',
          `HostKey ${hostKey}`,
          `AuthorizedKeysFile ${authorizedKeys}`,
          `PidFile ${join(dir, 'sshd.pid')}`,
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'StrictModes no',
          'PermitRootLogin prohibit-password',
          'PrintMotd no',
          'PrintLastLog no',
          'UseDNS no',
          'X11Forwarding no',
          'AllowTcpForwarding no',
          'Subsystem sftp internal-sftp',
          'LogLevel VERBOSE',
          '',
        ].join('\n'),
      );

    /** Start sshd on `port`; resolves true once it listens, false when the port was taken. */
    const launchSshd = (port: number): Promise<boolean> =>
      new Promise((resolve, reject) => {
        writeSshdConfig(port);
        const child = track(spawn('nsenter', enter([SSHD, '-D', '-e', '-f', sshdConfig]), { stdio: ['ignore', 'ignore', 'pipe'] }));
        let mine = '';
        child.stderr!.on('data', (d: Buffer) => {
          const text = d.toString();
          mine += text;
          log += text;
          if (mine.includes(`Server listening on 127.0.0.1 port ${port}`)) {
            sshd = child;
            resolve(true);
          }
        });
        child.once('exit', () => {
          if (sshd === child) sshd = undefined;
          if (/Bind to port \d+ .* failed: Address already in use/.test(mine)) resolve(false);
          else reject(new Error(`fake host ${options.hostname}: sshd exited: ${mine.trim()}`));
        });
      });

    const startSshd = async (): Promise<void> => {
      if (sshd !== undefined) return;
      if (sshPort !== 0) {
        if (!(await launchSshd(sshPort))) throw new Error(`fake host ${options.hostname}: port ${sshPort} was taken while sshd was down`);
        return;
      }
      for (let attempt = 0; attempt < 5; attempt++) {
        const port = await freeLoopbackPort();
        if (await launchSshd(port)) {
          sshPort = port;
          return;
        }
      }
      throw new Error(`fake host ${options.hostname}: no free loopback port for sshd`);
    };

    /** The host's sshd processes (outside pids): the listener and one or two per connection. */
    const sshdPids = (): number[] => inHost().filter((p) => commOf(p) === 'sshd');
    const listenerPid = (): number | undefined => (sshd?.pid === undefined ? undefined : childPids(sshd.pid)[0]);

    const stopSshd = async (): Promise<void> => {
      for (const pid of sshdPids()) signal(pid, 'SIGKILL');
      if (sshd !== undefined) await exited(sshd);
      await waitUntil(() => sshdPids().length === 0, 'sshd processes to go');
    };

    const dropConnections = async (): Promise<void> => {
      const listener = listenerPid();
      const sessions = sshdPids().filter((p) => p !== listener);
      for (const pid of sessions) signal(pid, 'SIGKILL');
      await waitUntil(() => sshdPids().every((p) => p === listener || !sessions.includes(p)), 'the connections to go');
    };

    const waitUntil = async (cond: () => boolean, what: string): Promise<void> => {
      const end = Date.now() + 5000;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`fake host ${options.hostname}: timed out waiting for ${what}`);
        await sleep(10);
      }
    };

    await startSshd();

    const knownHostsFile = join(dir, 'known_hosts');
    writeFileSync(knownHostsFile, `[127.0.0.1]:${sshPort} ${known}\n`);
    const common = [
      `UserKnownHostsFile=${knownHostsFile}`,
      'GlobalKnownHostsFile=/dev/null',
      'StrictHostKeyChecking=yes',
      'BatchMode=yes',
      'IdentitiesOnly=yes',
    ];
    const sshArgs = ['-p', String(sshPort), '-i', identityFile, ...common.flatMap((o) => ['-o', o])];
    const sshConfigFile = join(dir, 'ssh_config');
    writeFileSync(
      sshConfigFile,
      [
        `Host ${options.hostname}`,
        '  HostName 127.0.0.1',
        `  Port ${sshPort}`,
        `  User ${user}`,
        `  IdentityFile ${identityFile}`,
        // ssh matches known_hosts by the name it connects to: HostKeyAlias keeps it [127.0.0.1]:PORT.
        `  HostKeyAlias [127.0.0.1]:${sshPort}`,
        ...common.map((o) => `  ${o.replace('=', ' ')}`),
        '',
      ].join('\n'),
    );
    const destination = `${user}@127.0.0.1`;

    const ssh = (command: string): Promise<SshResult> =>
      new Promise((resolve) => {
        const child = track(spawn('ssh', [...sshArgs, '-F', '/dev/null', '-o', 'ConnectTimeout=5', destination, command], { stdio: ['ignore', 'pipe', 'pipe'] }));
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      });

    return {
      hostname: options.hostname,
      user,
      sshPort,
      destination,
      sshArgs,
      sshConfigFile,
      identityFile,
      knownHostsFile,
      dir,
      initPid,
      pidNamespace,
      spawnInHost,
      spawnWithPid,
      makeZombie,
      ssh,
      get sshdRunning() {
        return sshd !== undefined;
      },
      stopSshd,
      startSshd,
      dropConnections,
      pauseSshd: () => sshdPids().forEach((p) => signal(p, 'SIGSTOP')),
      resumeSshd: () => sshdPids().forEach((p) => signal(p, 'SIGCONT')),
      sshdLog: () => log,
      close: teardown,
    };
  } catch (error) {
    await teardown();
    throw error;
  }
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

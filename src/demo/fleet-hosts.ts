// Real "other hosts" on this machine, for `ghostwatch demo --fleet` and the fleet tests (issue 16):
// each is a process tree in new UTS, PID and mount namespaces (its own hostname, its own pids and
// /proc, its own /run and /var/log), running a private OpenSSH server on a free loopback port
// with keys made for it in a temp dir. The network is this machine's (loopback only): agents in
// a host reach the registry on 127.0.0.1 as they would on one machine, and its sshd listens on
// 127.0.0.1:PORT. A batch-mode client reaches it with sshArgs, or `ssh -F sshConfigFile NAME`.
//
// Linux, root, util-linux (unshare, nsenter) and OpenSSH (ssh, ssh-keygen, /usr/sbin/sshd) are
// needed: fleetHostRequirement() says which is missing and how to get it.
//
// Teardown: close() SIGKILLs the host's pid 1, which takes every process of its PID namespace
// with it, then removes the temp dir. Should this process die first, pid 1 reads its stdin (a
// pipe from this process) and at EOF removes the temp dir and leaves: the host goes too. killNow() is the synchronous
// last resort for a process 'exit' handler. The ssh side (keys, configs, the client) is fleet-ssh.ts;
// the processes as this machine sees them, host-processes.ts.
import { execFileSync, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientOptions, freeLoopbackPort, keygen, sshdConfigText } from './fleet-ssh.js';
import { childPids, commOf, exited, nsPids, pidNamespaceOf, processesIn, signal } from './host-processes.js';

export const SSHD = '/usr/sbin/sshd';

export interface FleetHostRequirement {
  /** What is missing: "root (…)", "unshare (util-linux)"… */
  readonly needs: string;
  /** How to get it, in a few words. */
  readonly how: string;
}

/** What this machine lacks to run fleet hosts, or undefined when it has everything. */
export function fleetHostRequirement(): FleetHostRequirement | undefined {
  if (process.platform !== 'linux') return { needs: 'Linux (PID, UTS and mount namespaces)', how: 'run it on a Linux machine' };
  if (process.getuid?.() !== 0) return { needs: 'root (unshare --pid --uts --mount, nsenter)', how: 'run it as root, e.g. with sudo' };
  const packages: Record<string, string> = { unshare: 'util-linux', nsenter: 'util-linux', ssh: 'openssh-client', 'ssh-keygen': 'openssh-client' };
  for (const [tool, pkg] of Object.entries(packages)) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return { needs: `${tool} (${pkg})`, how: `install ${pkg}, e.g. apt-get install ${pkg}` };
    }
  }
  try {
    accessSync(SSHD, constants.X_OK);
  } catch {
    return { needs: `${SSHD} (openssh-server)`, how: 'install openssh-server, e.g. apt-get install openssh-server' };
  }
  return undefined;
}

export interface FleetHostOptions {
  /** The host's name: `hostname` inside it, and the Host alias in sshConfigFile. */
  readonly hostname: string;
  /** The login (an existing local user with a shell); root by default. */
  readonly user?: string;
}

export interface InHostProcess {
  /** The nsenter process spawned here; its stdio are the in-host process's. */
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

export interface FleetHost {
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
  /** The client's known hosts: `[127.0.0.1]:PORT <the key sshd presents>`. */
  readonly knownHostsFile: string;
  /** The keys sshd accepts (read at every login): the client's. */
  readonly authorizedKeysFile: string;
  /** The temp dir holding keys, configs, pid file (removed by close). */
  readonly dir: string;
  /** The host's pid 1, as this machine sees it (nsenter -t this). */
  readonly initPid: number;
  /** `/proc/<pid>/ns/pid` of the host: a process is in the host when its link reads the same. */
  readonly pidNamespace: string;
  /** Run `cmd args` inside the host's namespaces (not through ssh); resolves once both pids are known. */
  spawnInHost(cmd: string, args: readonly string[], opts?: SpawnInHostOptions): Promise<InHostProcess>;
  /** Run a shell script inside the host; resolves when it exits 0. */
  runInHost(script: string): Promise<void>;
  /** The host's processes, by their outside pids. */
  processes(): number[];
  /** The host's sshd processes (outside pids): the listener and one or two per connection. */
  sshdPids(): number[];
  /** Whether sshd runs (started and not stopped). */
  readonly sshdRunning: boolean;
  /** Kill sshd and every connection it holds: the host stops answering SSH (connection refused). */
  stopSshd(): Promise<void>;
  /** Start sshd again, same port and keys. */
  startSshd(): Promise<void>;
  /** Kill the connections' sshd processes only; the listener stays (a dropped link, the host still up). */
  dropConnections(): Promise<void>;
  /** What sshd wrote (-e: its log on stderr). */
  sshdLog(): string;
  /** Kill everything of the host and remove its temp dir. Safe to call twice. */
  close(): Promise<void>;
  /** Synchronous last resort (process 'exit'): SIGKILL the host's pid 1, remove the temp dir. */
  killNow(): void;
}

const INIT_SH = `
hostname "$1" || exit 1
mount -t tmpfs -o mode=0755 gw-run /run || exit 1
mkdir -m 0755 /run/sshd || exit 1
mount -t tmpfs -o mode=0755 gw-log /var/log || exit 1
: > /var/log/wtmp; : > /var/log/lastlog
# sshd runs every command through the login shell, and bash then reads the user's ~/.bashrc: this
# machine's start-up files (a pyenv init that waits on a lock, say) are not the fake host's, and a
# session killed mid-way must not leave their state behind. Inside this mount namespace they are empty.
home=$(getent passwd "$(id -u)" | cut -d: -f6)
for f in .bashrc .bash_profile .bash_login .profile .bash_logout; do
  if [ -n "$home" ] && [ -f "$home/$f" ]; then mount --bind /dev/null "$home/$f" || exit 1; fi
done
trap 'exit 0' TERM
echo ready
read -r _
rm -rf -- "$2"
`;

const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9.-]{0,62}$/;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startFleetHost(options: FleetHostOptions): Promise<FleetHost> {
  const missing = fleetHostRequirement();
  if (missing !== undefined) throw new Error(`fleet hosts: this machine needs ${missing.needs}`);
  if (!HOST_NAME.test(options.hostname)) throw new Error(`fleet hosts: not a host name: ${options.hostname}`);
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

  const killInit = (): void => {
    // SIGKILL to the host's pid 1: the kernel kills every process of its PID namespace, and the
    // nsenter and unshare processes here exit as their children do.
    if (hostInit !== undefined && pidNamespaceOf(hostInit.pid) === hostInit.ns) signal(hostInit.pid, 'SIGKILL');
    else if (init?.pid !== undefined) signal(init.pid, 'SIGKILL'); // no pid 1 yet: unshare --kill-child takes it
  };

  const teardown = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    killInit();
    // Killing an nsenter would not reach its child, so they are only waited for (a stray one is killed after 5 s).
    const late = setTimeout(() => children.forEach((c) => c.pid !== undefined && signal(c.pid, 'SIGKILL')), 5000);
    await Promise.all([...children].map(exited));
    clearTimeout(late);
    if (hostInit !== undefined) {
      const ns = hostInit.ns;
      for (const end = Date.now() + 5000; processesIn(ns).length > 0 && Date.now() < end; ) await sleep(10);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const killNow = (): void => {
    closed = true;
    killInit();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const hostKey = join(dir, 'host_key');
    const identityFile = join(dir, 'client_key');
    const presented = keygen(hostKey, `${options.hostname}-host`);
    const clientKey = keygen(identityFile, 'ghostwatch-client');
    const authorizedKeysFile = join(dir, 'authorized_keys');
    writeFileSync(authorizedKeysFile, `${clientKey}\n`);

    init = track(
      spawn('unshare', ['--uts', '--pid', '--mount', '--fork', '--mount-proc', '--propagation', 'private', '--kill-child=SIGKILL', 'bash', '-c', INIT_SH, 'gw-fake-host', options.hostname, dir], {
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
      init!.once('exit', (code, sig) => reject(new Error(`fleet host ${options.hostname}: unshare exited (${code ?? sig}): ${initErr.trim()}`)));
      init!.once('error', reject);
    });
    const unsharePid = init.pid!;
    const initPid = childPids(unsharePid)[0];
    const pidNamespace = initPid === undefined ? undefined : pidNamespaceOf(initPid);
    if (initPid === undefined || pidNamespace === undefined) throw new Error(`fleet host ${options.hostname}: no pid 1 under unshare ${unsharePid}`);
    hostInit = { pid: initPid, ns: pidNamespace };

    const enter = (args: readonly string[], cwd?: string): string[] => ['-t', String(initPid), '--uts', '--pid', '--mount', ...(cwd ? [`--wd=${cwd}`] : []), '--', ...args];

    const processes = (): number[] => processesIn(pidNamespace);

    const spawnInHost = async (cmd: string, args: readonly string[], opts: SpawnInHostOptions = {}): Promise<InHostProcess> => {
      if (closed) throw new Error(`fleet host ${options.hostname} is closed`);
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
          throw new Error(`fleet host ${options.hostname}: ${cmd} did not start in the host (nsenter ${child.exitCode ?? child.signalCode ?? 'still running'})`);
        }
        await sleep(5);
      }
    };

    const runInHost = (script: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const child = track(spawn('nsenter', enter(['sh', '-c', script]), { stdio: ['ignore', 'ignore', 'pipe'] }));
        let err = '';
        child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`fleet host ${options.hostname}: ${script}: ${err.trim()}`))));
      });

    // sshd
    const sshdConfig = join(dir, 'sshd_config');
    let sshPort = 0;
    let sshd: ChildProcess | undefined;
    let log = '';
    const writeSshdConfig = (port: number): void =>
      writeFileSync(sshdConfig, sshdConfigText({ port, hostKey, authorizedKeysFile, pidFile: join(dir, 'sshd.pid') }));

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
          else reject(new Error(`fleet host ${options.hostname}: sshd exited: ${mine.trim()}`));
        });
      });

    const startSshd = async (): Promise<void> => {
      if (sshd !== undefined) return;
      if (sshPort !== 0) {
        if (!(await launchSshd(sshPort))) throw new Error(`fleet host ${options.hostname}: port ${sshPort} was taken while sshd was down`);
        return;
      }
      for (let attempt = 0; attempt < 5; attempt++) {
        const port = await freeLoopbackPort();
        if (await launchSshd(port)) {
          sshPort = port;
          return;
        }
      }
      throw new Error(`fleet host ${options.hostname}: no free loopback port for sshd`);
    };

    const sshdPids = (): number[] => processes().filter((p) => commOf(p) === 'sshd');
    const listenerPid = (): number | undefined => (sshd?.pid === undefined ? undefined : childPids(sshd.pid)[0]);

    const waitUntil = async (cond: () => boolean, what: string): Promise<void> => {
      const end = Date.now() + 5000;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`fleet host ${options.hostname}: timed out waiting for ${what}`);
        await sleep(10);
      }
    };

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

    await startSshd();

    const knownHostsFile = join(dir, 'known_hosts');
    writeFileSync(knownHostsFile, `[127.0.0.1]:${sshPort} ${presented}\n`);
    const client = clientOptions({ hostname: options.hostname, user, port: sshPort, identityFile, knownHostsFile });
    const sshArgs = client.sshArgs;
    const sshConfigFile = join(dir, 'ssh_config');
    writeFileSync(sshConfigFile, client.configText);

    return {
      hostname: options.hostname,
      user,
      sshPort,
      destination: `${user}@127.0.0.1`,
      sshArgs,
      sshConfigFile,
      identityFile,
      knownHostsFile,
      authorizedKeysFile,
      dir,
      initPid,
      pidNamespace,
      spawnInHost,
      runInHost,
      processes,
      sshdPids,
      get sshdRunning() {
        return sshd !== undefined;
      },
      stopSshd,
      startSshd,
      dropConnections,
      sshdLog: () => log,
      close: teardown,
      killNow,
    };
  } catch (error) {
    await teardown();
    throw error;
  }
}

// `ghostwatch demo --fleet`: other hosts on this machine (src/demo/fleet-hosts.ts: own hostname,
// own pids, a private sshd on loopback), each running one `host` agent (fleet-role.ts) that
// registers a live entry, a ghost, a pending straggler and a zombie with the demo's registry
// under that host's name. The monitor reaches them as it would real hosts: the system ssh in
// batch mode, through an ssh_config made here (Host alias, HostName 127.0.0.1, Port, IdentityFile,
// UserKnownHostsFile, StrictHostKeyChecking yes). The monitor's ssh runs `ssh` from PATH with no
// -F, so `binDir` holds an `ssh` that is the system one with `-F <that config>`: put it first on
// PATH and `--ssh NAME=NAME` reaches the fake host NAME, with no prompt and nothing of ~/.ssh.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { SshHostConfig } from '../os/ssh-command.js';
import { agentScriptPath } from './cast.js';
import { childEnv } from './child-env.js';
import { startFleetHost, type FleetHost, type InHostProcess } from './fleet-hosts.js';
import { writeFleetSshClient } from './fleet-ssh.js';
import { ENV_URL, parseReport } from './reports.js';

/**
 * The fake hosts, the project each one's agent works on, and where its pids start: every new PID
 * namespace counts from 1, and `pending-<pid>` ids of two hosts must not be the same id.
 */
export const FLEET: readonly { readonly hostname: string; readonly project: string; readonly pidsFrom: number }[] = [
  { hostname: 'build-41', project: 'ci-runner', pidsFrom: 4100 },
  { hostname: 'build-42', project: 'release-train', pidsFrom: 4200 },
  { hostname: 'gpu-7', project: 'model-eval', pidsFrom: 700 },
];

export interface FleetOptions {
  readonly url: string;
  readonly onEvent?: (line: string) => void;
  /** The agent program; default: the compiled agent.js. */
  readonly agentScript?: string;
}

export interface Fleet {
  readonly hosts: readonly FleetHost[];
  /** What the monitor is given: each host's name as the machine and as the ssh destination. */
  readonly sshHosts: readonly SshHostConfig[];
  /** The ssh_config with one `Host` block per fake host. */
  readonly sshConfigFile: string;
  /** Holds `ssh`: the system client with `-F sshConfigFile`; to go first on PATH. */
  readonly binDir: string;
  /** Resolves once every host agent has staged its entries (or died trying). */
  readonly ready: Promise<void>;
  /** End every agent and host, remove every temp dir; resolves once nothing of it runs. */
  stop(): Promise<void>;
  /** Synchronous last resort (process 'exit'): SIGKILL every host's pid 1, remove the temp dirs. */
  killNow(): void;
}

export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  const say = opts.onEvent ?? (() => {});
  const script = opts.agentScript ?? agentScriptPath();
  const started = await Promise.allSettled(FLEET.map((f) => startFleetHost({ hostname: f.hostname })));
  const hosts = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(hosts.map((h) => h.close()));
    throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
  }

  // In the first host's temp dir: it goes with that host, even when this process is SIGKILLed.
  const dir = join(hosts[0]!.dir, 'fleet');
  mkdirSync(dir);
  const { sshConfigFile, binDir } = writeFleetSshClient(hosts, dir);
  for (const h of hosts) say(`fleet host ${h.hostname}: sshd on 127.0.0.1 port ${h.sshPort}, files in ${h.dir}`);

  const agents: InHostProcess[] = [];
  const staged = Promise.all(
    FLEET.map(async (f, i) => {
      const host = hosts[i]!;
      const label = `host ${host.hostname}`;
      let agent: InHostProcess;
      try {
        await host.runInHost(`echo ${f.pidsFrom} > /proc/sys/kernel/ns_last_pid`);
        agent = await host.spawnInHost(process.execPath, [script, 'host', f.project], {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: childEnv(process.env, { [ENV_URL]: opts.url }),
        });
      } catch (error) {
        say(`[${label}] could not start: ${error instanceof Error ? error.message : String(error)}`);
        return Promise.resolve();
      }
      agents.push(agent);
      agent.child.stdin?.on('error', () => {}); // never written to: it closes when we die
      createInterface({ input: agent.child.stderr! }).on('line', (line) => line.trim() !== '' && say(`[${label}] stderr: ${line}`));
      return new Promise<void>((resolve) => {
        agent.child.once('exit', () => resolve());
        createInterface({ input: agent.child.stdout! }).on('line', (line) => {
          const report = parseReport(line);
          if (report === undefined) {
            if (line.trim() !== '') say(`[${label}] ${line}`);
            return;
          }
          say(`[${label}] ${report.text}`);
          if (report.kind === 'staged') resolve();
        });
        say(`[${label}] started, pid ${agent.insidePid} in the host (${agent.outsidePid} here)`);
      });
    }),
  ).then(() => say(`fleet ready: ${hosts.map((h) => h.hostname).join(', ')}`));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      // A host's close() SIGKILLs its pid 1: every process of the host goes with it.
      await Promise.all(hosts.map((h) => h.close()));
      for (const a of agents) {
        a.child.stdout?.destroy();
        a.child.stderr?.destroy();
      }
    })();
    return stopped;
  };

  const killNow = (): void => {
    for (const h of hosts) h.killNow();
  };

  return {
    hosts,
    sshHosts: hosts.map((h) => ({ machine: h.hostname, dest: h.hostname })),
    sshConfigFile,
    binDir,
    ready: staged,
    stop,
    killNow,
  };
}

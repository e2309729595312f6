// The ssh side of the fleet's hosts: key pairs, and the one client (an ssh_config and an `ssh`
// wrapper reading only it) that reaches every fake host by its name in batch mode.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { FleetHost } from './fleet-hosts.js';

/** A new ed25519 key pair at `file` (and `file.pub`); returns the public key as "type base64". */
export function keygen(file: string, comment: string): string {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], { stdio: 'ignore' });
  return readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ');
}

/** `'…'` for sh: the path may hold anything but a NUL. */
function shQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface FleetSshClient {
  /** One ssh_config with every host's `Host` block. */
  readonly sshConfigFile: string;
  /** Holds `ssh`: the system client with `-F sshConfigFile`; to go first on PATH. */
  readonly binDir: string;
  /** `binDir/ssh`. */
  readonly command: string;
}

/**
 * In `dir`: an ssh_config for all of `hosts` and an `ssh` that is the system client reading only
 * it, so `ssh NAME` (or ghostwatch's `--ssh NAME=NAME`) reaches the fake host NAME in batch mode.
 * The system ssh is resolved now, before binDir goes first on PATH: the wrapper never finds itself.
 */
export function writeFleetSshClient(hosts: readonly FleetHost[], dir: string): FleetSshClient {
  const realSsh = execFileSync('sh', ['-c', 'command -v ssh'], { encoding: 'utf8' }).trim();
  const sshConfigFile = join(dir, 'ssh_config');
  writeFileSync(sshConfigFile, hosts.map((h) => readFileSync(h.sshConfigFile, 'utf8')).join('\n'));
  const binDir = join(dir, 'bin');
  mkdirSync(binDir, { recursive: true });
  const command = join(binDir, 'ssh');
  writeFileSync(command, `#!/bin/sh\nexec ${shQuote(realSsh)} -F ${shQuote(sshConfigFile)} "$@"\n`);
  chmodSync(command, 0o755);
  return { sshConfigFile, binDir, command };
}

/** A loopback port free now (sshd may still lose it to another process: its caller retries). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The sshd_config of a fake host: keys only, loopback only, its own pid file, a verbose log. */
export function sshdConfigText(o: { readonly port: number; readonly hostKey: string; readonly authorizedKeysFile: string; readonly pidFile: string }): string {
  return [
    `Port ${o.port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${o.hostKey}`,
    `AuthorizedKeysFile ${o.authorizedKeysFile}`,
    `PidFile ${o.pidFile}`,
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
  ].join('\n');
}

/** How an OpenSSH client reaches a fake host: its arguments (no -F, no destination) and a `Host <hostname>` ssh_config block. */
export function clientOptions(o: { readonly hostname: string; readonly user: string; readonly port: number; readonly identityFile: string; readonly knownHostsFile: string }): {
  readonly sshArgs: readonly string[];
  readonly configText: string;
} {
  const common = [`UserKnownHostsFile=${o.knownHostsFile}`, 'GlobalKnownHostsFile=/dev/null', 'StrictHostKeyChecking=yes', 'BatchMode=yes', 'IdentitiesOnly=yes'];
  const sshArgs = ['-p', String(o.port), '-i', o.identityFile, ...common.flatMap((c) => ['-o', c])];
  const configText = [
    `Host ${o.hostname}`,
    '  HostName 127.0.0.1',
    `  Port ${o.port}`,
    `  User ${o.user}`,
    `  IdentityFile ${o.identityFile}`,
    // ssh matches known_hosts by the name it connects to: HostKeyAlias keeps it [127.0.0.1]:PORT.
    `  HostKeyAlias [127.0.0.1]:${o.port}`,
    ...common.map((c) => `  ${c.replace('=', ' ')}`),
    '',
  ].join('\n');
  return { sshArgs, configText };
}

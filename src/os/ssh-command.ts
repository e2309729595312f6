// How ghostwatch runs the system `ssh` client for one remote host, and what its end means: the
// fixed safety options (BatchMode: it can never prompt), the remote command, and one line from
// ssh's stderr and exit code for a host that is down. The host's life is ssh-provider.ts.
import { sanitize } from '../core/sanitize.js';
import { REMOTE_PROBE_PROGRAM } from './remote-probe.js';

export interface SshHostConfig {
  /** The machine name the registry uses for this host. */
  readonly machine: string;
  /** The ssh destination: `user@host`, a host name, or an ~/.ssh/config alias. */
  readonly dest: string;
  readonly port?: number | undefined;
}

export type SshState = 'connecting' | 'up' | 'down';
/** Why a host is down; `flood`: connected, but it pushes more than its budget (push-budget.ts), so nothing it says is read. */
export type SshDownKind = 'auth' | 'host-key' | 'timeout' | 'refused' | 'unresolved' | 'dropped' | 'protocol' | 'mismatch' | 'flood' | 'error';

export interface SshHostStatus {
  readonly machine: string;
  readonly dest: string;
  readonly state: SshState;
  /** Why the host is down, in one line. */
  readonly reason?: string | undefined;
  readonly kind?: SshDownKind | undefined;
  /** The last measured round trip of one request, ms. */
  readonly rttMs?: number | undefined;
  /** The name the remote gave (sanitized). */
  readonly remoteName?: string | undefined;
}

export const SSH_OPTIONS = ['-T', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', '-o', 'ServerAliveInterval=5', '-o', 'ServerAliveCountMax=2'] as const;
/** `sh -c '<program>'`, single-quoted for the remote login shell. */
export function remoteCommand(program: string = REMOTE_PROBE_PROGRAM): string {
  return `exec sh -c '${program.replace(/'/g, `'\\''`)}'`;
}

/** ssh's arguments for one host: fixed safety options, the port, `--`, the destination, the command. */
export function sshArgs(config: SshHostConfig): string[] {
  const port = config.port === undefined ? [] : ['-p', String(config.port)];
  return [...SSH_OPTIONS, ...port, '--', config.dest, remoteCommand()];
}

/** Why ssh ended, in one line, from its stderr and exit code. */
export function classifySshExit(stderr: string, code: number | null, signal: string | null, wasUp: boolean): { kind: SshDownKind; reason: string } {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '');
  const find = (re: RegExp): string | undefined => lines.find((l) => re.test(l));
  const said = (line: string | undefined): string => (line === undefined ? '' : `: ${sanitize(line, 160)}`);
  let hit: string | undefined;
  if ((hit = find(/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .*host key is known/i))) {
    return { kind: 'host-key', reason: `host key not trusted${said(hit)}` };
  }
  if ((hit = find(/Permission denied|Too many authentication failures|Authentication failed/i))) {
    return { kind: 'auth', reason: `authentication failed${said(hit)}` };
  }
  if ((hit = find(/Could not resolve hostname|Name or service not known|nodename nor servname/i))) {
    return { kind: 'unresolved', reason: `unknown host${said(hit)}` };
  }
  if ((hit = find(/Connection refused/i))) return { kind: 'refused', reason: `connection refused${said(hit)}` };
  if ((hit = find(/not responding|Broken pipe|Connection reset|closed by remote host/i))) {
    return { kind: 'dropped', reason: `connection dropped${said(hit)}` };
  }
  if ((hit = find(/timed out/i))) return { kind: 'timeout', reason: `connection timed out${said(hit)}` };
  const how = signal !== null ? `killed by ${signal}` : `exit code ${String(code)}`;
  if (wasUp) return { kind: 'dropped', reason: `connection dropped (${how})${said(lines.at(-1))}` };
  return { kind: 'error', reason: `ssh failed (${how})${said(lines.at(-1))}` };
}

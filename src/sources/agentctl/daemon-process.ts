// The agentctl daemon's own process, asked about only when it stops answering: is it stopped
// (state T or t: SIGSTOP, Ctrl-Z, a debugger)? A stopped daemon answers once it is continued,
// and a reply it then writes to a socket we closed kills it (protocols.md §3), so its socket is
// kept open for as long as it stays stopped. The process is the one holding the socket's
// listening end: agentctl.pid beside the socket is only read first (it may be stale, or hold a
// pid of another pid namespace).
import { dirname, join } from 'node:path';
import { isUsablePid } from '../../core/pid.js';
import { probePids } from '../../os/liveness.js';
import { createOwnerHints } from '../../os/port-owner.js';
import { readBoundedSync } from '../../os/safe-file.js';
import { unixSocketServer } from '../../os/unix-socket-owner.js';

/** What the source says while the daemon's process is stopped: the header and check's line show it. */
export const DAEMON_STOPPED = "agentctl's daemon is stopped (SIGSTOP)";

export type DaemonProcessState =
  | { readonly state: 'stopped' | 'running'; readonly pid: number }
  /** Its process could not be found or read: treated as running (the grace applies). */
  | { readonly state: 'unknown'; readonly why: string };

export class DaemonProcess {
  private readonly hints = createOwnerHints();
  private readonly pidFile: string;

  constructor(private readonly socketPath: string) {
    this.pidFile = join(dirname(socketPath), 'agentctl.pid');
  }

  async state(): Promise<DaemonProcessState> {
    const server = await unixSocketServer(this.socketPath, { hints: this.hints, likelyPid: this.pidFromFile() });
    if (!server.ok) return { state: 'unknown', why: server.why };
    const facts = (await probePids([server.pid], { full: true })).get(server.pid);
    if (facts?.state === undefined) return { state: 'unknown', why: facts?.error ?? `pid ${server.pid} could not be read` };
    return { state: facts.state === 'T' || facts.state === 't' ? 'stopped' : 'running', pid: server.pid };
  }

  async stopped(): Promise<boolean> {
    return (await this.state()).state === 'stopped';
  }

  private pidFromFile(): number | undefined {
    try {
      const pid = Number(readBoundedSync(this.pidFile, 32, { noFollow: true }).toString('latin1').trim());
      // Not 1: that is another pid namespace's daemon, never worth reading first.
      return isUsablePid(pid) ? pid : undefined;
    } catch {
      return undefined;
    }
  }
}

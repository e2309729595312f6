// What serve stamps as `pid_started_at` (protocols.md §2) when a registration carries none: real
// pi-socket never sends it. Only for a node on this host whose pid is alive now, read from
// /proc/<pid>/stat (field 22, clock ticks since boot) + btime; anywhere else it stays unset.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { matchHost } from '../core/host.js';
import { isUsablePid } from '../core/pid.js';
import { killZero, linuxClock, parseProcStat, ticksToEpochMs } from '../os/liveness.js';
import type { NodeInfo } from './protocol.js';

/** The process start time of `pid` in Unix ms, or undefined when it cannot be read here. */
export function linuxProcessStart(pid: number): number | undefined {
  if (process.platform !== 'linux' || !isUsablePid(pid)) return undefined;
  const alive = killZero(pid).kill;
  if (alive !== 'ok' && alive !== 'EPERM') return undefined;
  const clock = linuxClock();
  if (!clock) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = parseProcStat(text);
  if (!parsed || parsed.state === 'Z') return undefined; // a zombie has already exited
  return ticksToEpochMs(parsed.startTicks, clock.btimeSec, clock.clkTck);
}

/** The stamp for a registration that carries no pid_started_at: local nodes with a live pid only. */
export function startStamper(hostName: string = hostname(), startOf: (pid: number) => number | undefined = linuxProcessStart) {
  return (node: Pick<NodeInfo, 'machine' | 'pid'>): number | undefined => {
    if (node.pid === undefined || matchHost(node.machine, hostName, []) === undefined) return undefined;
    return startOf(node.pid);
  };
}

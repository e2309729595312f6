// The processes an agent started, read from /proc: its descendants (by parent, from an index of
// every process kept between walks: only new processes are read), and, for the few
// processes remembered as some agent's, who they are now (start, state, owner, command, memory,
// CPU time) and the TCP ports they listen on. Linux only: elsewhere each answer says it is unavailable.
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync } from 'node:fs';
import type { ProcessNow } from '../core/leftovers.js';
import { errorCode, errorText, linuxClock, throwIfAborted, ticksToEpochMs, yieldToLoop } from './liveness.js';
import { allListeningSockets } from './proc-net.js';

/** One descendant as walked: enough to know it again (pid and exact start) and to name it. */
export interface TreeProcess {
  readonly pid: number;
  readonly ppid: number;
  readonly startTicks: number;
  readonly startedAt?: number | undefined;
  readonly name: string;
}

export type DescendantsResult =
  | { readonly ok: true; readonly trees: ReadonlyMap<number, readonly TreeProcess[]> }
  | { readonly ok: false; readonly unavailable: string };

/** A process as read now, with its CPU time so far (the caller makes a % of it). */
export interface ProcessSample extends Omit<ProcessNow, 'cpuPct' | 'ports'> {
  /** utime + stime, ms. */
  readonly cpuMs?: number | undefined;
}

/** Reads between two yields to the event loop. */
const YIELD_EVERY = 256;
/** A tree wider than this is cut (a fork loop must not grow the memory without end). */
const MAX_PER_TREE = 1024;

const BUFFER = Buffer.allocUnsafe(16 * 1024);

/** open, one read, close (a /proc file says its size is 0: readFileSync would stat it and read twice). */
function readSmall(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const n = readSync(fd, BUFFER, 0, BUFFER.length, 0);
    return BUFFER.toString('latin1', 0, n);
  } finally {
    closeSync(fd);
  }
}

/** The fields of a stat line after the name (field 3 first), and the name. Undefined when it does not parse. */
export function statFields(text: string): { comm: string; fields: string[] } | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text.slice(close + 2).trim().split(' ');
  return fields.length >= 22 ? { comm: text.slice(open + 1, close), fields } : undefined;
}

/** pid, ppid, state, start ticks and name from /proc/<pid>/stat; undefined when it is gone. */
function readStat(pid: number): { ppid: number; state: string; startTicks: number; comm: string; fields: string[] } | undefined {
  let text: string;
  try {
    text = readSmall(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  const parsed = statFields(text);
  if (!parsed) return undefined;
  const f = parsed.fields;
  const ppid = Number(f[1]);
  const startTicks = Number(f[19]);
  if (!Number.isInteger(ppid) || !Number.isInteger(startTicks)) return undefined;
  return { ppid, state: f[0] ?? '?', startTicks, comm: parsed.comm, fields: f };
}

/** A process as first seen: who its parent was then, and its exact start. */
interface Seen {
  readonly ppid: number;
  readonly startTicks: number;
  readonly name: string;
  readonly zombie: boolean;
}

function seenOf(s: NonNullable<ReturnType<typeof readStat>>): Seen {
  return { ppid: s.ppid, startTicks: s.startTicks, name: s.comm, zombie: s.state === 'Z' || s.state === 'X' };
}

/**
 * Every process of this host by its parent, kept between walks: each walk lists /proc (one
 * readdir) and reads the stat of only the processes not seen before, so an idle machine costs a
 * listing every slow cadence, whatever the number of agents and their threads (a child forked from
 * any thread has the process as its parent). The first walk reads every process once. A process
 * whose parent has ended since (its recorded parent is gone, or is another process now) is read
 * again: it has been reparented, to init or to a subreaper, and a live agent that is that
 * subreaper has it in its tree now. (What a dead agent started stays its own in the engine, which
 * remembers what the walks found while it lived.)
 */
export class ProcessIndex {
  private seen = new Map<number, Seen>();

  /** List /proc, read what is new, forget what is gone. Throws only on abort. */
  async refresh(signal?: AbortSignal): Promise<void> {
    const listed = readdirSync('/proc');
    const next = new Map<number, Seen>();
    let reads = 0;
    for (const entry of listed) {
      const code = entry.charCodeAt(0);
      if (code < 0x30 || code > 0x39) continue;
      const pid = Number(entry);
      const known = this.seen.get(pid);
      if (known) {
        next.set(pid, known);
        continue;
      }
      if (++reads % YIELD_EVERY === 0) {
        await yieldToLoop();
        throwIfAborted(signal);
      }
      const s = readStat(pid);
      if (s) next.set(pid, seenOf(s));
    }
    // Orphans since the last walk: their parent is gone, or its pid is another process now (started
    // after them). A parent never listed (another user's, under hidepid) is not a reason to read again.
    for (const [pid, known] of next) {
      const parent = next.get(known.ppid);
      const orphaned = parent === undefined ? this.seen.has(known.ppid) : parent.startTicks > known.startTicks;
      if (!orphaned) continue;
      const s = readStat(pid);
      if (s && s.startTicks === known.startTicks) next.set(pid, seenOf(s));
      else next.delete(pid);
    }
    this.seen = next;
  }

  /** The descendants of `root`, if `root` is the process that started at `rootStart`; zombies left out. */
  descendants(root: number, rootStart: number, children: ReadonlyMap<number, readonly number[]>): TreeProcess[] | undefined {
    if (this.seen.get(root)?.startTicks !== rootStart) return undefined;
    const clock = linuxClock();
    const found: TreeProcess[] = [];
    const queue = [root];
    const visited = new Set([root]);
    while (queue.length > 0 && found.length < MAX_PER_TREE) {
      for (const pid of children.get(queue.shift()!) ?? []) {
        if (visited.has(pid)) continue;
        visited.add(pid);
        queue.push(pid);
        const s = this.seen.get(pid)!;
        if (s.zombie) continue;
        found.push({ pid, ppid: s.ppid, startTicks: s.startTicks, startedAt: clock ? ticksToEpochMs(s.startTicks, clock.btimeSec, clock.clkTck) : undefined, name: s.name });
      }
    }
    return found;
  }

  /** Parent → children. */
  childrenIndex(): Map<number, number[]> {
    const index = new Map<number, number[]>();
    for (const [pid, s] of this.seen) {
      const list = index.get(s.ppid);
      if (list) list.push(pid);
      else index.set(s.ppid, [pid]);
    }
    return index;
  }
}

/** Why the tree cannot be walked here, or undefined. */
export function treeWalkAvailable(): string | undefined {
  if (process.platform !== 'linux') return `the processes an agent started are read from Linux /proc (this is ${process.platform})`;
  try {
    readdirSync('/proc/self/task');
  } catch (err) {
    return `cannot read /proc (${errorCode(err) ?? errorText(err)})`;
  }
  return undefined;
}

/**
 * Every live descendant of each root (zombies left out), from the process index (refreshed first).
 * `rootStarts`: each root's exact start as the caller knows it; a root that is another process
 * (its pid recycled) gets no tree. Throws only on abort.
 */
export async function walkDescendants(rootStarts: ReadonlyMap<number, number>, opts: { readonly signal?: AbortSignal; readonly index?: ProcessIndex } = {}): Promise<DescendantsResult> {
  throwIfAborted(opts.signal);
  const why = treeWalkAvailable();
  if (why !== undefined) return { ok: false, unavailable: why };
  const index = opts.index ?? new ProcessIndex();
  try {
    await index.refresh(opts.signal);
  } catch (err) {
    throwIfAborted(opts.signal);
    return { ok: false, unavailable: `cannot read /proc (${errorCode(err) ?? errorText(err)})` };
  }
  const children = index.childrenIndex();
  const trees = new Map<number, TreeProcess[]>();
  for (const [root, start] of rootStarts) {
    const found = index.descendants(root, start, children);
    if (found) trees.set(root, found);
  }
  return { ok: true, trees };
}

let passwd: { at: number; names: Map<number, string> } | undefined;
/** uid → user name from /etc/passwd, read again at most once a minute. */
function userName(uid: number): string | undefined {
  const now = Date.now();
  if (!passwd || now - passwd.at > 60_000) {
    const names = new Map<number, string>();
    try {
      for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
        const [name, , id] = line.split(':');
        if (name && id !== undefined && /^\d+$/.test(id) && !names.has(Number(id))) names.set(Number(id), name);
      }
    } catch {
      // no passwd file: uids stay numbers
    }
    passwd = { at: now, names };
  }
  return passwd.names.get(uid);
}

/** One process as it is now, or null when it is gone (or its entry cannot be read). */
export function readProcess(pid: number): ProcessSample | null {
  const s = readStat(pid);
  if (!s) return null;
  const clock = linuxClock();
  let cmd = '';
  let uid: number | undefined;
  let rssBytes: number | undefined;
  try {
    cmd = readSmall(`/proc/${pid}/cmdline`).replace(/\0+$/, '').replace(/\0/g, ' ');
  } catch {
    // exited meanwhile, or hidden: the name stands for it
  }
  try {
    const status = readSmall(`/proc/${pid}/status`);
    const u = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (u !== undefined) uid = Number(u);
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    if (rss !== undefined) rssBytes = Number(rss) * 1024;
  } catch {
    // exited meanwhile
  }
  const ticks = Number(s.fields[11]) + Number(s.fields[12]);
  return {
    pid,
    ppid: s.ppid,
    state: s.state,
    startTicks: s.startTicks,
    startedAt: clock ? ticksToEpochMs(s.startTicks, clock.btimeSec, clock.clkTck) : undefined,
    name: s.comm,
    cmd: cmd === '' ? `[${s.comm}]` : cmd,
    uid,
    user: uid === undefined ? undefined : userName(uid),
    rssBytes,
    cpuMs: clock && Number.isFinite(ticks) ? (ticks * 1000) / clock.clkTck : undefined,
  };
}

/** Each pid as it is now (null: gone). Throws only on abort. */
export async function readProcesses(pids: readonly number[], opts: { readonly signal?: AbortSignal } = {}): Promise<Map<number, ProcessSample | null>> {
  const out = new Map<number, ProcessSample | null>();
  if (process.platform !== 'linux') return out;
  let n = 0;
  for (const pid of new Set(pids)) {
    if (++n % YIELD_EVERY === 0) {
      await yieldToLoop();
      throwIfAborted(opts.signal);
    }
    out.set(pid, Number.isInteger(pid) && pid > 0 ? readProcess(pid) : null);
  }
  return out;
}

const SOCKET_LINK = /^socket:\[(\d+)\]$/;

/**
 * The TCP ports each process listens on (IPv4 and IPv6, this network namespace's tables), from its
 * open sockets. A process whose fds cannot be read has none listed. Throws only on abort.
 */
export async function listeningPortsOf(pids: readonly number[], opts: { readonly signal?: AbortSignal } = {}): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (process.platform !== 'linux' || pids.length === 0) return out;
  const listening = await allListeningSockets();
  throwIfAborted(opts.signal);
  if (!listening.ok) return out;
  const portOf = new Map<number, number>();
  for (const s of listening.sockets) if (s.inode > 0) portOf.set(s.inode, s.port);
  for (const pid of new Set(pids)) {
    const ports = new Set<number>();
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = Number(SOCKET_LINK.exec(link)?.[1] ?? 0);
      const port = portOf.get(inode);
      if (port !== undefined) ports.add(port);
    }
    out.set(pid, [...ports].sort((a, b) => a - b));
  }
  return out;
}

/** The parents of `pid`, nearest first, up to init (or as far as they can be read). */
export function ancestorsOf(pid: number): number[] {
  const out: number[] = [];
  let at = pid;
  for (let i = 0; i < 256; i++) {
    const s = readStat(at);
    if (!s || s.ppid <= 0) break;
    out.push(s.ppid);
    if (s.ppid === 1) break;
    at = s.ppid;
  }
  return out;
}

/** Whether a remembered process is still the same one, or why not. */
export type SameCheck = { readonly same: true } | { readonly same: false; readonly why: 'gone' | 'changed' | 'error'; readonly detail: string };

/** The process is still there as the same one: not a zombie, the same exact start (read now). */
export function checkSame(who: { readonly pid: number; readonly startTicks?: number | undefined }): SameCheck {
  if (!Number.isInteger(who.pid) || who.pid <= 1) return { same: false, why: 'error', detail: `pid ${who.pid} is never signalled` };
  if (who.startTicks === undefined) return { same: false, why: 'error', detail: `pid ${who.pid}: no exact start to check it against` };
  const s = readStat(who.pid);
  if (!s || s.state === 'Z' || s.state === 'X') return { same: false, why: 'gone', detail: `pid ${who.pid} is gone` };
  if (s.startTicks !== who.startTicks) {
    return { same: false, why: 'changed', detail: `pid ${who.pid} is now another process (${s.comm}, started at tick ${s.startTicks}, not ${who.startTicks})` };
  }
  return { same: true };
}

/** What a signal to a remembered process did. */
export type SignalResult = { readonly sent: true } | { readonly sent: false; readonly why: 'gone' | 'changed' | 'error'; readonly detail: string };

/**
 * Send `signal` to the process only if it is still the one named: its exact start is read from
 * /proc/<pid>/stat immediately before the kill (Node has no pidfd: this is the narrowest window
 * it offers). A zombie is gone. Never pid 1 or below.
 */
export function signalIfSame(who: { readonly pid: number; readonly startTicks?: number | undefined }, signal: 'SIGTERM' | 'SIGKILL'): SignalResult {
  const check = checkSame(who);
  if (!check.same) return { sent: false, why: check.why, detail: check.detail };
  try {
    process.kill(who.pid, signal);
    return { sent: true };
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ESRCH') return { sent: false, why: 'gone', detail: `pid ${who.pid} is gone` };
    return { sent: false, why: 'error', detail: `${signal} to pid ${who.pid} failed: ${code ?? errorText(err)}` };
  }
}

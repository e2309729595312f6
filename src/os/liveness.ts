// Liveness probing: kill(pid, 0) for every usable pid, plus (full mode) state and start time
// from /proc on Linux or one `ps` spawn per batch on macOS.
import type { KillResult, PidFacts } from '../core/types.js';
import { isUsablePid } from '../core/pid.js';
import { childProcess } from './builtins.js';
import { linuxClock, pageBytes, readProcStat, ticksToEpochMs } from './proc-stat.js';

// The stat line and the machine's constants to read it (boot time, clock ticks) live in proc-stat.ts.
export { linuxClock, parseAuxvClockTicks, parseStatBytes, ticksToEpochMs } from './proc-stat.js';

export interface ProbeOptions {
  /** Also read state and start time (costs a /proc read per live pid, or one ps spawn on macOS). */
  readonly full?: boolean;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/** Pids handled between two yields to the event loop. */
const CHUNK = 128;
/** Pids per macOS ps spawn (keeps the comma list far below ARG_MAX). */
const PS_BATCH = 1000;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message.split('\n')[0] ?? String(err);
  return String(err);
}

/** Map what kill(pid, 0) threw onto a KillResult. EPERM means alive but someone else's. */
export function killResultFromError(err: unknown): { kill: KillResult; error?: string } {
  const code = errorCode(err);
  if (code === 'ESRCH') return { kill: 'ESRCH' };
  if (code === 'EPERM') return { kill: 'EPERM' };
  return { kill: 'error', error: code ?? errorText(err) };
}

const OK: { kill: KillResult } = { kill: 'ok' };
const GONE: { kill: KillResult } = { kill: 'ESRCH' };

/** kill(pid, 0) succeeds: the pid exists and is ours to signal. Any error (ESRCH, EPERM, ...) is false. */
export function stillRunning(pid: number): boolean {
  // killZero answers a success with one shared object: nothing is allocated for a live pid.
  return isUsablePid(pid) && killZero(pid) === OK;
}

export function killZero(pid: number): { kill: KillResult; error?: string } {
  // A dead pid throws, and the stack trace Node captures for it is most of what kill(0) costs
  // (~8 µs with one, ~2.6 µs without): nobody reads it, so none is captured.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    process.kill(pid, 0);
    return OK;
  } catch (err) {
    return errorCode(err) === 'ESRCH' ? GONE : killResultFromError(err);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Parse /proc/<pid>/stat. comm may contain spaces and ')' so fields are split after the LAST ')'. */
export function parseProcStat(
  text: string,
): { state: string; startTicks: number; ppid: number; comm: string } | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const comm = text.slice(open + 1, close);
  // After ") " the fields are single-space separated: field 3 (state), 4 (ppid) ... 22 (start
  // time). Walked to field 22 by index rather than split into all ~50: this runs for every live
  // pid every full probe.
  const fields: string[] = [];
  let at = close + 1;
  while (fields.length < 20) {
    while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 10) at++;
    if (at >= text.length) break;
    let end = at;
    while (end < text.length && text.charCodeAt(end) !== 32 && text.charCodeAt(end) !== 10) end++;
    fields.push(text.slice(at, end));
    at = end;
  }
  const state = fields[0];
  const ppid = Number(fields[1]);
  const startTicks = Number(fields[19]);
  if (!state || !Number.isInteger(ppid) || fields[19] === undefined || !Number.isFinite(startTicks)) return undefined;
  return { state, startTicks, ppid, comm };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DARWIN_LINE = /^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s+\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/;
const PS_TIME = /^(?:(\d+)-)?(\d+(?::\d+){0,2})(?:\.(\d{1,3}))?$/;

/** What one `ps -o pid=,stat=,time=,rss=,lstart=` line says of a process. */
export interface DarwinPsRow {
  readonly state: string;
  readonly startedAt: number;
  /** user + system time so far, ms. */
  readonly cpuMs?: number | undefined;
  readonly rssBytes: number;
}

/**
 * ps's cumulative CPU time in ms: macOS writes "[[hh:]mm:]ss.hh" ("0:01.23", "123:45.67"),
 * procps "[dd-]hh:mm:ss" ("00:00:01", "2-03:04:05"); undefined for anything else.
 */
export function parsePsTime(text: string): number | undefined {
  const m = PS_TIME.exec(text);
  if (!m) return undefined;
  const [, days, clock, fraction] = m;
  let seconds = 0;
  for (const part of clock!.split(':')) seconds = seconds * 60 + Number(part);
  return (Number(days ?? 0) * 86_400 + seconds) * 1000 + (fraction === undefined ? 0 : Number(fraction.padEnd(3, '0')));
}

/** Parse `LC_ALL=C ps -o pid=,stat=,time=,rss=,lstart=` output. lstart is local time, 1 s resolution; rss is KiB. */
export function parseDarwinPs(output: string): Map<number, DarwinPsRow> {
  const result = new Map<number, DarwinPsRow>();
  for (const line of output.split('\n')) {
    const m = DARWIN_LINE.exec(line);
    if (!m) continue;
    const [, pid, stat, time, rss, mon, day, hh, mm, ss, year] = m;
    const month = MONTHS.indexOf(mon ?? '');
    if (month < 0) continue;
    const startedAt = new Date(Number(year), month, Number(day), Number(hh), Number(mm), Number(ss)).getTime();
    if (Number.isNaN(startedAt)) continue;
    result.set(Number(pid), { state: (stat ?? '').charAt(0), startedAt, cpuMs: parsePsTime(time!), rssBytes: Number(rss) * 1024 });
  }
  return result;
}

export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  return err;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}

export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Whether a child we started has ended: gone, or a zombie its parent has not reaped yet. tmux
 * 3.3a can leave a window's exited process a zombie for as long as no other child of its server
 * ends (seen on Linux 6.1, most often with a process that exits within a second), and kill(0)
 * answers for a zombie as for a live process. Elsewhere than Linux only kill answers.
 */
export function hasEnded(pid: number): boolean {
  if (!stillRunning(pid)) return true;
  if (process.platform !== 'linux') return false;
  try {
    return readProcStat(pid)?.state === 'Z';
  } catch {
    return !stillRunning(pid);
  }
}

function readLinuxDetails(facts: Mutable<PidFacts>): void {
  const clock = linuxClock();
  let parsed: ReturnType<typeof readProcStat>;
  try {
    parsed = readProcStat(facts.pid);
  } catch (err) {
    const code = errorCode(err);
    if (code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES') {
      // Only kill decides existence. A missing entry is either a death between kill and read, or
      // /proc mounted with hidepid (another user's live process is not shown to us): ask kill again.
      const again = killZero(facts.pid);
      facts.kill = again.kill;
      if (again.error !== undefined) facts.error = again.error;
      if (again.kill === 'ok' || again.kill === 'EPERM') facts.detailsHidden = `/proc/${facts.pid} is hidden from this user (${code}: hidepid)`;
      return;
    }
    facts.error = `reading /proc/${facts.pid}/stat: ${code ?? errorText(err)}`;
    return;
  }
  if (!parsed) {
    facts.error = `unparseable /proc/${facts.pid}/stat`;
    return;
  }
  facts.state = parsed.state;
  facts.startTicks = parsed.startTicks;
  // What it costs, from the same line: CPU time so far and resident memory.
  facts.rssBytes = parsed.rssPages * pageBytes();
  if (clock) {
    facts.startedAt = ticksToEpochMs(parsed.startTicks, clock.btimeSec, clock.clkTck);
    facts.cpuMs = (parsed.cpuTicks * 1000) / clock.clkTck;
  }
}

function runPs(pids: readonly number[]): Promise<string> {
  return new Promise((resolve, reject) => {
    childProcess().execFile(
      'ps',
      ['-o', 'pid=,stat=,time=,rss=,lstart=', '-p', pids.join(',')],
      { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout) => {
        // ps exits 1 when some pid vanished meanwhile; its stdout still lists the others.
        if (err && !(typeof (err as { code?: unknown }).code === 'number' && stdout)) reject(err);
        else resolve(stdout);
      },
    );
  });
}

async function readDarwinDetails(alive: Mutable<PidFacts>[], signal: AbortSignal | undefined): Promise<void> {
  for (let i = 0; i < alive.length; i += PS_BATCH) {
    throwIfAborted(signal);
    const batch = alive.slice(i, i + PS_BATCH);
    let parsed: Map<number, DarwinPsRow>;
    try {
      parsed = parseDarwinPs(await runPs(batch.map((f) => f.pid)));
    } catch (err) {
      const why = errorCode(err) ?? errorText(err);
      for (const f of batch) f.error = `ps failed (${why}); state and start time unknown`;
      continue;
    }
    for (const f of batch) {
      const row = parsed.get(f.pid);
      if (row) {
        f.state = row.state;
        f.startedAt = row.startedAt;
        f.cpuMs = row.cpuMs;
        f.rssBytes = row.rssBytes;
      } else {
        // Not listed: it probably died since kill(); ask kill again rather than guess.
        Object.assign(f, killZero(f.pid));
      }
    }
  }
}

/**
 * kill(pid, 0) every usable pid (unusable ones are left out of the result, never signalled),
 * in chunks with a yield between them so a big registry cannot stall the UI.
 */
export async function probePids(pids: readonly number[], opts: ProbeOptions = {}): Promise<Map<number, PidFacts>> {
  const now = opts.now ?? Date.now;
  const { signal } = opts;
  const full = opts.full === true;
  const platform = process.platform;
  const usable = [...new Set(pids.filter((p) => isUsablePid(p)))];
  const result = new Map<number, PidFacts>();
  const darwinAlive: Mutable<PidFacts>[] = [];

  for (let i = 0; i < usable.length; i += CHUNK) {
    if (i > 0) await yieldToLoop();
    throwIfAborted(signal);
    for (const pid of usable.slice(i, i + CHUNK)) {
      const killed = killZero(pid);
      const facts: Mutable<PidFacts> = { pid, checkedAt: now(), kill: killed.kill, error: killed.error };
      const alive = facts.kill === 'ok' || facts.kill === 'EPERM';
      if (full && alive) {
        if (platform === 'linux') readLinuxDetails(facts);
        else if (platform === 'darwin') darwinAlive.push(facts);
      }
      result.set(pid, facts);
    }
  }
  if (darwinAlive.length > 0) await readDarwinDetails(darwinAlive, signal);
  throwIfAborted(signal);
  return result;
}

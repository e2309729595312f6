// Liveness probing: kill(pid, 0) for every usable pid, plus (full mode) state and start time
// from /proc on Linux or one `ps` spawn per batch on macOS.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import type { KillResult, PidFacts } from '../core/types.js';
import { isUsablePid } from '../core/pid.js';
import { childProcess } from './builtins.js';

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

export function ticksToEpochMs(ticks: number, btimeSec: number, clkTck: number): number {
  return btimeSec * 1000 + Math.round((ticks * 1000) / clkTck);
}

let clockCache: { btimeSec: number; clkTck: number } | null | undefined;

/** Boot time and CLK_TCK, read once: both are fixed for the life of the machine. */
export function linuxClock(): { btimeSec: number; clkTck: number } | undefined {
  if (clockCache !== undefined) return clockCache ?? undefined;
  try {
    const m = /^btime\s+(\d+)/m.exec(readFileSync('/proc/stat', 'utf8'));
    if (!m?.[1]) throw new Error('no btime in /proc/stat');
    clockCache = { btimeSec: Number(m[1]), clkTck: auxvClockTicks() ?? getconfClockTicks() ?? 100 };
  } catch {
    clockCache = null;
  }
  return clockCache ?? undefined;
}

/** AT_CLKTCK, the auxiliary vector's entry for sysconf(_SC_CLK_TCK). */
const AT_CLKTCK = 17;

/**
 * CLK_TCK as the kernel handed it to this process (/proc/self/auxv: pairs of native words), the
 * value getconf prints, without spawning it (a spawn is ~5 ms of every `status`).
 */
export function parseAuxvClockTicks(auxv: Buffer, wordBytes: 4 | 8, order: 'LE' | 'BE'): number | undefined {
  const word = (at: number): number =>
    wordBytes === 8 ? Number(order === 'LE' ? auxv.readBigUInt64LE(at) : auxv.readBigUInt64BE(at)) : order === 'LE' ? auxv.readUInt32LE(at) : auxv.readUInt32BE(at);
  for (let at = 0; at + 2 * wordBytes <= auxv.length; at += 2 * wordBytes) {
    const type = word(at);
    if (type === 0) return undefined; // AT_NULL: the end
    if (type === AT_CLKTCK) {
      const ticks = word(at + wordBytes);
      return Number.isInteger(ticks) && ticks > 0 ? ticks : undefined;
    }
  }
  return undefined;
}

function auxvClockTicks(): number | undefined {
  try {
    const wordBytes = process.arch === 'ia32' || process.arch === 'arm' ? 4 : 8;
    return parseAuxvClockTicks(readFileSync('/proc/self/auxv'), wordBytes, endianness());
  } catch {
    return undefined;
  }
}

function getconfClockTicks(): number | undefined {
  try {
    const out = Number(childProcess().execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
    return Number.isInteger(out) && out > 0 ? out : undefined;
  } catch {
    // getconf missing (minimal images): the caller falls back on 100, every mainstream Linux arch's value.
    return undefined;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DARWIN_LINE = /^\s*(\d+)\s+(\S+)\s+\w{3}\s+(\w{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/;

/** Parse `LC_ALL=C ps -o pid=,stat=,lstart=` output. lstart is local time, 1 s resolution. */
export function parseDarwinPs(output: string): Map<number, { state: string; startedAt: number }> {
  const result = new Map<number, { state: string; startedAt: number }>();
  for (const line of output.split('\n')) {
    const m = DARWIN_LINE.exec(line);
    if (!m) continue;
    const [, pid, stat, mon, day, hh, mm, ss, year] = m;
    const month = MONTHS.indexOf(mon ?? '');
    if (month < 0) continue;
    const startedAt = new Date(Number(year), month, Number(day), Number(hh), Number(mm), Number(ss)).getTime();
    if (Number.isNaN(startedAt)) continue;
    result.set(Number(pid), { state: (stat ?? '').charAt(0), startedAt });
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

/** One buffer for every /proc/<pid>/stat read: a stat line is ~300 bytes (the name is at most 16). */
const STAT_BUFFER = Buffer.allocUnsafe(4096);

/**
 * open, one read, close: readFileSync on a /proc file also fstat()s it (size 0) and reads until
 * an empty read, five system calls where three do; at 600 live pids every 2 s this halves the
 * full probe's cost (~20 µs to ~10 µs a pid, measured).
 */
function readProcStatFile(pid: number): number {
  const fd = openSync(`/proc/${pid}/stat`, 'r');
  try {
    return readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * State (field 3) and start time (field 22) straight from the bytes of a stat line, with no
 * string made but the one-letter state (V8 keeps those): the full probe reads hundreds of these
 * every 2 s, and the field strings of a split were most of an idle monitor's garbage. As
 * parseProcStat: the name may hold spaces and parentheses, so fields start after the LAST ')'.
 */
export function parseStatBytes(buf: Uint8Array, length: number): { state: string; startTicks: number } | undefined {
  let at = length - 1;
  while (at >= 0 && buf[at] !== 0x29) at--; // ')'
  if (at < 0) return undefined;
  let field = 2;
  let state: string | undefined;
  for (at++; at < length; ) {
    while (at < length && (buf[at] === 0x20 || buf[at] === 0x0a)) at++;
    if (at >= length) break;
    field++;
    if (field === 3) state = String.fromCharCode(buf[at]!);
    if (field === 22) {
      let ticks = 0;
      for (; at < length && buf[at]! >= 0x30 && buf[at]! <= 0x39; at++) ticks = ticks * 10 + (buf[at]! - 0x30);
      return state === undefined ? undefined : { state, startTicks: ticks };
    }
    while (at < length && buf[at] !== 0x20 && buf[at] !== 0x0a) at++;
  }
  return undefined;
}

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
    return parseStatBytes(STAT_BUFFER, readProcStatFile(pid))?.state === 'Z';
  } catch {
    return !stillRunning(pid);
  }
}

function readLinuxDetails(facts: Mutable<PidFacts>): void {
  const clock = linuxClock();
  let length: number;
  try {
    length = readProcStatFile(facts.pid);
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
  const parsed = parseStatBytes(STAT_BUFFER, length);
  if (!parsed) {
    facts.error = `unparseable /proc/${facts.pid}/stat`;
    return;
  }
  facts.state = parsed.state;
  facts.startTicks = parsed.startTicks;
  if (clock) facts.startedAt = ticksToEpochMs(parsed.startTicks, clock.btimeSec, clock.clkTck);
}

function runPs(pids: readonly number[]): Promise<string> {
  return new Promise((resolve, reject) => {
    childProcess().execFile(
      'ps',
      ['-o', 'pid=,stat=,lstart=', '-p', pids.join(',')],
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
    let parsed: Map<number, { state: string; startedAt: number }>;
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

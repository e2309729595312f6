// One process's /proc/<pid>/stat line (Linux), read and parsed in one place: its state, parent,
// start, CPU time and resident memory all come from the same ~300 bytes, so every figure the
// engine shows of a process costs the one read the full probe already makes. Anything that needs
// these fields of a process reads them here (readProcStat), not with a parser of its own; and
// with them the machine's constants that give them meaning: boot time and clock ticks (start, CPU
// time), the page size (rss).
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { childProcess } from './builtins.js';

/** The fields of a stat line ghostwatch uses (proc(5) numbers them from 1: pid, comm, state...). */
export interface ProcStat {
  /** Field 3: R S D Z T t X I... */
  readonly state: string;
  /** Field 4. */
  readonly ppid: number;
  /** Field 22: clock ticks after boot. */
  readonly startTicks: number;
  /** Fields 14 + 15: user + system time used so far, clock ticks. */
  readonly cpuTicks: number;
  /** Field 24: resident set size, pages. */
  readonly rssPages: number;
}

/** One buffer for every read: a stat line is ~300 bytes (the name is at most 16). */
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
 * /proc/<pid>/stat's fields, or undefined when the line cannot be parsed. Throws what the read
 * throws (ENOENT, ESRCH, EACCES...): whether that means death is the caller's to decide (only
 * kill(pid, 0) does).
 */
export function readProcStat(pid: number): ProcStat | undefined {
  return parseStatBytes(STAT_BUFFER, readProcStatFile(pid));
}

const FIELD_STATE = 3;
const FIELD_PPID = 4;
const FIELD_UTIME = 14;
const FIELD_STIME = 15;
const FIELD_START = 22;
const FIELD_RSS = 24;

/**
 * The fields straight from the bytes of a stat line, with no string made but the one-letter
 * state (V8 keeps those): the full probe reads hundreds of these every 2 s, and the field strings
 * of a split were most of an idle monitor's garbage. The name may hold spaces and parentheses,
 * so fields start after the LAST ')'. A line that ends before field 24 (none does since Linux
 * 2.6) is unparseable.
 */
export function parseStatBytes(buf: Uint8Array, length: number): ProcStat | undefined {
  let at = length - 1;
  while (at >= 0 && buf[at] !== 0x29) at--; // ')'
  if (at < 0) return undefined;
  let field = 2;
  let state: string | undefined;
  let ppid = 0;
  let utime = 0;
  let stime = 0;
  let startTicks = 0;
  for (at++; at < length; ) {
    while (at < length && (buf[at] === 0x20 || buf[at] === 0x0a)) at++;
    if (at >= length) break;
    field++;
    if (field === FIELD_STATE) {
      state = String.fromCharCode(buf[at]!);
      at++;
    } else if (field === FIELD_PPID || field === FIELD_UTIME || field === FIELD_STIME || field === FIELD_START || field === FIELD_RSS) {
      // Whole numbers (rss can be negative in theory: read as 0 below).
      const negative = buf[at] === 0x2d;
      if (negative) at++;
      let n = 0;
      for (; at < length && buf[at]! >= 0x30 && buf[at]! <= 0x39; at++) n = n * 10 + (buf[at]! - 0x30);
      if (field === FIELD_PPID) ppid = n;
      else if (field === FIELD_UTIME) utime = n;
      else if (field === FIELD_STIME) stime = n;
      else if (field === FIELD_START) startTicks = n;
      else return state === undefined ? undefined : { state, ppid, startTicks, cpuTicks: utime + stime, rssPages: negative ? 0 : n };
    }
    while (at < length && buf[at] !== 0x20 && buf[at] !== 0x0a) at++;
  }
  return undefined;
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
  return parseAuxv(auxv, wordBytes, order, AT_CLKTCK);
}

function auxvClockTicks(): number | undefined {
  return ownAuxv(AT_CLKTCK);
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

/** AT_PAGESZ, the auxiliary vector's entry for the page size. */
const AT_PAGESZ = 6;

/**
 * The value of one entry of an auxiliary vector (pairs of native words ending with AT_NULL), as
 * the kernel handed it to this process: undefined when absent or not a positive integer.
 */
export function parseAuxv(auxv: Buffer, wordBytes: 4 | 8, order: 'LE' | 'BE', wanted: number): number | undefined {
  const word = (at: number): number =>
    wordBytes === 8 ? Number(order === 'LE' ? auxv.readBigUInt64LE(at) : auxv.readBigUInt64BE(at)) : order === 'LE' ? auxv.readUInt32LE(at) : auxv.readUInt32BE(at);
  for (let at = 0; at + 2 * wordBytes <= auxv.length; at += 2 * wordBytes) {
    const type = word(at);
    if (type === 0) return undefined; // AT_NULL: the end
    if (type === wanted) {
      const value = word(at + wordBytes);
      return Number.isInteger(value) && value > 0 ? value : undefined;
    }
  }
  return undefined;
}

/** This process's auxiliary vector entry, or undefined where /proc/self/auxv cannot be read. */
export function ownAuxv(wanted: number): number | undefined {
  try {
    const wordBytes = process.arch === 'ia32' || process.arch === 'arm' ? 4 : 8;
    return parseAuxv(readFileSync('/proc/self/auxv'), wordBytes, endianness(), wanted);
  } catch {
    return undefined;
  }
}

let pageCache: number | undefined;

/** The page size rss is counted in: the kernel's AT_PAGESZ, read once; 4096 (every mainstream Linux arch's) if unreadable. */
export function pageBytes(): number {
  pageCache ??= ownAuxv(AT_PAGESZ) ?? 4096;
  return pageCache;
}

// probePids against real processes: kill(pid, 0) and the details read from /proc on Linux, or from
// one `ps` per batch on macOS (run here on this machine's own ps, whose `-o pid=,stat=,lstart=`
// prints the same columns, with process.platform set to darwin: the one thing that cannot be
// real), with real children, a real zombie, a pid that dies between kill and ps, ps missing, and
// how an abort surfaces; and the parsers of /proc/<pid>/stat, ps lines and auxv.
import { afterEach, describe, expect, it, type TestContext, vi } from 'vitest';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import type { PidFacts } from '../../src/core/types.js';
import { hasEnded, killResultFromError, linuxClock, parseAuxvClockTicks, parseDarwinPs, parseProcStat, parsePsTime, parseStatBytes, probePids, ticksToEpochMs } from '../../src/os/liveness.js';
import { allocator, burner, isLinux, killAndReap, otherUsersPid, spawnSleep, zombie as stagedZombie } from '../support/processes.js';
import { until } from '../support/wait.js';
import { itOn } from '../support/platform.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const spawned: ChildProcess[] = [];
const dirs: string[] = [];
const realPlatform = Object.getOwnPropertyDescriptor(process, 'platform')!;
const realPath = process.env.PATH;
afterEach(async () => {
  vi.restoreAllMocks();
  Object.defineProperty(process, 'platform', realPlatform);
  process.env.PATH = realPath;
  await Promise.all(spawned.splice(0).map(killAndReap));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('probePids on real processes', () => {
  it('a running child is ok, not a zombie, and its start time is the spawn time', async () => {
    const spawnAt = Date.now();
    const child = spawnSleep();
    spawned.push(child);
    const facts = (await probePids([child.pid], { full: true })).get(child.pid);
    expect(facts?.kill).toBe('ok');
    expect(facts?.error).toBeUndefined();
    if (isLinux || process.platform === 'darwin') {
      expect(facts?.state).toBeDefined();
      expect(facts?.state).not.toBe('Z');
      // Within 1 s, plus a little: /proc/stat's btime (and macOS lstart) has whole-second resolution.
      expect(Math.abs((facts?.startedAt ?? 0) - spawnAt)).toBeLessThan(1100);
    }
    const quick = (await probePids([child.pid], { now: () => 42 })).get(child.pid);
    expect(quick).toEqual({ pid: child.pid, kill: 'ok', checkedAt: 42 });
  });

  it('a SIGKILLed and reaped child is ESRCH, in both modes', async () => {
    const child = spawnSleep();
    await killAndReap(child);
    expect((await probePids([child.pid])).get(child.pid)?.kill).toBe('ESRCH');
    const full = (await probePids([child.pid], { full: true })).get(child.pid);
    expect(full?.kill).toBe('ESRCH');
    expect(full?.state).toBeUndefined();
  });

  itOn(['linux'], 'process state is read from /proc')('a real zombie passes kill(pid, 0) and has state Z', async () => {
    const zombie = (await stagedZombie()).pid;
    const facts = (await probePids([zombie], { full: true })).get(zombie);
    expect(facts?.kill).toBe('ok');
    expect(facts?.state).toBe('Z');
  });

  itOn(['linux'], 'process state is read from /proc')('hasEnded: a zombie nobody reaped has ended, as a reaped child has; a running child has not', async () => {
    const zombie = (await stagedZombie()).pid;
    const live = spawnSleep();
    const dead = spawnSleep();
    await killAndReap(dead);
    expect(hasEnded(zombie)).toBe(true);
    expect(hasEnded(dead.pid)).toBe(true);
    expect(hasEnded(live.pid)).toBe(false);
    expect(hasEnded(process.pid)).toBe(false);
    await killAndReap(live);
  });

  itOn(['linux'], 'the stat line is /proc\'s')('full mode reads CPU time and resident memory from the stat line it reads anyway: a burner\'s grows, an allocation shows, a stopped child is T', async () => {
    const hot = burner();
    const big = await allocator(64);
    const paused = spawnSleep();
    spawned.push(paused);
    await new Promise((r) => paused.once('spawn', r));
    process.kill(paused.pid, 'SIGSTOP');
    const read = async () => probePids([hot.pid, big.pid, paused.pid], { full: true });
    // A signal is taken when the process next runs: wait for the stop to show.
    const first = await until(async () => {
      const r = await read();
      return r.get(paused.pid)?.state === 'T' ? r : undefined;
    }, 10_000, 'the stopped child to read T');
    expect(first.get(hot.pid)?.cpuMs).toBeGreaterThanOrEqual(0);
    await until(async () => ((await read()).get(hot.pid)?.cpuMs ?? 0) > (first.get(hot.pid)?.cpuMs ?? 0) + 100, 10_000, 'the burner\'s CPU time to grow');
    expect(first.get(big.pid)?.rssBytes).toBeGreaterThanOrEqual(64 * 1024 * 1024);
    expect(first.get(paused.pid)).toMatchObject({ kill: 'ok', state: 'T', cpuMs: expect.any(Number), rssBytes: expect.any(Number) });
    // The kill-only tick reads nothing more than before.
    expect((await probePids([hot.pid])).get(hot.pid)).toEqual({ pid: hot.pid, kill: 'ok', error: undefined, checkedAt: expect.any(Number) });
  });

  it('never signals unusable pids and leaves them out of the result', async () => {
    const spy = vi.spyOn(process, 'kill');
    const result = await probePids([1, 0, -1, 1.5, Number.NaN, Infinity, 2 ** 40, process.pid], { full: true });
    expect([...result.keys()]).toEqual([process.pid]);
    expect(spy.mock.calls.length).toBeGreaterThan(0);
    for (const [pid] of spy.mock.calls) expect(pid).toBe(process.pid);
  });

  it('EPERM for another user\'s process means alive', async (ctx) => {
    if (process.getuid?.() !== 0) {
      const pid = otherUsersPid();
      if (pid === undefined) return ctx.skip('no process owned by another user exists here');
      const facts = (await probePids([pid], { full: true })).get(pid);
      expect(['EPERM', 'ESRCH']).toContain(facts?.kill); // ESRCH only if it exited meanwhile
      return;
    }
    // As root kill(pid, 0) never fails with EPERM: probe this (root-owned) test process from a
    // child that runs as nobody, through the built module (CI builds before testing).
    const built = new URL('../../dist/src/os/liveness.js', import.meta.url);
    if (!existsSync(built)) return ctx.skip('dist/ is not built: run npm run build');
    const script = `import { probePids } from ${JSON.stringify(built.href)};
      const r = await probePids([${process.pid}], { full: true });
      process.stdout.write(JSON.stringify([...r.values()]));`;
    let out: string;
    try {
      out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        uid: 65534,
        gid: 65534,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '');
      const code = (error as { code?: unknown }).code;
      // The checkout or node itself may sit in a folder only root can read: then nobody cannot run it.
      if (code === 'EACCES' || /EACCES|ERR_MODULE_NOT_FOUND|Cannot find module/.test(stderr)) {
        return ctx.skip(`nobody cannot run node or load dist/ here: ${code === 'EACCES' ? String(code) : stderr.split('\n')[0]}`);
      }
      throw error;
    }
    const [facts] = JSON.parse(out) as PidFacts[];
    expect(facts).toMatchObject({ pid: process.pid, kill: 'EPERM' });
    expect(facts?.state).toMatch(/^[RS]$/); // /proc/<pid>/stat is world-readable: state and start still known
    expect(Math.abs((facts?.startedAt ?? 0) - (Date.now() - process.uptime() * 1000))).toBeLessThan(2000);
  });

  it('maps kill errors onto KillResult', () => {
    const err = (code: string) => Object.assign(new Error(`kill ${code}`), { code });
    expect(killResultFromError(err('ESRCH'))).toEqual({ kill: 'ESRCH' });
    expect(killResultFromError(err('EPERM'))).toEqual({ kill: 'EPERM' });
    expect(killResultFromError(err('EINVAL'))).toEqual({ kill: 'error', error: 'EINVAL' });
    expect(killResultFromError(new Error('weird'))).toEqual({ kill: 'error', error: 'weird' });
  });

  it('1,000 pids finish, yield to the event loop and honour abort', async () => {
    const pids = Array.from({ length: 1000 }, (_, i) => 2 + i);
    let immediateRan = false;
    setImmediate(() => (immediateRan = true));
    const result = await probePids(pids, { full: true });
    expect(immediateRan).toBe(true);
    expect(result.size).toBe(1000);

    const ac = new AbortController();
    setImmediate(() => ac.abort());
    await expect(probePids(pids, { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(probePids([process.pid], { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('parseProcStat', () => {
  const tail = '1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 98765 1000 200';
  it('splits after the LAST ")" so comm may hold spaces and parens', () => {
    expect(parseProcStat(`1234 (a) b (c)) S ${tail}`)).toEqual({ comm: 'a) b (c)', state: 'S', ppid: 1, startTicks: 98765 });
    expect(parseProcStat(`77 (Web Content) Z 5 ${tail.slice(2)}\n`)).toMatchObject({ comm: 'Web Content', state: 'Z', ppid: 5 });
  });
  it('rejects garbage', () => {
    expect(parseProcStat('')).toBeUndefined();
    expect(parseProcStat('1234 (x) S')).toBeUndefined();
    expect(parseProcStat('1234 no parens at all')).toBeUndefined();
  });
  it('reads state, parent and start time from the bytes alike, name tricks, garbage and all; and CPU time (14 + 15) and rss (24)', () => {
    const bytes = (t: string) => Buffer.from(t, 'utf8');
    for (const line of [`1234 (a) b (c)) S ${tail}`, `77 (Web Content) Z 5 ${tail.slice(2)}\n`, `9 (\u00e9t\u00e9 ) ) R ${tail}`]) {
      const b = bytes(line);
      const { state, startTicks, ppid } = parseProcStat(line)!;
      expect(parseStatBytes(b, b.length)).toEqual({ state, ppid, startTicks, cpuTicks: 1 + 2, rssPages: 200 });
    }
    // Only the first `length` bytes count (the buffer is shared and longer).
    const long = Buffer.concat([bytes(`5 (x) D ${tail}`), bytes(' 999 (y) Z 1 2 3')]);
    expect(parseStatBytes(long, bytes(`5 (x) D ${tail}`).length)).toEqual({ state: 'D', ppid: 1, startTicks: 98765, cpuTicks: 3, rssPages: 200 });
    // A kernel thread's rss is 0; a line that ends at field 23 has no rss and is not read.
    const kthread = bytes(`2 (kthreadd) S 0 ${tail.slice(2).replace(/ 200$/, ' 0')}`);
    expect(parseStatBytes(kthread, kthread.length)).toMatchObject({ ppid: 0, rssPages: 0 });
    const short = bytes(`5 (x) S ${tail.replace(/ 200$/, '')}`);
    expect(parseStatBytes(short, short.length)).toBeUndefined();
    for (const bad of ['', '1234 (x) S', '1234 no parens at all']) expect(parseStatBytes(bytes(bad), bytes(bad).length)).toBeUndefined();
  });
  it('converts clock ticks to epoch ms', () => {
    expect(ticksToEpochMs(98765, 1_700_000_000, 100)).toBe(1_700_000_000_000 + 987_650);
    expect(ticksToEpochMs(3, 10, 1000)).toBe(10_003);
  });
});

describe('parseDarwinPs', () => {
  // Recorded shape of `LC_ALL=C ps -o pid=,stat=,time=,rss=,lstart= -p ...` on macOS (pid column
  // right-aligned; time is [[hh:]mm:]ss.hh there, rss KiB).
  const output = [
    '    1 Ss     12:34.56  20480 Mon Nov 22 02:47:13 2026',
    '  412 S<s     0:00.03   1320 Sun Nov  1 09:05:00 2026',
    ' 8123 Z+      0:00.00      0 Tue Dec 31 23:59:59 2024',
    '54321 R+   1:02:03.04 512000 Wed Jan  7 00:00:01 2026',
    '    7 T       0:01.50   2048 Wed Jan  7 00:00:01 2026',
    'garbage line',
    '',
  ].join('\n');
  it('reads pid, state letter, local start time, CPU time and rss', () => {
    const rows = parseDarwinPs(output);
    expect([...rows.keys()]).toEqual([1, 412, 8123, 54321, 7]);
    expect(rows.get(1)).toEqual({ state: 'S', startedAt: new Date(2026, 10, 22, 2, 47, 13).getTime(), cpuMs: (12 * 60 + 34) * 1000 + 560, rssBytes: 20480 * 1024 });
    expect(rows.get(412)).toEqual({ state: 'S', startedAt: new Date(2026, 10, 1, 9, 5, 0).getTime(), cpuMs: 30, rssBytes: 1320 * 1024 });
    expect(rows.get(8123)).toMatchObject({ state: 'Z', cpuMs: 0, rssBytes: 0 });
    expect(rows.get(54321)).toEqual({ state: 'R', startedAt: new Date(2026, 0, 7, 0, 0, 1).getTime(), cpuMs: 3_723_040, rssBytes: 512000 * 1024 });
    expect(rows.get(7)?.state).toBe('T');
  });
  it("reads ps's CPU time as macOS and procps write it", () => {
    expect(parsePsTime('0:00.03')).toBe(30);
    expect(parsePsTime('123:45.67')).toBe((123 * 60 + 45) * 1000 + 670);
    expect(parsePsTime('00:00:01')).toBe(1000);
    expect(parsePsTime('2-03:04:05')).toBe(((2 * 24 + 3) * 3600 + 4 * 60 + 5) * 1000);
    expect(parsePsTime('7.5')).toBe(7500);
    for (const bad of ['', '-', 'abc', '1:2:3:4', '1-']) expect(parsePsTime(bad)).toBeUndefined();
  });
  it('ignores empty output', () => {
    expect(parseDarwinPs('').size).toBe(0);
  });
});

describe('CLK_TCK from the auxiliary vector (no getconf spawn)', () => {
  /** An auxv image: [type, value] pairs in `wordBytes`-byte words of byte order `order`. */
  const auxv = (pairs: [number, number][], wordBytes: 4 | 8, order: 'LE' | 'BE'): Buffer => {
    const buf = Buffer.alloc(pairs.length * 2 * wordBytes);
    pairs.flat().forEach((word, i) => {
      const at = i * wordBytes;
      if (wordBytes === 8) order === 'LE' ? buf.writeBigUInt64LE(BigInt(word), at) : buf.writeBigUInt64BE(BigInt(word), at);
      else order === 'LE' ? buf.writeUInt32LE(word, at) : buf.writeUInt32BE(word, at);
    });
    return buf;
  };
  it.each([
    ['64-bit little-endian', [[6, 4096], [17, 100], [0, 0]], 8, 'LE', 100],
    ['64-bit big-endian', [[6, 4096], [17, 250], [0, 0]], 8, 'BE', 250],
    ['32-bit little-endian', [[16, 1], [17, 1000], [0, 0]], 4, 'LE', 1000],
    ['32-bit big-endian', [[17, 300], [0, 0]], 4, 'BE', 300],
    ['no AT_CLKTCK before AT_NULL', [[6, 4096], [0, 0], [17, 100]], 8, 'LE', undefined],
    ['no entry at all', [[6, 4096]], 8, 'LE', undefined],
    ['a zero tick rate', [[17, 0], [0, 0]], 8, 'LE', undefined],
  ] as const)('%s', (_name, pairs, wordBytes, order, expected) => {
    expect(parseAuxvClockTicks(auxv(pairs.map(([t, v]) => [t, v]), wordBytes, order), wordBytes, order)).toBe(expected);
  });
  it('a truncated last pair is not read', () => {
    expect(parseAuxvClockTicks(auxv([[17, 100]], 8, 'LE').subarray(0, 12), 8, 'LE')).toBeUndefined();
  });
  it.runIf(isLinux && existsSync('/proc/self/auxv'))('on this machine it is what getconf CLK_TCK prints', () => {
    const getconf = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    expect(linuxClock()?.clkTck).toBe(getconf);
  });
});


/** Pids no kernel hands out (above Linux's 2^22 and macOS's 99,999): kill(pid, 0) is ESRCH. */
const NEVER = (n: number) => Array.from({ length: n }, (_, i) => 0x7fff0000 + i);

/** The macOS path on this machine's ps, or skip when this ps cannot print lstart. */
function asDarwin(ctx: TestContext): void {
  try {
    execFileSync('ps', ['-o', 'pid=,stat=,time=,rss=,lstart=', '-p', String(process.pid)], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, LC_ALL: 'C' } });
  } catch {
    ctx.skip('not on this platform: this ps cannot print `-o pid=,stat=,time=,rss=,lstart=`');
  }
  Object.defineProperty(process, 'platform', { ...realPlatform, value: 'darwin' });
}

/** Wait synchronously (the probe is mid-run) until kill(pid, 0) says the pid is gone. */
function waitGoneSync(pid: number, ms = 3_000): void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const end = Date.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > end) throw new Error(`pid ${pid} still there after ${ms} ms`);
    Atomics.wait(cell, 0, 0, 5);
  }
}

describe('the macOS path: state and start time from one ps per batch', () => {
  it('a running child is ok, with its state and its start time (local, whole seconds) from ps', async (ctx) => {
    asDarwin(ctx);
    const spawnAt = Date.now();
    const child = spawnSleep();
    spawned.push(child);
    const facts = (await probePids([child.pid, ...NEVER(3)], { full: true, now: () => 7 })).get(child.pid);
    expect(facts).toMatchObject({ pid: child.pid, kill: 'ok', checkedAt: 7, state: expect.stringMatching(/^[RS]$/) });
    expect(facts?.error).toBeUndefined();
    // lstart is whole seconds, counted from a boot time in whole seconds: up to 2 s early.
    expect(facts?.startedAt).toBeGreaterThan(spawnAt - 2_100);
    expect(facts?.startedAt).toBeLessThan(spawnAt + 1_000);
  });

  it('a stopped child is T to ps, with its CPU time and resident memory from the same line', async (ctx) => {
    asDarwin(ctx);
    const child = spawnSleep();
    spawned.push(child);
    await new Promise((r) => child.once('spawn', r));
    process.kill(child.pid, 'SIGSTOP');
    const facts = await until(async () => {
      const f = (await probePids([child.pid], { full: true })).get(child.pid);
      return f?.state === 'T' ? f : undefined;
    }, 10_000, 'T from ps');
    expect(facts).toMatchObject({ kill: 'ok', state: 'T', cpuMs: expect.any(Number) });
    expect(facts?.rssBytes).toBeGreaterThan(0);
  });

  it('a real zombie is ok to kill(pid, 0) and Z to ps', async (ctx) => {
    asDarwin(ctx);
    // Found through ps, as this test runs the darwin path (process.platform says darwin).
    const zombie = (await stagedZombie()).pid;
    const facts = (await probePids([zombie], { full: true })).get(zombie);
    expect(facts).toMatchObject({ kill: 'ok', state: 'Z' });
  });

  it('a pid that dies between kill and ps is asked again and is ESRCH, with no state and no error', async (ctx) => {
    asDarwin(ctx);
    // A grandchild that its shell reaps the moment it dies: gone for kill(pid, 0) without our loop.
    const sh = spawn('sh', ['-c', 'sleep 30 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    spawned.push(sh);
    const victim = await new Promise<number>((resolve) => sh.stdout!.once('data', (b: Buffer) => resolve(Number(String(b).trim()))));
    const live = spawnSleep();
    spawned.push(live);
    // The probe checks 128 pids, yields, checks the rest, then runs ps: the victim dies in the yield.
    let died = false;
    setImmediate(() => {
      process.kill(victim, 'SIGKILL');
      waitGoneSync(victim);
      died = true;
    });
    const result = await probePids([victim, live.pid, ...NEVER(200)], { full: true });
    expect(died).toBe(true);
    expect(result.get(victim)).toEqual({ pid: victim, checkedAt: expect.any(Number), kill: 'ESRCH' });
    expect(result.get(live.pid)).toMatchObject({ kill: 'ok', state: expect.stringMatching(/^[RS]$/) });
  });

  it('ps missing: every live pid stays ok (only kill decides) with the reason its state is unknown', async (ctx) => {
    asDarwin(ctx);
    const child = spawnSleep();
    spawned.push(child);
    const empty = mkdtempSync(join(tmpdir(), 'gw-no-ps-'));
    dirs.push(empty);
    process.env.PATH = empty;
    const result = await probePids([child.pid, process.pid, ...NEVER(2)], { full: true });
    for (const pid of [child.pid, process.pid]) {
      expect(result.get(pid)).toMatchObject({ kill: 'ok', error: 'ps failed (ENOENT); state and start time unknown' });
      expect(result.get(pid)?.state).toBeUndefined();
    }
    expect(result.get(NEVER(1)[0]!)).toMatchObject({ kill: 'ESRCH' });
    expect(result.get(NEVER(1)[0]!)?.error).toBeUndefined();
  });

  it('an abort while ps runs rejects once it returns: nothing half-read is handed back', async (ctx) => {
    asDarwin(ctx);
    const child = spawnSleep();
    spawned.push(child);
    const ac = new AbortController();
    const probe = probePids([child.pid], { full: true, signal: ac.signal });
    ac.abort(new Error('monitor closing'));
    await expect(probe).rejects.toThrow('monitor closing');
  });
});

describe('full mode where the details cannot be read', () => {
  it('/proc unreadable for want of a file descriptor: the error says why, kill\'s answer stands, no state is guessed', async (ctx) => {
    if (!isLinux) return ctx.skip('not on this platform: /proc is Linux only');
    try {
      execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    } catch {
      return ctx.skip('not on this platform: no prlimit (util-linux) to lower our own file limit');
    }
    const child = spawnSleep();
    spawned.push(child);
    const limit = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--raw', '--noheadings', '--output', 'SOFT,HARD'], { encoding: 'utf8' }).trim().split(/\s+/);
    // Spare descriptors keep room to spawn prlimit again; the limit is what is open with them.
    const spare = Array.from({ length: 16 }, () => openSync('/dev/null', 'r'));
    let probe: ReturnType<typeof probePids>;
    try {
      // The limit caps descriptor NUMBERS: set it to the lowest free one (open() always takes the
      // lowest), and the next open fails with EMFILE whatever holes lie above. (Counting the open
      // descriptors instead failed on Node 24, whose descriptors are not contiguous.)
      const lowestFree = openSync('/dev/null', 'r');
      closeSync(lowestFree);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${lowestFree}:${limit[1]}`], { stdio: 'ignore' });
      // The /proc reads happen before probePids first awaits: all within the lowered limit.
      probe = probePids([child.pid], { full: true });
    } finally {
      for (const fd of spare) closeSync(fd);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit[0]}:${limit[1]}`], { stdio: 'ignore' });
    }
    const facts = (await probe).get(child.pid);
    expect(facts).toMatchObject({ kill: 'ok', error: `reading /proc/${child.pid}/stat: EMFILE` });
    expect(facts?.state).toBeUndefined();
    expect(facts?.startedAt).toBeUndefined();
  });

  it('on a platform with neither /proc nor the macOS ps path, full mode gives kill\'s answer alone', async () => {
    const child = spawnSleep();
    spawned.push(child);
    Object.defineProperty(process, 'platform', { ...realPlatform, value: 'freebsd' });
    const result = await probePids([child.pid, ...NEVER(1)], { full: true, now: () => 3 });
    expect(result.get(child.pid)).toEqual({ pid: child.pid, checkedAt: 3, kill: 'ok', error: undefined });
    expect(result.get(NEVER(1)[0]!)).toEqual({ pid: NEVER(1)[0], checkedAt: 3, kill: 'ESRCH', error: undefined });
  });
});

describe('abort reasons', () => {
  it('an Error reason is what the probe rejects with; any other reason becomes an AbortError', async () => {
    const stop = new Error('stop');
    await expect(probePids([process.pid], { signal: AbortSignal.abort(stop) })).rejects.toBe(stop);
    const ac = new AbortController();
    ac.abort('just a string');
    await expect(probePids([process.pid], { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError', message: 'The operation was aborted' });
  });
});

describe('what the parsers refuse', () => {
  it('a ps line in a month name ps would not print under LC_ALL=C is skipped, not misread', () => {
    const rows = parseDarwinPs(['  10 S    0:00.01 100 Mon Okt  5 09:05:00 2026', '  11 R    0:00.01 100 Mon Oct  5 09:05:00 2026'].join('\n'));
    expect([...rows.keys()]).toEqual([11]);
  });

  it('a stat line cut short (trailing blanks before field 22) has no start time', () => {
    const cut = Buffer.from('1234 (x) S 1 2 3 \n');
    expect(parseStatBytes(cut, cut.length)).toBeUndefined();
  });

  it('a thrown non-Error (a string) is an error result carrying that text', () => {
    expect(killResultFromError('kill went wrong')).toEqual({ kill: 'error', error: 'kill went wrong' });
  });
});

// probePids beyond the Linux /proc path: the macOS path (one `ps` per batch) run on this machine's
// own ps, whose `-o pid=,stat=,lstart=` prints the same columns (process.platform is set to darwin
// for those tests: the one thing here that cannot be real), with real children, a real zombie, a
// pid that dies between kill and ps, and ps missing; and how an abort surfaces.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { killResultFromError, parseDarwinPs, parseStatBytes, probePids } from '../../src/os/liveness.js';
import { childrenOf, isLinux, killAndReap, spawnSleep } from '../support/processes.js';
import { until } from '../support/wait.js';

const spawned: ChildProcess[] = [];
const dirs: string[] = [];
const realPlatform = Object.getOwnPropertyDescriptor(process, 'platform')!;
const realPath = process.env.PATH;
afterEach(async () => {
  Object.defineProperty(process, 'platform', realPlatform);
  process.env.PATH = realPath;
  await Promise.all(spawned.splice(0).map(killAndReap));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Pids no kernel hands out (above Linux's 2^22 and macOS's 99,999): kill(pid, 0) is ESRCH. */
const NEVER = (n: number) => Array.from({ length: n }, (_, i) => 0x7fff0000 + i);

/** The macOS path on this machine's ps, or skip when this ps cannot print lstart. */
function asDarwin(ctx: TestContext): void {
  try {
    execFileSync('ps', ['-o', 'pid=,stat=,lstart=', '-p', String(process.pid)], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, LC_ALL: 'C' } });
  } catch {
    ctx.skip('not on this platform: this ps cannot print `-o pid=,stat=,lstart=`');
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

  it('a real zombie is ok to kill(pid, 0) and Z to ps', async (ctx) => {
    asDarwin(ctx);
    const sh = spawn('sh', ['-c', 'sleep 0.1 & exec sleep 30'], { stdio: 'ignore' });
    spawned.push(sh);
    const zombie = await until(() => {
      if (!isLinux) return undefined;
      for (const pid of childrenOf(sh.pid!)) {
        const out = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
        if (out.startsWith('Z')) return pid;
      }
      return undefined;
    }, 3_000);
    if (zombie === undefined) return ctx.skip('not on this platform: no /proc children list to find the zombie by');
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
    const rows = parseDarwinPs(['  10 S    Mon Okt  5 09:05:00 2026', '  11 R    Mon Oct  5 09:05:00 2026'].join('\n'));
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

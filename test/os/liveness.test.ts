import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { PidFacts } from '../../src/core/types.js';
import {
  killResultFromError,
  linuxClock,
  parseAuxvClockTicks,
  parseDarwinPs,
  parseProcStat,
  parseStatBytes,
  probePids,
  ticksToEpochMs,
} from '../../src/os/liveness.js';
import { childrenOf, isLinux, killAndReap, otherUsersPid, spawnSleep } from '../support/processes.js';
import { until } from '../support/wait.js';
import { itOn } from '../support/platform.js';

const spawned: ChildProcess[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(spawned.splice(0).map(killAndReap));
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
    // The exec'd sleep inherits the backgrounded child and never reaps it.
    const sh = spawn('sh', ['-c', 'sleep 0.1 & exec sleep 30'], { stdio: 'ignore' });
    spawned.push(sh);
    const shPid = sh.pid as number;
    const zombie = await until(() => {
      for (const pid of childrenOf(shPid)) {
        try {
          if (parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state === 'Z') return pid;
        } catch {
          // not there yet
        }
      }
      return undefined;
    }, 3000);
    expect(zombie, 'no zombie child appeared within 3 s').toBeDefined();
    const facts = (await probePids([zombie as number], { full: true })).get(zombie as number);
    expect(facts?.kill).toBe('ok');
    expect(facts?.state).toBe('Z');
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
  it('reads state and start time from the bytes alike, name tricks, garbage and all', () => {
    const bytes = (t: string) => Buffer.from(t, 'utf8');
    for (const line of [`1234 (a) b (c)) S ${tail}`, `77 (Web Content) Z 5 ${tail.slice(2)}\n`, `9 (\u00e9t\u00e9 ) ) R ${tail}`]) {
      const b = bytes(line);
      const { state, startTicks } = parseProcStat(line)!;
      expect(parseStatBytes(b, b.length)).toEqual({ state, startTicks });
    }
    // Only the first `length` bytes count (the buffer is shared and longer).
    const long = Buffer.concat([bytes(`5 (x) D ${tail}`), bytes(' 999 (y) Z 1 2 3')]);
    expect(parseStatBytes(long, bytes(`5 (x) D ${tail}`).length)).toEqual({ state: 'D', startTicks: 98765 });
    for (const bad of ['', '1234 (x) S', '1234 no parens at all']) expect(parseStatBytes(bytes(bad), bytes(bad).length)).toBeUndefined();
  });
  it('converts clock ticks to epoch ms', () => {
    expect(ticksToEpochMs(98765, 1_700_000_000, 100)).toBe(1_700_000_000_000 + 987_650);
    expect(ticksToEpochMs(3, 10, 1000)).toBe(10_003);
  });
});

describe('parseDarwinPs', () => {
  // Recorded shape of `LC_ALL=C ps -o pid=,stat=,lstart= -p ...` on macOS (pid column right-aligned).
  const output = [
    '    1 Ss   Mon Nov 22 02:47:13 2026',
    '  412 S<s  Sun Nov  1 09:05:00 2026',
    ' 8123 Z+   Tue Dec 31 23:59:59 2024',
    '54321 R+   Wed Jan  7 00:00:01 2026',
    'garbage line',
    '',
  ].join('\n');
  it('reads pid, state letter and local start time', () => {
    const rows = parseDarwinPs(output);
    expect([...rows.keys()]).toEqual([1, 412, 8123, 54321]);
    expect(rows.get(1)).toEqual({ state: 'S', startedAt: new Date(2026, 10, 22, 2, 47, 13).getTime() });
    expect(rows.get(412)).toEqual({ state: 'S', startedAt: new Date(2026, 10, 1, 9, 5, 0).getTime() });
    expect(rows.get(8123)?.state).toBe('Z');
    expect(rows.get(54321)).toEqual({ state: 'R', startedAt: new Date(2026, 0, 7, 0, 0, 1).getTime() });
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

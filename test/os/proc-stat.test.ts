// The one reader of /proc/<pid>/stat on real processes: a child's parent, state, start, CPU time
// and resident memory from one read; a gone pid throws for the caller to ask kill; the page size
// from the auxiliary vector, as getconf says it.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { linuxClock, pageBytes, parseAuxv, readProcStat } from '../../src/os/proc-stat.js';
import { stillRunning } from '../../src/os/liveness.js';
import { deadPid, sleeper } from '../support/processes.js';
import { describeOn } from '../support/platform.js';
import { until } from '../support/wait.js';

describeOn(['linux'], 'the stat line is /proc\'s')('readProcStat', () => {
  it('reads a child\'s parent, state, start, CPU time and resident memory from one line', async () => {
    const child = sleeper();
    await new Promise((r) => child.once('spawn', r));
    // Once it has exec'd sleep (a fresh fork shares our memory and has not run yet).
    const stat = await until(() => {
      const s = readProcStat(child.pid);
      return s && s.rssPages > 0 && s.rssPages * pageBytes() < 64 * 1024 * 1024 ? s : undefined;
    }, 5_000, 'the exec');
    expect(stat.ppid).toBe(process.pid);
    expect(stat.state).toMatch(/^[RS]$/);
    expect(stat.cpuTicks).toBeGreaterThanOrEqual(0);
    const clock = linuxClock()!;
    const started = clock.btimeSec * 1000 + (stat.startTicks * 1000) / clock.clkTck;
    expect(Math.abs(started - Date.now())).toBeLessThan(60_000);
  });

  it('throws for a pid that is gone: whether that is death is kill\'s to say', async () => {
    const pid = await deadPid();
    expect(() => readProcStat(pid)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('the page size rss is counted in is the one getconf prints', () => {
    expect(pageBytes()).toBe(Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()));
  });
});

describe('stillRunning (the fast tick\'s allocation-free check)', () => {
  it('is true for a live child, false for a gone pid and for a pid never to be signalled', async () => {
    expect(stillRunning(sleeper().pid)).toBe(true);
    expect(stillRunning(await deadPid())).toBe(false);
    for (const pid of [0, -1, 1, 1.5]) expect(stillRunning(pid)).toBe(false);
  });
});

describe('parseAuxv', () => {
  it('finds AT_PAGESZ (6) as it finds AT_CLKTCK, and nothing past AT_NULL', () => {
    const words = [6, 16384, 17, 100, 0, 0, 6, 4096];
    const buf = Buffer.alloc(words.length * 8);
    words.forEach((w, i) => buf.writeBigUInt64LE(BigInt(w), i * 8));
    expect(parseAuxv(buf, 8, 'LE', 6)).toBe(16384);
    expect(parseAuxv(buf, 8, 'LE', 17)).toBe(100);
    expect(parseAuxv(buf, 8, 'LE', 33)).toBeUndefined();
  });
});

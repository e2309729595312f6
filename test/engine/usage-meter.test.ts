// CPU % from the full probe's readings: between two readings of the same process, at least half
// a cadence apart; the first reading of a process is its life's average; a recycled pid starts a
// new count; facts without a reading keep what was known; dropped pids are forgotten.
import { describe, expect, it } from 'vitest';
import type { PidFacts } from '../../src/core/types.js';
import { UsageMeter } from '../../src/engine/usage-meter.js';

const reading = (at: number, cpuMs: number, f: Partial<PidFacts> = {}): PidFacts => ({ pid: 7, kill: 'ok', state: 'R', startedAt: 0, startTicks: 0, checkedAt: at, cpuMs, rssBytes: 4096, ...f });

describe('UsageMeter', () => {
  it('the first reading is an average over the process\'s life; the next ones over the interval between readings', () => {
    const meter = new UsageMeter(1_000);
    expect(meter.usage(undefined, reading(10_000, 2_500))).toEqual({ cpuPct: 25, cpuOver: 'life', rssBytes: 4096 });
    expect(meter.usage(undefined, reading(12_000, 3_500))).toEqual({ cpuPct: 50, cpuOver: 'interval', rssBytes: 4096 });
    expect(meter.usage(undefined, reading(14_000, 3_500))).toEqual({ cpuPct: 0, cpuOver: 'interval', rssBytes: 4096 });
  });

  it('a reading too close to the last one tells nothing: what was known stands, and the next compares with the older one', () => {
    const meter = new UsageMeter(1_000);
    const first = meter.usage(undefined, reading(10_000, 0));
    const known: PidFacts = { pid: 7, kill: 'ok', startedAt: 0, startTicks: 0, checkedAt: 10_000, usage: first };
    expect(meter.usage(known, reading(10_050, 40))).toBe(first);
    expect(meter.usage(known, reading(12_000, 1_000))).toMatchObject({ cpuPct: 50, cpuOver: 'interval' });
  });

  it('a recycled pid (another start) starts a new count; a gone pid is forgotten', () => {
    const meter = new UsageMeter(1_000);
    meter.usage(undefined, reading(10_000, 9_000));
    expect(meter.usage(undefined, reading(12_000, 100, { startTicks: 500, startedAt: 11_000 }))).toMatchObject({ cpuPct: 10, cpuOver: 'life' });
    expect(meter.usage(undefined, { pid: 7, kill: 'ESRCH', checkedAt: 13_000 })).toBeUndefined();
    expect(meter.usage(undefined, reading(14_000, 200, { startTicks: 500, startedAt: 11_000 }))).toMatchObject({ cpuOver: 'life' });
  });

  it('facts without a reading (another host, an eviction re-check) keep what was known of the same process', () => {
    const meter = new UsageMeter(1_000);
    const usage = { cpuPct: 3, cpuOver: 'interval' as const, rssBytes: 1 };
    const known: PidFacts = { pid: 7, kill: 'ok', startedAt: 0, startTicks: 0, checkedAt: 1, usage };
    expect(meter.usage(known, { pid: 7, kill: 'ok', startedAt: 0, startTicks: 0, checkedAt: 2 })).toBe(usage);
    expect(meter.usage(known, { pid: 7, kill: 'ok', startedAt: 5, startTicks: 5, checkedAt: 2 })).toBeUndefined();
    expect(meter.usage(undefined, { pid: 7, kill: 'ok', checkedAt: 2 })).toBeUndefined();
  });

  it('a reading the table would show as before hands back the known object: nothing allocated, nothing changed', () => {
    const meter = new UsageMeter(1_000);
    const first = meter.usage(undefined, reading(10_000, 0));
    const known: PidFacts = { pid: 7, kill: 'ok', startedAt: 0, startTicks: 0, checkedAt: 10_000, usage: meter.usage(undefined, reading(12_000, 0)) };
    expect(first?.cpuOver).toBe('life');
    expect(meter.usage(known, reading(14_000, 0.5))).toBe(known.usage); // 0.025 % shows as 0.0, like 0
    expect(meter.usage(known, reading(16_000, 200.5))).toEqual({ cpuPct: 10, cpuOver: 'interval', rssBytes: 4096 });
  });

  it('memory alone (no CPU time read) is still shown', () => {
    expect(new UsageMeter(1_000).usage(undefined, reading(10_000, 0, { cpuMs: undefined, rssBytes: 8192 }))).toEqual({ cpuPct: undefined, cpuOver: undefined, rssBytes: 8192 });
  });

  it('forgets the pids no longer watched', () => {
    const meter = new UsageMeter(1_000);
    meter.usage(undefined, reading(10_000, 1_000));
    meter.retain(new Set([8]));
    expect(meter.usage(undefined, reading(12_000, 1_500))?.cpuOver).toBe('life');
    meter.retain(new Set([7]));
    expect(meter.usage(undefined, reading(14_000, 2_500))?.cpuOver).toBe('interval');
  });
});

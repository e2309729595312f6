// How a process's cost is written (one way for the table, the detail view and the merge's "is
// this a change"), and CPU % from two readings.
import { describe, expect, it } from 'vitest';
import { bytesText, cpuPercent, cpuText, sameShownUsage } from '../../src/core/usage.js';

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

describe('what a process costs, as text', () => {
  it.each([
    [undefined, '-'],
    [Number.NaN, '-'],
    [-1, '-'],
    [0, '0.0'],
    [0.04, '0.0'],
    [0.05, '0.1'],
    [3.44, '3.4'],
    [9.94, '9.9'],
    [9.96, '10'],
    [12.5, '13'],
    [99.4, '99'],
    [250, '250'],
    [1234.4, '1234'],
  ])('CPU %s %% is %s', (pct, text) => expect(cpuText(pct)).toBe(text));

  it.each([
    [undefined, '-'],
    [-5, '-'],
    [0, '0K'],
    [512 * KIB, '512K'],
    [MIB - 1, '1024K'],
    [MIB, '1.0M'],
    [3.44 * MIB, '3.4M'],
    [10 * MIB, '10M'],
    [123.4 * MIB, '123M'],
    [GIB - 1, '1024M'],
    [GIB, '1.0G'],
    [1.25 * GIB, '1.3G'],
    [10 * GIB, '10G'],
    [12 * GIB, '12G'],
    [1024 * GIB, '1024G'],
    [9_999 * GIB, '9999G'],
    [10_000 * GIB, '10T'],
    // A remote host's figure of the right shape, as large as the probe's parser lets through: never a throw, at most 5 characters.
    [300_000_000_000 * 4096, '1118T'], // 'P 42 ok S 100 300000000000 5000' from a host whose page is 4 KiB: was a throw that blanked the table
    [Number.MAX_SAFE_INTEGER, '8192T'],
    [Number.MAX_SAFE_INTEGER + 2, '-'],
    [1e300, '-'],
    [Infinity, '-'],
  ])('%s bytes are %s', (bytes, text) => {
    expect(bytesText(bytes)).toBe(text);
    expect(bytesText(bytes).length).toBeLessThanOrEqual(5);
  });

  it('two usages are alike when the table would show them alike', () => {
    const u = { cpuPct: 12.3, cpuOver: 'interval' as const, rssBytes: 100 * MIB };
    expect(sameShownUsage(u, u)).toBe(true);
    expect(sameShownUsage(u, { ...u, cpuPct: 12.4, rssBytes: 100 * MIB + 4096 })).toBe(true);
    expect(sameShownUsage(u, { ...u, cpuPct: 13.6 })).toBe(false);
    expect(sameShownUsage(u, { ...u, rssBytes: 101 * MIB })).toBe(false);
    expect(sameShownUsage(u, { ...u, cpuOver: 'life' })).toBe(false);
    expect(sameShownUsage(u, undefined)).toBe(false);
    expect(sameShownUsage(undefined, undefined)).toBe(true);
  });

  it('CPU % is the CPU time used between two readings over the time between them', () => {
    expect(cpuPercent(1_000, 2_000, 2_000)).toBe(50);
    expect(cpuPercent(0, 3_000, 1_000)).toBe(300);
    expect(cpuPercent(5, 5, 2_000)).toBe(0);
    expect(cpuPercent(2_000, 1_000, 2_000)).toBeUndefined(); // the count went back: another process
    expect(cpuPercent(0, 10, 0)).toBeUndefined();
    expect(cpuPercent(0, 10, -5)).toBeUndefined();
  });
});

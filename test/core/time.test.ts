// The one rule for a time from outside (core/time.ts): a finite number of ms within a hundred years
// of now is a time; anything else is an invalid time, shown in the evidence and never used.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTime, readTime, TIME_RANGE_MS, type InvalidTime } from '../../src/core/time.js';
import { alive, claim, NOW, one, os, run, session } from './fixtures.js';

describe('isTime', () => {
  it.each([
    ['now', NOW, true],
    ['100 years ago, to the ms', NOW - TIME_RANGE_MS, true],
    ['100 years ahead, to the ms', NOW + TIME_RANGE_MS, true],
    ['a ms more than 100 years ago', NOW - TIME_RANGE_MS - 1, false],
    ['a ms more than 100 years ahead', NOW + TIME_RANGE_MS + 1, false],
    ['1e300', 1e300, false],
    ['-1e300', -1e300, false],
    ['the largest Date', 8.64e15, false],
    ['NaN', Number.NaN, false],
    ['Infinity', Number.POSITIVE_INFINITY, false],
    ['-Infinity', Number.NEGATIVE_INFINITY, false],
    ['a numeric string', String(NOW), false],
    ['a bigint', BigInt(NOW), false],
    ['null', null, false],
  ])('%s: %s', (_what, value, expected) => {
    expect(isTime(value, NOW)).toBe(expected);
  });

  it('is a time only when a Date can hold it', () => {
    fc.assert(
      fc.property(fc.double(), (value) => {
        if (isTime(value, NOW)) expect(Number.isNaN(new Date(value).getTime())).toBe(false);
      }),
    );
  });
});

describe('readTime', () => {
  it('takes a time, leaves an absent field absent, and notes one that is there and is no time', () => {
    const invalid: InvalidTime[] = [];
    expect(readTime('last_seen', NOW / 1000, NOW, NOW, invalid)).toBe(NOW);
    expect(readTime('offline_since', undefined, undefined, NOW, invalid)).toBeUndefined();
    expect(readTime('offline_since', null, undefined, NOW, invalid)).toBeUndefined();
    expect(readTime('pid_started_at', 1e300, 1e300, NOW, invalid)).toBeUndefined();
    expect(readTime('startedAt', 'soon\u001b[2J', Number.NaN, NOW, invalid)).toBeUndefined();
    expect(readTime('claimed_at', { at: 1 }, undefined, NOW, invalid)).toBeUndefined();
    expect(invalid).toEqual([
      { field: 'pid_started_at', value: '1e+300' },
      { field: 'startedAt', value: 'soon^[[2J' },
      { field: 'claimed_at', value: '{"at":1}' },
    ]);
  });
});

describe('reconcile with invalid times', () => {
  it('shows an entry’s invalid times in its evidence and judges it on what is known', () => {
    const invalidTimes = [{ field: 'pid_started_at', value: '1e+300' }];
    // The adapter left pidStartedAt unknown: the start is checked against registered_at instead.
    const f = one(run([session('a', { pid: 42, registeredAt: NOW - 60_000, invalidTimes })], os([alive(42, { startedAt: NOW - 120_000 })])), 'a');
    expect(f.verdict).toBe('live');
    expect(f.evidence.invalidTimes).toEqual(invalidTimes);
    expect(f.evidence.start).toMatchObject({ reference: 'registered_at' });
  });

  it('adds a process start that is no time to them, and leaves identity unchecked', () => {
    const f = one(run([session('a', { pid: 42, registeredAt: NOW - 60_000, invalidTimes: [{ field: 'last_seen', value: '1e+300' }] })], os([alive(42, { startedAt: undefined, invalidStart: 'tick 999999999999999999 on build-42' })])), 'a');
    expect(f.verdict).toBe('live');
    expect(f.reason).toBe('pid 42 is alive; its start time is an invalid time: identity unchecked');
    expect(f.evidence.invalidTimes).toEqual([
      { field: 'last_seen', value: '1e+300' },
      { field: 'process start', value: 'tick 999999999999999999 on build-42' },
    ]);
  });

  it('shows a claim’s invalid times, and its pid’s, in its evidence', () => {
    const findings = run([session('h', { pid: 42 })], os([alive(42, { startedAt: undefined, invalidStart: 'tick 9 on x' })]), { claims: [claim('repo', { holder: 'h', pid: 42, invalidTimes: [{ field: 'acquired_at', value: '1e+300' }] })] });
    const c = findings.find((f) => f.kind === 'claim')!;
    expect(c.verdict).toBe('held');
    expect(c.evidence.invalidTimes).toEqual([
      { field: 'acquired_at', value: '1e+300' },
      { field: 'process start', value: 'tick 9 on x' },
    ]);
  });
});

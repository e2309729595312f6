// What one ssh host may push a second (push-budget.ts), on a clock the test gives: the floor, what
// a watch request grants (its first reading, in its second) and adds for good (its changes), bytes
// as well as lines, and a flooding host read again only after CALM_SECONDS calm seconds in a row.
import { describe, expect, it } from 'vitest';
import { BYTES_PER_LINE, CALM_SECONDS, FLOOR_LINES, PER_TARGET_LINES, PushBudget } from '../../src/os/push-budget.js';

/** Takes `n` lines of `length` characters; how many were to be read. */
function take(b: PushBudget, n: number, length = 20): number {
  let read = 0;
  for (let i = 0; i < n; i++) if (b.take(length)) read++;
  return read;
}

function budget(at = 0): PushBudget {
  const b = new PushBudget();
  b.reset(at);
  return b;
}

describe('PushBudget', () => {
  it('reads up to the floor in a second; the line past it floods, and every line after it is dropped', () => {
    const b = budget();
    expect(take(b, FLOOR_LINES)).toBe(FLOOR_LINES);
    expect(b.over).toBe(false);
    expect(b.spent).toBe(false);
    expect(b.take(20)).toBe(false);
    expect(b.over).toBe(true);
    expect(b.spent).toBe(true);
    expect(b.exceeded()).toBe(`${FLOOR_LINES} lines/s`);
    // Still flooding in the next second, however quiet it is so far.
    expect(b.roll(1_000)).toBe(false);
    expect(b.take(20)).toBe(false);
  });

  it('a new second starts a new count', () => {
    const b = budget(5_000);
    expect(take(b, FLOOR_LINES)).toBe(FLOOR_LINES);
    expect(b.roll(5_999)).toBe(false);
    expect(b.msLeft(5_999)).toBe(1);
    b.roll(6_000);
    expect(b.msLeft(6_250)).toBe(750);
    expect(take(b, FLOOR_LINES)).toBe(FLOOR_LINES);
    expect(b.over).toBe(false);
  });

  it('a watch grants its first reading in its second, and its changes every second from then on', () => {
    const b = budget();
    b.watch(10_000);
    expect(b.lineLimit).toBe(FLOOR_LINES + PER_TARGET_LINES * 10_000 + 10_000);
    b.watch(10_000);
    // Armed again in the same second: a second first reading.
    expect(take(b, FLOOR_LINES + PER_TARGET_LINES * 10_000 + 20_000)).toBe(FLOOR_LINES + PER_TARGET_LINES * 10_000 + 20_000);
    expect(b.over).toBe(false);
    b.roll(1_000);
    expect(b.lineLimit).toBe(FLOOR_LINES + PER_TARGET_LINES * 10_000);
    b.watch(3);
    b.roll(2_000);
    expect(b.lineLimit).toBe(FLOOR_LINES + PER_TARGET_LINES * 3);
  });

  it('holds bytes too: long lines flood before many short ones would', () => {
    const b = budget();
    expect(b.byteLimit).toBe(FLOOR_LINES * BYTES_PER_LINE);
    const long = 1_000;
    const fit = Math.floor(b.byteLimit / long);
    expect(take(b, fit, long)).toBe(fit);
    expect(b.take(long)).toBe(false);
    expect(b.exceeded()).toBe(`${FLOOR_LINES * BYTES_PER_LINE} bytes/s`);
  });

  it('a flooding host is read again after CALM_SECONDS calm seconds in a row; a loud second starts the count again', () => {
    const b = budget();
    take(b, FLOOR_LINES + 1);
    let t = 0;
    for (let i = 1; i < CALM_SECONDS; i++) {
      t += 1_000;
      expect(b.roll(t)).toBe(false);
      take(b, 10);
    }
    // One second over the budget (what is dropped counts too): the calm seconds so far do not count.
    take(b, FLOOR_LINES + 1);
    t += 1_000;
    expect(b.roll(t)).toBe(false);
    for (let i = 1; i < CALM_SECONDS; i++) {
      t += 1_000;
      expect(b.roll(t)).toBe(false);
    }
    t += 1_000;
    expect(b.roll(t)).toBe(true);
    expect(b.over).toBe(false);
    expect(take(b, FLOOR_LINES)).toBe(FLOOR_LINES);
  });

  it('silent seconds are calm ones, however late the next look is; a new connection starts afresh', () => {
    const b = budget();
    take(b, FLOOR_LINES + 1);
    // Nothing for a while: the loud second, then CALM_SECONDS silent ones.
    expect(b.roll((CALM_SECONDS + 1) * 1_000 - 1)).toBe(false);
    expect(b.roll((CALM_SECONDS + 1) * 1_000)).toBe(true);
    take(b, FLOOR_LINES + 1);
    expect(b.over).toBe(true);
    b.reset(90_000);
    expect(b.over).toBe(false);
    expect(b.lineLimit).toBe(FLOOR_LINES);
    expect(b.roll(90_999)).toBe(false);
  });
});

// Which registry values may be used as a pid or a port, and the words a person reads when one may not.
import { describe, expect, it } from 'vitest';
import { isUsablePid, isUsablePort, MAX_PID, pidProblem } from '../../src/core/index.js';

describe('pidProblem: why a value cannot be a pid', () => {
  it.each([
    ['missing', undefined, 'no pid'],
    ['null', null, 'no pid'],
    ['a string of digits', '4242', 'pid is a string, not a number'],
    ['a boolean', true, 'pid is a boolean, not a number'],
    ['NaN', Number.NaN, 'pid is not a finite number'],
    ['Infinity', Number.POSITIVE_INFINITY, 'pid is not a finite number'],
    ['a fraction', 42.5, 'pid is not a whole number'],
    ['0 (the caller’s process group)', 0, 'pid 0 and negative pids address process groups'],
    ['-1 (every process)', -1, 'pid 0 and negative pids address process groups'],
    ['1 (init)', 1, 'pid 1 is init, never an agent'],
    ['one past the largest pid', MAX_PID + 1, 'pid is larger than any process id'],
  ])('%s → "%s"', (_name, value, problem) => {
    expect(pidProblem(value)).toBe(problem);
    expect(isUsablePid(value)).toBe(false);
  });

  it.each([
    ['2, the smallest usable pid', 2],
    ['an ordinary pid', 4242],
    ['the largest pid', MAX_PID],
  ])('%s is usable', (_name, value) => {
    expect(pidProblem(value)).toBeUndefined();
    expect(isUsablePid(value)).toBe(true);
  });

  it('the largest pid is the int32 bound', () => expect(MAX_PID).toBe(2_147_483_647));
});

describe('isUsablePort', () => {
  it.each([
    [0, false],
    [1, true],
    [8080, true],
    [65_535, true],
    [65_536, false],
    [-80, false],
    [80.5, false],
    ['8080', false],
    [Number.NaN, false],
    [undefined, false],
  ])('%s → %s', (value, usable) => expect(isUsablePort(value)).toBe(usable));
});

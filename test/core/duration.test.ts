import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/core/index.js';

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [850, '850ms'],
    [45_000, '45s'],
    [192_000, '3m12s'],
    [7_500_000, '2h05m'],
    [3 * 86_400_000 + 3_600_000, '3d01h'],
    [-5_000, '-5s'],
    [Number.NaN, '?'],
  ])('%d ms → %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

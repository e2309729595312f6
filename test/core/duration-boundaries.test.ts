// formatDuration at each unit's boundary: the last value of a unit and the first of the next.
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/core/index.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('formatDuration at its boundaries', () => {
  it.each([
    [999, '999ms'],
    [S, '1s'],
    [-S, '-1s'],
    [60 * S - 1, '59s'],
    [M, '1m00s'],
    [M + 9 * S, '1m09s'],
    [M + 10 * S, '1m10s'],
    [H - 1, '59m59s'],
    [H, '1h00m'],
    [H + 10 * M, '1h10m'],
    [D - 1, '23h59m'],
    [D, '1d00h'],
    [D + 10 * H, '1d10h'],
    [-(D + 9 * H), '-1d09h'],
    [Number.POSITIVE_INFINITY, '?'],
  ])('%d ms → %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

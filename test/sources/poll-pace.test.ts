import { describe, expect, it } from 'vitest';
import { PollPace } from '../../src/sources/poll-pace.js';

const pace = () => new PollPace({ fastMs: 2_000, slowMs: 10_000, calmReads: 3 });

// Reads (true: the lists changed), then whether a problem is shown, and the delays after each read.
const cases: [name: string, reads: boolean[], problems: boolean, delays: number[]][] = [
  ['the first read is a change: fast', [true], false, [2_000]],
  ['steady for 3 reads in a row: slow', [true, false, false, false, false], false, [2_000, 2_000, 2_000, 10_000, 10_000]],
  ['a change makes it fast again, then calm again', [false, false, false, true, false, false, false], false, [2_000, 2_000, 10_000, 2_000, 2_000, 2_000, 10_000]],
  ['a problem shown keeps it fast, however steady', [false, false, false, false, false], true, [2_000, 2_000, 2_000, 2_000, 2_000]],
];

describe('poll pace', () => {
  it.each(cases)('%s', (_name, reads, problems, delays) => {
    const p = pace();
    p.showProblems(problems);
    expect(reads.map((changed) => (p.read(changed), p.delay()))).toEqual(delays);
  });

  it('says when a problem made a slow pace fast (the next read is moved up), and only then', () => {
    const p = pace();
    for (let i = 0; i < 3; i++) p.read(false);
    expect(p.delay()).toBe(10_000);
    expect(p.showProblems(true)).toBe(true);
    expect(p.delay()).toBe(2_000);
    expect(p.showProblems(true)).toBe(false);
    expect(p.showProblems(false)).toBe(false);
    expect(p.delay()).toBe(10_000);
  });

  it('a slow pace is never faster than the fast one', () => {
    const p = new PollPace({ fastMs: 5_000, slowMs: 1_000, calmReads: 0 });
    expect(p.delay()).toBe(5_000);
  });
});

// The AGE of a row (ages.ts): the floor of the true age, "≥" for a lower bound, where it counts
// from, and the exact moment its text next changes (what the table's one timer is set to).
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import { withMarks } from '../../src/engine/snapshot.js';
import { ageOrigin, ageSortKey, ageText, formatAge, nextAgeChange, untilAgeChanges } from '../../src/ui/ages.js';
import { SESSION_COLUMNS } from '../../src/ui/columns.js';
import { demoFindings, FIXED_NOW } from '../support/ui-fixtures.js';

const M = 60_000;
const H = 60 * M;

function session(fields: { registeredAt?: number; firstObservedAt?: number; offlineSince?: number; source?: string } = {}): Finding {
  return {
    kind: 'session',
    source: fields.source ?? 'hypivisor',
    id: 'a',
    verdict: 'ghost',
    problem: true,
    evictable: true,
    reason: 'gone',
    evidence: { host: { machine: 'devbox', local: true } },
    entry: { source: fields.source ?? 'hypivisor', id: 'a', machine: 'devbox', ...fields },
  } as Finding;
}

describe('formatAge and ageText', () => {
  it('floor, never rounded up: <1m below a minute, then whole minutes, hours under 48, then days', () => {
    const cases: [number, string][] = [
      [0, '<1m'],
      [59_999, '<1m'],
      [60_000, '1m'],
      [88_000, '1m'],
      [119_999, '1m'],
      [316_000, '5m'],
      [H - 1, '59m'],
      [H, '1h'],
      [48 * H - 1, '47h'],
      [48 * H, '2d'],
    ];
    expect(cases.map(([ms]) => formatAge(ms))).toEqual(cases.map(([, text]) => text));
    expect(formatAge(undefined)).toBe('-');
    expect(formatAge(Number.NaN)).toBe('-');
  });

  it('a lower bound reads "≥", "≥0m" under a minute; an origin in the future is an age of 0', () => {
    expect(ageText({ since: 0, atLeast: true }, 382_000)).toBe('≥6m');
    expect(ageText({ since: 0, atLeast: true }, 3_000)).toBe('≥0m');
    expect(ageText({ since: 10_000, atLeast: false }, 0)).toBe('<1m');
    expect(ageText(undefined, 0)).toBe('-');
  });
});

describe('when an age reads differently next', () => {
  it('at the next whole unit of what it shows', () => {
    expect([0, 88_000, H - 1_000, H, H + 1, 48 * H, 48 * H + 5].map(untilAgeChanges)).toEqual([M, 32_000, 1_000, H, H - 1, 24 * H, 24 * H - 5]);
    expect(untilAgeChanges(Number.POSITIVE_INFINITY)).toBe(Infinity);
  });

  it('the earliest moment over the rows, a stale row\'s "stale 3m" too; an origin in the future a minute after it', () => {
    const now = 1_000_000;
    const rows = [session({ registeredAt: now - 88_000 }), session({ registeredAt: now - 10_000 })];
    expect(nextAgeChange(rows, {}, now)).toBe(now + 32_000);
    const stale = withMarks(session({ registeredAt: now - 2 * H }), { stale: { source: 'hypivisor', since: now - 59_000, why: 'down' } });
    expect(nextAgeChange([stale], {}, now)).toBe(now + 1_000);
    expect(nextAgeChange([session({ registeredAt: now + 5_000 })], {}, now)).toBe(now + 65_000);
    expect(nextAgeChange([session()], {}, now)).toBeUndefined();
    expect(nextAgeChange([], {}, now)).toBeUndefined();
  });
});

describe('where an age counts from', () => {
  it("registered_at on the local clock (the registry's offset taken off), else first seen; a claim since it was taken", () => {
    expect(ageOrigin(session({ registeredAt: 50_000 }), { clockOffsetMs: { hypivisor: 2_000 } })).toEqual({ since: 48_000, atLeast: false });
    expect(ageOrigin(session({ firstObservedAt: 7 }), {})).toEqual({ since: 7, atLeast: false });
    const claim = demoFindings().find((f) => f.kind === 'claim')!;
    expect(ageOrigin(claim, {})).toEqual({ since: FIXED_NOW - 40 * M, atLeast: false });
  });

  it('a ghost seen dying: its deadSince exactly; gone at the first probe: a bound, offline_since when earlier, never later', () => {
    const f = session({ registeredAt: 0, offlineSince: 100_000 });
    expect(ageOrigin(withMarks(f, { deadSince: 500_000 }), {})).toEqual({ since: 500_000, atLeast: false });
    expect(ageOrigin(withMarks(f, { deadSince: 500_000, goneAtFirstProbe: true }), {})).toEqual({ since: 100_000, atLeast: true });
    expect(ageOrigin(withMarks(f, { deadSince: 50_000, goneAtFirstProbe: true }), {})).toEqual({ since: 50_000, atLeast: true });
    expect(ageOrigin(withMarks(session({ registeredAt: 0 }), { deadSince: 500_000, goneAtFirstProbe: true }), {})).toEqual({ since: 500_000, atLeast: true });
  });

  it('the AGE column sorts by origin: the same order whatever the clock says', () => {
    const rows = [session({ registeredAt: 3 * M }), session({ registeredAt: 0 }), session(), session({ registeredAt: 2 * H })];
    const age = SESSION_COLUMNS.find((c) => c.id === 'age')!;
    const order = (now: number) => [...rows].sort((a, b) => (age.sortKey(a, { now }) as number) - (age.sortKey(b, { now }) as number)).map((f) => (f.entry as { registeredAt?: number }).registeredAt);
    expect(order(0)).toEqual([undefined, 2 * H, 3 * M, 0]);
    expect(order(10 * H)).toEqual(order(0));
    expect(ageSortKey(rows[2]!, {})).toBe(-Number.MAX_VALUE);
  });
});

describe('the STATUS cell of a stale row', () => {
  it("the registry's status first, then how old the row is, then the note", () => {
    const status = SESSION_COLUMNS.find((c) => c.id === 'status')!;
    const stale = withMarks({ ...session({ registeredAt: 0 }), note: 'not answering', entry: { source: 'hypivisor', id: 'a', status: 'active' } } as Finding, { stale: { source: 'hypivisor', since: FIXED_NOW - 2 * M, why: 'down' } });
    expect(status.value(stale, { now: FIXED_NOW }, 80)).toBe('active, stale 2m, not answering');
  });
});

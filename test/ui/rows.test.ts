// A new snapshot's rows built from the last snapshot's (nextRowsSteps) are the rows visibleRows
// gives for it, whatever changed: a few rows, most rows, rows gone and new, the cells' context.
import { describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile } from '../../src/core/index.js';
import type { Finding, OsFacts, PidFacts, SessionEntry } from '../../src/core/types.js';
import { runToEnd } from '../../src/plumbing/steps.js';
import type { CellContext } from '../../src/ui/columns.js';
import { firstRows, nextRowsSteps, visibleRows, type RowQuery } from '../../src/ui/rows.js';
import { FIXED_NOW, HOST } from '../support/ui-fixtures.js';

let seed = 11;
const random = () => ((seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32);

/** Session i: here (some pids dead: ghosts) or elsewhere (some offline), registered at a scattered time; ids in no order, one per i. */
function entry(i: number, offline = random() < 0.3): SessionEntry {
  const here = i % 4 === 0;
  return {
    source: i % 9 === 0 ? 'other' : 'hypivisor',
    id: `s-${(i * 7_919) % 10_007}-${i}`,
    machine: here ? HOST : `node-${i % 5}.example`,
    cwd: `/home/dev/work/p-${i % 13}`,
    port: 20_000 + i,
    pid: 1_000 + i,
    status: offline ? 'offline' : 'active',
    offline,
    registeredAt: FIXED_NOW - Math.floor(random() * 86_400_000),
  };
}

const facts: OsFacts = {
  pids: new Map(Array.from({ length: 2_000 }, (_, i): [number, PidFacts] => [1_000 + i, i % 3 === 0 ? { pid: 1_000 + i, kill: 'ESRCH', checkedAt: FIXED_NOW } : { pid: 1_000 + i, kill: 'ok', state: 'S', checkedAt: FIXED_NOW }])),
  ports: new Map(),
};
const judge = (entries: SessionEntry[]): Finding[] => reconcile({ sessions: entries, claims: [] }, facts, FIXED_NOW, defaultPolicy(HOST));

const QUERIES: [string, RowQuery][] = [
  ['the default order', { tab: 'sessions', filter: '', problemsOnly: false, sortReverse: false }],
  ['by id, reversed', { tab: 'sessions', filter: '', problemsOnly: false, sortColumn: 'id', sortReverse: true }],
  ['by age', { tab: 'sessions', filter: '', problemsOnly: false, sortColumn: 'age', sortReverse: false }],
  ['a filter', { tab: 'sessions', filter: 'p-3', problemsOnly: false, sortReverse: false }],
  ['problems only', { tab: 'sessions', filter: '', problemsOnly: true, sortReverse: false }],
];

/** The next snapshot: most rows the same objects, `changed` of them judged anew (some offline now), some gone, some new. */
function nextSnapshot(entries: SessionEntry[], rows: readonly Finding[], changed: number): { entries: SessionEntry[]; findings: Finding[] } {
  const next = entries.filter((_, i) => i % 50 !== 7).map((e, i) => (i < changed ? entry(Number(e.id.split('-')[2]), !e.offline) : e));
  for (let i = 0; i < 30; i++) next.push(entry(5_000 + i));
  const fresh = judge(next);
  const old = new Map(rows.map((f) => [f.entry, f]));
  // Rows of unchanged entries are the previous objects, as the engine hands them on.
  return { entries: next, findings: fresh.map((f) => old.get(f.entry) ?? f) };
}

describe('the rows of a new snapshot, from the last one', () => {
  const entries = Array.from({ length: 2_000 }, (_, i) => entry(i));
  const first = judge(entries);
  const ctx: CellContext = { now: FIXED_NOW };

  it.each(QUERIES)('%s: a few rows changed, most rows changed, or the context moved: the rows visibleRows gives', (_what, q) => {
    const memo = firstRows(first, q, ctx);
    for (const changed of [40, 1_500]) {
      const { findings } = nextSnapshot(entries, first, changed);
      expect(runToEnd(nextRowsSteps(memo, findings, ctx)).rows).toEqual(visibleRows(findings, q, ctx));
    }
    const later: CellContext = { now: FIXED_NOW + 3_600_000 };
    expect(runToEnd(nextRowsSteps(memo, first, later)).rows).toEqual(visibleRows(first, q, later));
  });

  it('pauses every couple of thousand findings, and between sorting and merging', () => {
    const q = QUERIES[0]![1];
    const { findings } = nextSnapshot(entries, first, 1_500);
    const steps = nextRowsSteps(firstRows(first, q, ctx), findings, ctx);
    let pauses = 0;
    while (!steps.next().done) pauses++;
    expect(pauses).toBeGreaterThanOrEqual(3);
  });
});

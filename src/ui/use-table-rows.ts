// The table's rows for the engine's snapshot and the view's query (rows.ts decides which and in
// what order). A key that changes the query (sort, filter, tab, problems only) gets its rows in
// the render of its own frame, and so does a snapshot of a small table. A new snapshot of a large
// table (a registry of 37,000 nodes pushing thousands of events a second) is worked out in
// slices after its frame (the ages' clock sorts nothing: an age sorts by its origin), with the event loop free in between,
// while the table shows the rows it had: a key never waits for 37,000 rows to be sorted.
import { useEffect, useMemo, useReducer, useRef } from 'react';
import type { Finding } from '../core/types.js';
import { realClock } from '../plumbing/clock.js';
import { runToEnd, SLICE_MS, SlicedRun, type Steps } from '../plumbing/steps.js';
import type { CellContext } from './columns.js';
import { firstRows, nextRowsSteps, sameView, SLICED_ROWS, type RowQuery, type RowsMemo } from './rows.js';

export function useTableRows(findings: readonly Finding[], q: RowQuery, ctx: CellContext): readonly Finding[] {
  const memo = useRef<RowsMemo | undefined>(undefined);
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  // The work this snapshot and query need: none, done now, or steps to run in slices (below).
  const pending = useMemo((): Steps<RowsMemo> | undefined => {
    const last = memo.current;
    if (!sameView(last, q)) memo.current = firstRows(findings, q, ctx);
    else if (last.findings === findings && last.ctx === ctx) return undefined;
    else if (findings.length <= SLICED_ROWS) memo.current = runToEnd(nextRowsSteps(last, findings, ctx));
    else return nextRowsSteps(last, findings, ctx);
    return undefined;
  }, [findings, q.tab, q.filter, q.problemsOnly, q.sortColumn, q.sortReverse, ctx]);
  useEffect(() => {
    if (!pending) return;
    const run = new SlicedRun(pending, realClock, SLICE_MS, (next) => {
      memo.current = next;
      redraw();
    });
    run.start();
    // A newer snapshot or another query: this one's rows are not wanted any more.
    return () => run.cancel();
  }, [pending]);
  return memo.current?.rows ?? [];
}

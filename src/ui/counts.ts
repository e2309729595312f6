// The counts the screen states (header and status line): only what has its evidence. A row still
// checking is counted as checking, not under its provisional verdict; a stale row (its registry
// is not read now) is not counted at all; with no registry read, there is no count to give.
import { ELLIPSIS } from '../core/sanitize.js';
import { VERDICTS, type Verdict } from '../core/types.js';
import { STATUS_TRAITS } from '../engine/index.js';
import { checkingOf, staleOf, type EngineSnapshot } from '../engine/types.js';

export interface ShownCounts {
  /** Rows with a verdict from current evidence, per verdict. */
  readonly counts: Readonly<Record<Verdict, number>>;
  readonly problems: number;
  /** Rows still waiting for their first probe. */
  readonly checking: number;
  /** No registry is read now (all connecting, down or absent): no count can be given. */
  readonly blind: boolean;
}

const cache = new WeakMap<EngineSnapshot, ShownCounts>();

export function shownCounts(snap: EngineSnapshot): ShownCounts {
  let shown = cache.get(snap);
  if (shown) return shown;
  const reading = snap.sources.filter((s) => STATUS_TRAITS[s.status].reading).length;
  const blind = reading === 0;
  if (reading === snap.sources.length && (snap.checking ?? 0) === 0) shown = { counts: snap.counts, problems: snap.problems, checking: 0, blind };
  else {
    const counts = {} as Record<Verdict, number>;
    for (const v of VERDICTS) counts[v] = 0;
    let problems = 0;
    let checking = 0;
    for (const f of snap.findings) {
      if (staleOf(f)) continue;
      if (checkingOf(f)) checking++;
      else {
        counts[f.verdict]++;
        if (f.problem) problems++;
      }
    }
    shown = { counts, problems, checking, blind };
  }
  cache.set(snap, shown);
  return shown;
}

/** "3 problems", "12 checking…", "1 problem, 4 checking…"; undefined with no registry read. */
export function problemsText(c: ShownCounts): string | undefined {
  if (c.blind) return undefined;
  const checking = `${c.checking} checking${ELLIPSIS}`;
  if (c.checking > 0 && c.problems === 0) return checking;
  const problems = `${c.problems} problem${c.problems === 1 ? '' : 's'}`;
  return c.checking > 0 ? `${problems}, ${checking}` : problems;
}

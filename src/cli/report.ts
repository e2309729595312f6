// The one-pass report (`check`, and the live view's fallback when there is no terminal): a
// compact table that reads without colour, problems first, and a summary line last.
import { VERDICTS, type Finding, type Verdict } from '../core/types.js';
import { sanitize } from '../core/sanitize.js';
import type { EngineSnapshot } from '../engine/types.js';
import { visibleRows } from '../ui/rows.js';
import { fit } from '../ui/text.js';

export function summaryLine(counts: Readonly<Record<Verdict, number>>, problems: number): string {
  const parts = VERDICTS.filter((v) => counts[v] > 0).map((v) => `${counts[v]} ${v}`);
  return `${parts.length > 0 ? parts.join(', ') : 'no entries'} (${problems} problem${problems === 1 ? '' : 's'})`;
}

export function formatReport(snap: EngineSnapshot, width = 120): string {
  const lines: string[] = [];
  for (const s of snap.sources) {
    const err = s.lastError && s.status !== 'connected' ? `: ${s.lastError}` : '';
    lines.push(`source ${sanitize(s.name, 20)} ${sanitize(s.url, 100)}: ${s.status}${err}`);
  }
  const rows: Finding[] = [
    ...visibleRows(snap.findings, { tab: 'sessions', filter: '', problemsOnly: false, sortReverse: false }, { now: snap.computedAt }),
    ...visibleRows(snap.findings, { tab: 'claims', filter: '', problemsOnly: false, sortReverse: false }, { now: snap.computedAt }),
  ];
  if (rows.length > 0) {
    const idWidth = Math.min(36, Math.max(8, ...rows.map((f) => sanitize(f.id, 36).length)));
    lines.push('');
    lines.push(`${fit('VERDICT', 12)} ${fit('KIND', 7)} ${fit('ID', idWidth)} ${fit('PID', 7, 'right')}  REASON`);
    for (const f of rows) {
      const marker = f.problem ? '!' : ' ';
      const pid = f.entry.pid === undefined ? '-' : sanitize(f.entry.pid, 7);
      const line = `${fit(marker + f.verdict, 12)} ${fit(f.kind, 7)} ${fit(sanitize(f.id, 200), idWidth)} ${fit(pid, 7, 'right')}  ${f.reason}`;
      lines.push(fit(line, width).trimEnd());
    }
  }
  lines.push('');
  lines.push(summaryLine(snap.counts, snap.problems));
  return `${lines.join('\n')}\n`;
}

// Rule: one session open twice. Where a registry keeps a record per process (Claude Code's
// sessions/<pid>.json), resuming a session that is still open elsewhere gives two live processes
// carrying one session id, both appending to one transcript. Neither is a ghost; both rows say so.

import type { SessionFinding } from '../types.js';
import { judged } from './judgement.js';
import { judgedPid } from './pid-domain.js';
import type { Amendment } from './superseded.js';

/** Live findings of one source with one sessionId and more than one process: each names the others. */
export function openTwice(findings: readonly SessionFinding[]): Amendment[] {
  let bySession: Map<string, { index: number; pid: number }[]> | undefined;
  findings.forEach((f, index) => {
    const sessionId = f.entry.sessionId;
    if (sessionId === undefined || f.verdict !== 'live') return;
    const pid = judgedPid(f.entry, f.evidence);
    if (pid === undefined) return;
    const key = `${f.source}\u0000${sessionId}`;
    bySession ??= new Map();
    const list = bySession.get(key);
    if (list) list.push({ index, pid });
    else bySession.set(key, [{ index, pid }]);
  });
  const out: Amendment[] = [];
  for (const group of bySession?.values() ?? []) {
    const pids = [...new Set(group.map((g) => g.pid))];
    if (pids.length < 2) continue;
    for (const { index, pid } of group) {
      const others = pids.filter((p) => p !== pid);
      const f = findings[index]!;
      const said = `also open in pid${others.length > 1 ? 's' : ''} ${others.join(', ')}`;
      const judgement = judged('live', `${f.reason}; this session is ${said}: two processes write one transcript`, said);
      out.push({ index, judgement, evidence: { alsoOpenIn: others } });
    }
  }
  return out;
}

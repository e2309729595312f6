// Rule: offline. The registry marks an entry offline. A killed agent's socket closes and the
// registry says offline: on this host, the process being gone is what matters, so a problem the
// OS found stays (naming both facts). A live or uncheckable process, an entry on another host, or
// a record the registry keeps as ended (history, not a lie) keeps the registry's word: offline.

import { formatDuration } from '../duration.js';
import { VERDICT_TRAITS, type Policy, type SessionEntry } from '../types.js';
import { clockText, judged, toLocal, type EvidenceDraft, type Judgement } from './judgement.js';

/**
 * Judge an entry the registry marks offline. `local`: what the OS says of its process, when it
 * runs on this host (undefined on another host).
 */
export function judgeOffline(
  entry: SessionEntry,
  local: Judgement | undefined,
  now: number,
  policy: Policy,
  evidence: EvidenceDraft,
): Judgement {
  evidence.registry = { status: entry.status, offlineSince: entry.offlineSince };
  if (local) {
    evidence.underlying = local.verdict;
    if (VERDICT_TRAITS[local.verdict].problem && !entry.ended) {
      const since = entry.offlineSince !== undefined ? ` since ${clockText(policy, toLocal(policy, entry.source, entry.offlineSince))}` : '';
      return judged(local.verdict, `registry: offline${since}; OS: ${local.reason}`);
    }
  }
  const since =
    entry.offlineSince !== undefined ? ` for ${formatDuration(now - toLocal(policy, entry.source, entry.offlineSince))}` : '';
  return judged('offline', `the registry marks it offline${since}; it will sweep it`);
}

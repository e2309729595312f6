// Rule: offline. The registry marks an entry offline. A killed agent's socket closes and the
// registry says offline: on this host, the process being gone is what matters, so a problem the
// OS found stays (naming both facts). A live or uncheckable process, an entry on another host, or
// a record the registry keeps as ended (history, not a lie) keeps the registry's word: offline.
// The reason names what the registry really does with the record next (the entry's `cleanup`,
// from its adapter), and warns where the registry calls a live process of another user dead.

import { formatDuration } from '../duration.js';
import { sanitize } from '../sanitize.js';
import { VERDICT_TRAITS, type Policy, type SessionEntry } from '../types.js';
import { clockText, judged, toLocal, type EvidenceDraft, type Judgement } from './judgement.js';

/** The note of a record the registry calls over while kill says EPERM: alive, another user's. */
export const EPERM_NOTE = 'alive (EPERM)';

/**
 * Judge an entry the registry marks offline. `local`: what the OS says of its process, when it
 * runs on this host, or what a port check from this host says of an entry elsewhere (undefined
 * when neither applies).
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
      // This host's OS, or a remote host's over ssh; elsewhere the fact is a port check from here.
      const by = evidence.host.local || evidence.host.ssh ? 'OS' : 'port check';
      return judged(local.verdict, `registry: offline${since}; ${by}: ${local.reason}`);
    }
  }
  const cleanup = entry.cleanup !== undefined ? `; ${sanitize(entry.cleanup, 200)}` : '';
  const ago = (registryTime: number): string => formatDuration(now - toLocal(policy, entry.source, registryTime));
  if (!entry.ended) {
    const since = entry.offlineSince !== undefined ? ` for ${ago(entry.offlineSince)}` : '';
    return judged('offline', `the registry marks it offline${since}${cleanup}`);
  }
  // An ended record: `offlineSince` is when the registry marked it over; without it, `lastSeen`
  // is its last sign of activity (agentctl's transcript-discovered records: the last write), not a death.
  const status = sanitize(entry.status ?? 'ended', 30);
  const when =
    entry.offlineSince !== undefined
      ? ` ${ago(entry.offlineSince)} ago`
      : entry.lastSeen !== undefined
        ? ` (last active ${ago(entry.lastSeen)} ago)`
        : '';
  const reason = `the registry marked it ${status}${when}${cleanup}`;
  if (entry.epermCountsDead && local?.verdict === 'live' && evidence.kill === 'EPERM') {
    // The registry's own check took EPERM for death; kill(pid, 0) says the process lives.
    return judged('offline', `${reason}; but pid ${String(entry.pid)} is alive (EPERM: another user owns it), and the registry counts EPERM as dead`, EPERM_NOTE);
  }
  return judged('offline', reason);
}

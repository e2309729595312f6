// Rule: identity. Is the process behind a pid there (kill), alive (not a zombie), and the one that
// registered (its start time against the entry's reference time)? Only kill(pid, 0) decides
// that a process is gone; anything the facts cannot tell is unverified.

import { formatDuration } from '../duration.js';
import type { PidFacts, Policy, SessionEntry, StartReference } from '../types.js';
import { judged, noteInvalidTimes, PROCESS_START_FIELD, toLocal, type EvidenceDraft, type Judgement } from './judgement.js';
import { judgeSuspended } from './suspended.js';

/** Judge `entry` by the process `pid`, of which the OS said `facts` (undefined: not probed yet). */
export function judgeIdentity(
  entry: SessionEntry,
  pid: number,
  facts: PidFacts | undefined,
  policy: Policy,
  evidence: EvidenceDraft,
  /** How the reasons name the process: "pid 4242", or "pid 2 of pid namespace N (host pid 4242)". */
  name = `pid ${pid}`,
): Judgement {
  if (!facts) return judged('unverified', `${name} has not been probed yet`);
  evidence.kill = facts.kill;
  evidence.checkedAt = facts.checkedAt;
  if (facts.error !== undefined) evidence.killError = facts.error;
  evidence.process = facts.process;
  if (facts.kill === 'ESRCH') return judged('ghost', `${name} is gone (ESRCH)`);
  if (facts.kill === 'error') {
    return judged('unverified', `${name} could not be checked: ${facts.error ?? 'unknown error'}`);
  }
  evidence.state = facts.state;
  evidence.usage = facts.usage;
  if (facts.invalidStart !== undefined) noteInvalidTimes(evidence, [{ field: PROCESS_START_FIELD, value: facts.invalidStart }]);
  if (facts.state === 'Z') return judged('zombie', `${name} is a zombie: it exited and its parent never reaped it`);
  const exact = entry.pidStartTicks !== undefined && facts.startTicks !== undefined;
  if (exact) {
    // The record says exactly when its process started: any other start is another process, no slack.
    evidence.startTicks = { recorded: entry.pidStartTicks as number, process: facts.startTicks as number };
    if (facts.startTicks !== entry.pidStartTicks) {
      return judged('reused', `${name} belongs to a process that started at tick ${facts.startTicks} after boot, not ${entry.pidStartTicks} as recorded: the pid was recycled`);
    }
  }
  const kind = facts.startedAt !== undefined && !exact ? startReference(entry) : undefined;
  if (kind !== undefined && facts.startedAt !== undefined) {
    const referenceAt = startReferenceAt(entry, kind, policy);
    const deltaMs = facts.startedAt - referenceAt;
    const toleranceMs = policy.startToleranceMs;
    evidence.start = { processStartedAt: facts.startedAt, reference: kind, referenceAt, deltaMs, toleranceMs };
    if (deltaMs > toleranceMs) {
      const what = REFERENCE_WORDS[kind];
      return judged('reused', `${name} belongs to a process started ${formatDuration(deltaMs)} after ${what}: the pid was recycled`);
    }
    if (kind === 'pid_started_at' && -deltaMs > toleranceMs) {
      // Older than the process that registered: not that process, but not a recycled pid either.
      const before = formatDuration(-deltaMs);
      return judged('unverified', `${name} belongs to a process started ${before} before the registered start time: identity unclear`);
    }
  }
  // The one that registered, there, and stopped: it cannot answer, and it is no ghost.
  const stopped = judgeSuspended(name, pid, facts, policy, evidence);
  if (stopped) return stopped;
  const alive = facts.kill === 'EPERM' ? `${name} is alive (EPERM: another user owns it)` : `${name} is alive`;
  if (facts.detailsHidden !== undefined) {
    // kill found it: alive. Its state and start time are hidden, so identity is unchecked.
    return judged('live', `${alive}; details hidden (hidepid): state and start time unknown`, 'details hidden');
  }
  // Its host answered a start that is no time: alive, and which process it is cannot be told.
  if (facts.invalidStart !== undefined && !exact) return judged('live', `${alive}; its start time is an invalid time: identity unchecked`);
  return judged('live', alive);
}

const REFERENCE_WORDS: Record<StartReference, string> = {
  pid_started_at: 'the registered process started',
  registered_at: 'the entry was registered',
  first_observed: 'ghostwatch first saw the entry',
  acquired_at: 'the claim was taken',
};

/** What the process behind the entry must have started by: pid_started_at, registered_at, first observed. */
export function startReference(entry: SessionEntry): StartReference | undefined {
  if (entry.pidStartedAt !== undefined) return 'pid_started_at';
  if (entry.registeredAt !== undefined) return 'registered_at';
  if (entry.firstObservedAt !== undefined) return 'first_observed';
  return undefined;
}

/** That time on the local clock. pid_started_at was read on the agent's host, which is this host. */
function startReferenceAt(entry: SessionEntry, kind: StartReference, policy: Policy): number {
  if (kind === 'pid_started_at') return entry.pidStartedAt as number;
  if (kind === 'registered_at') return toLocal(policy, entry.source, entry.registeredAt as number);
  return entry.firstObservedAt as number;
}

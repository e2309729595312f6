import { describe, expect, it } from 'vitest';
import { judgeIdentity } from '../../../src/core/rules/identity.js';
import type { PidFacts, SessionEntry } from '../../../src/core/types.js';
import { alive, gone, localEvidence, NOW, pidFacts, POLICY, session } from './support.js';

const REG = NOW - 600_000;
// Rule identity: one pid, what the OS said of it, and the entry's reference time.
const cases: [name: string, entry: SessionEntry, facts: PidFacts | undefined, verdict: string, reason: RegExp, note?: string][] = [
  ['not probed yet', session('a', { pid: 7 }), undefined, 'unverified', /^pid 7 has not been probed yet$/],
  ['kill says ESRCH', session('a', { pid: 7 }), gone(7), 'ghost', /^pid 7 is gone \(ESRCH\)$/],
  ['kill failed', session('a', { pid: 7 }), pidFacts(7, 'error', { error: 'EINVAL' }), 'unverified', /could not be checked: EINVAL/],
  ['kill failed, no text', session('a', { pid: 7 }), pidFacts(7, 'error'), 'unverified', /unknown error/],
  ['a zombie', session('a', { pid: 7 }), alive(7, { state: 'Z' }), 'zombie', /zombie/],
  ['a zombie owned by another user', session('a', { pid: 7 }), pidFacts(7, 'EPERM', { state: 'Z' }), 'zombie', /zombie/],
  ['started before registration', session('a', { pid: 7, registeredAt: REG }), alive(7, { startedAt: REG - 1 }), 'live', /^pid 7 is alive$/],
  ['started within the tolerance after', session('a', { pid: 7, registeredAt: REG }), alive(7, { startedAt: REG + POLICY.startToleranceMs }), 'live', /alive/],
  ['started just past the tolerance', session('a', { pid: 7, registeredAt: REG }), alive(7, { startedAt: REG + POLICY.startToleranceMs + 1 }), 'reused', /after the entry was registered: the pid was recycled/],
  ['pid_started_at wins over registered_at', session('a', { pid: 7, pidStartedAt: REG - 60_000, registeredAt: REG }), alive(7, { startedAt: REG - 10_000 }), 'reused', /registered process started/],
  ['first observed, when nothing else', session('a', { pid: 7, firstObservedAt: REG }), alive(7, { startedAt: REG + 60_000 }), 'reused', /first saw/],
  ['no reference time: alive is live', session('a', { pid: 7 }), alive(7, { startedAt: NOW }), 'live', /alive/],
  ['older than pid_started_at: identity unclear', session('a', { pid: 7, pidStartedAt: REG }), alive(7, { startedAt: REG - 60_000 }), 'unverified', /identity unclear/],
  ['older than registered_at is fine', session('a', { pid: 7, registeredAt: REG }), alive(7, { startedAt: REG - 86_400_000 }), 'live', /alive/],
  ['EPERM: alive, another user', session('a', { pid: 7 }), pidFacts(7, 'EPERM', { state: 'S' }), 'live', /EPERM: another user owns it/],
  ['hidepid: alive, details hidden', session('a', { pid: 7, registeredAt: REG }), pidFacts(7, 'ok', { detailsHidden: 'hidden' }), 'live', /details hidden \(hidepid\)/, 'details hidden'],
];

describe('rule: identity', () => {
  it.each(cases)('%s', (_name, entry, facts, verdict, reason, note) => {
    const j = judgeIdentity(entry, 7, facts, POLICY, localEvidence());
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
    expect(j.note).toBe(note);
  });

  it('records the syscall, the state, the start times and the process', () => {
    const evidence = localEvidence();
    const process = { pid: 7, ppid: 1, name: 'pi', cmd: 'node pi' };
    judgeIdentity(session('a', { pid: 7, registeredAt: REG }), 7, alive(7, { startedAt: REG + 60_000, process }), POLICY, evidence);
    expect(evidence).toMatchObject({
      kill: 'ok', state: 'S', checkedAt: NOW, process,
      start: { processStartedAt: REG + 60_000, reference: 'registered_at', referenceAt: REG, deltaMs: 60_000, toleranceMs: POLICY.startToleranceMs },
    });
    const failed = localEvidence();
    judgeIdentity(session('a', { pid: 7 }), 7, pidFacts(7, 'error', { error: 'EINVAL', state: 'S' }), POLICY, failed);
    expect(failed).toMatchObject({ kill: 'error', killError: 'EINVAL', state: undefined });
  });
});

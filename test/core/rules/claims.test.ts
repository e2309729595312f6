import { describe, expect, it } from 'vitest';
import { findHolder, indexHolders, judgeClaim } from '../../../src/core/rules/claims.js';
import { sessionFinding } from '../../../src/core/rules/judgement.js';
import type { ClaimEntry, Evidence, OsFacts, SessionFinding, SessionVerdict } from '../../../src/core/types.js';
import { defaultPolicy } from '../../../src/core/types.js';
import { alive, claim, gone, HOST, localEvidence, NOW, os, pidFacts, POLICY, session } from './support.js';

const HERE: Evidence['host'] = { machine: 'devbox', local: true, matchedAs: 'exact' };
const AWAY: Evidence['host'] = { machine: 'laptop', local: false, matchedAs: undefined };
function holder(verdict: SessionVerdict, fields: { source?: string; underlying?: SessionVerdict } = {}): SessionFinding {
  const evidence = localEvidence();
  if (fields.underlying) evidence.underlying = fields.underlying;
  return sessionFinding(session('h', { source: fields.source ?? 'hypivisor' }), { verdict, reason: `it is ${verdict}` }, evidence);
}

// Rule claims: a claim, its holder's finding (or none), its host, the OS facts.
const cases: [name: string, c: ClaimEntry, h: SessionFinding | undefined, host: Evidence['host'], facts: OsFacts, verdict: string, reason: RegExp, note?: string][] = [
  ['holder live', claim('r', { holder: 'h' }), holder('live'), HERE, os(), 'held', /^held by h, which is live$/],
  ['holder remote: held, with a caveat', claim('r', { holder: 'h' }), holder('remote'), HERE, os(), 'held', /which is remote \(remote: not proof it is alive\)/],
  ['holder offline and alive', claim('r', { holder: 'h' }), holder('offline', { underlying: 'live' }), HERE, os(), 'held', /which is offline/],
  ['holder offline and its process gone', claim('r', { holder: 'h' }), holder('offline', { underlying: 'ghost' }), HERE, os(), 'stale-claim', /^holder h is offline and its process is ghost$/],
  ['holder in another source', claim('r', { holder: 'h' }), holder('live', { source: 'claude' }), HERE, os(), 'held', /held by h \(in claude\)/],
  ...(['ghost', 'zombie', 'reused', 'superseded', 'pending'] as const).map((v): (typeof cases)[number] => [
    `holder ${v}`, claim('r', { holder: 'h' }), holder(v), HERE, os(), 'stale-claim', new RegExp(`^holder h is ${v}: it is ${v}$`),
  ]),
  ['holder missing', claim('r', { holder: 'h' }), undefined, HERE, os(), 'stale-claim', /^holder h is not in the registry$/],
  ['own pid gone, holder live', claim('r', { holder: 'h', pid: 9 }), holder('live'), HERE, os([gone(9)]), 'stale-claim', /^its pid 9 is gone \(ESRCH\)$/],
  ['own pid a zombie', claim('r', { pid: 9 }), undefined, HERE, os([alive(9, { state: 'Z' })]), 'stale-claim', /its pid 9 is a zombie/],
  ['own pid unreadable: not a zombie by its state', claim('r', { pid: 9 }), undefined, HERE, os([pidFacts(9, 'error', { state: 'Z' })]), 'held', /names no holder/, 'unverified'],
  ['own pid gone on another host: not checked', claim('r', { pid: 9 }), undefined, AWAY, os([gone(9)]), 'held', /names no holder/, 'unverified'],
  ['own pid alive, no holder', claim('r', { pid: 9 }), undefined, HERE, os([alive(9)]), 'held', /^held by pid 9, which is alive$/],
  ['own pid alive as another user', claim('r', { pid: 9 }), undefined, HERE, os([pidFacts(9, 'EPERM')]), 'held', /held by pid 9/],
  ['own pid unusable', claim('r', { pid: 1 }), undefined, HERE, os([alive(1)]), 'held', /names no holder/, 'unverified'],
  ['old heartbeat', claim('r', { pid: 9, heartbeatAt: NOW - 61_000, staleAfterMs: 60_000 }), undefined, HERE, os([alive(9)]), 'stale-claim', /^last heartbeat 1m01s ago \(stale after 1m00s\)$/],
  ['heartbeat at the limit', claim('r', { pid: 9, heartbeatAt: NOW - 60_000, staleAfterMs: 60_000 }), undefined, HERE, os([alive(9)]), 'held', /held by pid 9/],
  ['heartbeat without a limit is not judged', claim('r', { pid: 9, heartbeatAt: NOW - 10_000_000 }), undefined, HERE, os([alive(9)]), 'held', /held by pid 9/],
  ['nothing to check', claim('r'), undefined, HERE, os(), 'held', /^names no holder and no pid that can be checked here$/, 'unverified'],
  // The identity rule of sessions, with the claim's acquired_at / lockedAt as the reference (tolerance 2 s).
  ['own pid recycled: started after the claim', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([alive(9, { startedAt: NOW - 10_000 })]), 'stale-claim', /^its pid 9 belongs to a process started 50s after the claim was taken: the pid was recycled$/],
  ['own pid recycled, even with a live holder', claim('r', { holder: 'h', pid: 9, acquiredAt: NOW - 60_000 }), holder('live'), HERE, os([alive(9, { startedAt: NOW - 10_000 })]), 'stale-claim', /the pid was recycled/],
  ['own pid started within the tolerance after the claim', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([alive(9, { startedAt: NOW - 58_000 })]), 'held', /^held by pid 9, which is alive$/],
  ['own pid started 1 ms past the tolerance', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([alive(9, { startedAt: NOW - 57_999 })]), 'stale-claim', /started 2s after the claim was taken/],
  ['own pid started before the claim', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([alive(9, { startedAt: NOW - 3_600_000 })]), 'held', /held by pid 9/],
  ['own pid of another user, recycled', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([pidFacts(9, 'EPERM', { state: 'S', startedAt: NOW - 1_000 })]), 'stale-claim', /the pid was recycled/],
  ['own pid, start time unknown (hidepid)', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([pidFacts(9, 'EPERM', { detailsHidden: 'hidepid' })]), 'held', /held by pid 9/],
  ['own pid unreadable: its start time is not used', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, HERE, os([pidFacts(9, 'error', { startedAt: NOW - 1_000 })]), 'held', /names no holder/, 'unverified'],
  ['no time of taking: nothing to compare', claim('r', { pid: 9 }), undefined, HERE, os([alive(9, { startedAt: NOW - 1_000 })]), 'held', /held by pid 9/],
  ['recycled on another host: not checked', claim('r', { pid: 9, acquiredAt: NOW - 60_000 }), undefined, AWAY, os([alive(9, { startedAt: NOW - 1_000 })]), 'held', /names no holder/, 'unverified'],
];

describe('rule: claims', () => {
  it.each(cases)('%s', (_name, c, h, host, facts, verdict, reason, note) => {
    const f = judgeClaim(c, h, host, facts, NOW, POLICY);
    expect(f.verdict).toBe(verdict);
    expect(f.problem).toBe(verdict === 'stale-claim');
    expect(f.evictable).toBe(verdict === 'stale-claim');
    expect(f.reason).toMatch(reason);
    expect(f.note).toBe(note);
  });

  it('records the holder, the pid and the heartbeat', () => {
    const f = judgeClaim(claim('r', { holder: 'h', pid: 9, heartbeatAt: NOW - 5_000, staleAfterMs: 60_000 }), holder('offline', { source: 'claude', underlying: 'live' }), HERE, os([alive(9)]), NOW, POLICY);
    expect(f.evidence).toMatchObject({
      holder: { id: 'h', present: true, verdict: 'offline', underlying: 'live', source: 'claude' },
      pid: { value: 9, raw: 9, unusable: undefined },
      kill: 'ok',
      heartbeat: { at: NOW - 5_000, ageMs: 5_000, staleAfterMs: 60_000 },
    });
    expect(f).toMatchObject({ kind: 'claim', id: 'r', holder: 'h', source: 'hypivisor' });
  });

  it('records what is not there as such: a missing holder is not present, a holder of its own source names none, no pid and a heartbeat without a limit leave no evidence', () => {
    const missing = judgeClaim(claim('r', { holder: 'h', heartbeatAt: NOW - 5_000 }), undefined, HERE, os(), NOW, POLICY);
    expect(missing.evidence.holder).toEqual({ id: 'h', present: false, verdict: undefined, underlying: undefined, source: undefined });
    expect(missing.evidence.pid).toBeUndefined();
    expect(missing.evidence.heartbeat).toBeUndefined();
    const same = judgeClaim(claim('r', { holder: 'h' }), holder('live'), HERE, os(), NOW, POLICY);
    expect(same.evidence.holder).toEqual({ id: 'h', present: true, verdict: 'live', underlying: undefined, source: undefined });
    const limitOnly = judgeClaim(claim('r', { staleAfterMs: 60_000 }), undefined, HERE, os(), NOW, POLICY);
    expect(limitOnly.evidence.heartbeat).toBeUndefined();
  });

  it('a holder offline whose process is not a problem keeps the claim; an offline holder with no underlying verdict too', () => {
    expect(judgeClaim(claim('r', { holder: 'h' }), holder('offline', { underlying: 'unverified' }), HERE, os(), NOW, POLICY).verdict).toBe('held');
    expect(judgeClaim(claim('r', { holder: 'h' }), holder('offline'), HERE, os(), NOW, POLICY).verdict).toBe('held');
  });
});

describe('rule: claims, the recycled-pid check', () => {
  it('compares on the local clock: the registry clock offset is taken off acquired_at', () => {
    // The registry's clock runs 30 s ahead: its acquired_at NOW - 30 s is NOW - 60 s here.
    const policy = defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: 30_000 } });
    const c = claim('r', { pid: 9, acquiredAt: NOW - 30_000 });
    const f = judgeClaim(c, undefined, HERE, os([alive(9, { startedAt: NOW - 50_000 })]), NOW, policy);
    expect(f).toMatchObject({ verdict: 'stale-claim', reason: expect.stringMatching(/started 10s after/) });
    expect(f.evidence.start).toEqual({ processStartedAt: NOW - 50_000, reference: 'acquired_at', referenceAt: NOW - 60_000, deltaMs: 10_000, toleranceMs: 2_000 });
    // Without the offset the same process started before the claim: held.
    expect(judgeClaim(c, undefined, HERE, os([alive(9, { startedAt: NOW - 50_000 })]), NOW, POLICY).verdict).toBe('held');
  });
});

describe('rule: claims, whose facts', () => {
  it('judges a pid only by the facts of its own host, and without facts not by pid at all', () => {
    const c = claim('r', { holder: 'h', pid: 9 });
    // No facts for the claim's host (a remote host down): the holder decides.
    const none = judgeClaim(c, holder('live'), HERE, undefined, NOW, POLICY);
    expect(none.verdict).toBe('held');
    expect(none.evidence.kill).toBeUndefined();
    // Facts given for a host the claim is not on are not its facts.
    const away = judgeClaim(c, holder('live'), AWAY, os([gone(9)]), NOW, POLICY);
    expect(away.verdict).toBe('held');
    expect(away.evidence.kill).toBeUndefined();
    expect(judgeClaim(c, holder('live'), HERE, os([gone(9)]), NOW, POLICY).verdict).toBe('stale-claim');
  });
});

describe('findHolder', () => {
  const live = (source: string) => sessionFinding(session('h', { source, pid: 5 }), { verdict: 'live', reason: '' }, localEvidence());
  const dead = (source: string) => sessionFinding(session('h', { source, pid: 5 }), { verdict: 'ghost', reason: '' }, localEvidence());
  const cases: [name: string, c: ClaimEntry, sessions: SessionFinding[], source: string | undefined][] = [
    ['its own source first', claim('r', { holder: 'h' }), [live('claude'), dead('hypivisor')], 'hypivisor'],
    ['else another source, one that is not a problem', claim('r', { holder: 'h' }), [dead('claude'), live('agentctl')], 'agentctl'],
    ['else the first other source', claim('r', { holder: 'h' }), [dead('claude'), dead('agentctl')], 'claude'],
    ['the very same id only', claim('r', { holder: 'H' }), [live('hypivisor')], undefined],
    ['no holder named', claim('r'), [live('hypivisor')], undefined],
    ['the only entry of that id, even of another source and a problem', claim('r', { holder: 'h' }), [dead('claude')], 'claude'],
    ['its own source even when it comes last of three', claim('r', { holder: 'h' }), [live('claude'), live('agentctl'), dead('hypivisor')], 'hypivisor'],
    ['its own source between two others', claim('r', { holder: 'h' }), [dead('claude'), dead('hypivisor'), live('agentctl')], 'hypivisor'],
  ];
  it.each(cases)('%s', (_name, c, sessions, source) => {
    expect(findHolder(c, indexHolders([c], sessions))?.source).toBe(source);
  });
  it('takes the last entry of that id in its own source, and finds each claim its own holder', () => {
    const older = dead('hypivisor');
    const newer = live('hypivisor');
    const c = claim('r', { holder: 'h' });
    expect(findHolder(c, indexHolders([c], [older, live('claude'), newer]))).toBe(newer);
    const other = sessionFinding(session('k', { pid: 6 }), { verdict: 'live', reason: '' }, localEvidence());
    const d = claim('s', { holder: 'k' });
    const holders = indexHolders([c, d], [other, older]);
    expect(findHolder(c, holders)).toBe(older);
    expect(findHolder(d, holders)).toBe(other);
    expect(findHolder(claim('t', { holder: 'nobody' }), holders)).toBeUndefined();
  });
});

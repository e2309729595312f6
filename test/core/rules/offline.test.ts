import { describe, expect, it } from 'vitest';
import { EPERM_NOTE, judgeOffline } from '../../../src/core/rules/offline.js';
import { defaultPolicy } from '../../../src/core/types.js';
import type { Judgement } from '../../../src/core/rules/judgement.js';
import type { SessionEntry } from '../../../src/core/types.js';
import { HOST, localEvidence, NOW, POLICY, session } from './support.js';

const off = (fields: Partial<SessionEntry> = {}) => session('a', { offline: true, status: 'offline', offlineSince: NOW - 20_000, ...fields });
const os = (verdict: Judgement['verdict'], reason = `the OS says ${verdict}`): Judgement => ({ verdict, reason });

// Rule offline: the registry's word against what this host's OS said (undefined: another host).
const ended = (fields: Partial<SessionEntry> = {}) => off({ source: 'agentctl', ended: true, status: 'stopped', epermCountsDead: true, ...fields });
const SWEEPS = 'the registry sweeps it once its TTL has passed';
const KEEPS = 'agentctl never removes it';
const LIVE = os('live', 'pid 4 is alive');

// Rule offline: the registry's word against what this host's OS said (undefined: another host).
// The last column is what the identity rule left in the evidence (kill's answer).
const cases: [name: string, entry: SessionEntry, local: Judgement | undefined, verdict: string, reason: RegExp, note?: string, drawn?: Partial<ReturnType<typeof localEvidence>>][] = [
  ['another host', off({ machine: 'laptop' }), undefined, 'offline', /^the registry marks it offline for 20s$/],
  ['another host, the registry names its sweep', off({ machine: 'laptop', cleanup: SWEEPS }), undefined, 'offline', /^the registry marks it offline for 20s; the registry sweeps it once its TTL has passed$/],
  ['no time of going offline', off({ offlineSince: undefined }), undefined, 'offline', /^the registry marks it offline$/],
  ['process alive', off(), os('live'), 'offline', /offline for 20s/],
  ['process not checkable', off(), os('unverified'), 'offline', /offline for 20s/],
  ['process gone', off(), os('ghost', 'pid 4 is gone'), 'ghost', /^registry: offline since \d\d:\d\d:\d\d UTC; OS: pid 4 is gone$/],
  ['process a zombie', off(), os('zombie'), 'zombie', /OS: the OS says zombie/],
  ['pid recycled', off(), os('reused'), 'reused', /registry: offline since/],
  ['gone, no time of going offline', off({ offlineSince: undefined }), os('ghost'), 'ghost', /^registry: offline; OS:/],
  // Ended records (agentctl's stopped...): history it keeps, named with what it really does.
  ['an ended record stays history', ended(), os('ghost'), 'offline', /^the registry marked it stopped 20s ago$/],
  ['an ended record, its cleanup named', ended({ cleanup: KEEPS }), os('ghost'), 'offline', /^the registry marked it stopped 20s ago; agentctl never removes it$/],
  ['ended, only a last activity known: not a death time', ended({ offlineSince: undefined, lastSeen: NOW - 6_000 }), os('ghost'), 'offline', /^the registry marked it stopped \(last active 6s ago\)$/],
  ['ended, no time at all', ended({ offlineSince: undefined, status: undefined }), undefined, 'offline', /^the registry marked it ended$/],
  // The registry counts EPERM as dead: a warning, never a problem.
  ['ended, but kill says EPERM: a warning', ended({ pid: 4, cleanup: KEEPS }), LIVE, 'offline', /^the registry marked it stopped 20s ago; agentctl never removes it; but pid 4 is alive \(EPERM: another user owns it\), and the registry counts EPERM as dead$/, EPERM_NOTE, { kill: 'EPERM' }],
  ['ended, alive as our own process: no EPERM warning', ended({ pid: 4 }), LIVE, 'offline', /^the registry marked it stopped 20s ago$/, undefined, { kill: 'ok' }],
  ['ended and EPERM, a registry that counts EPERM alive: no warning', ended({ pid: 4, epermCountsDead: undefined }), LIVE, 'offline', /^the registry marked it stopped 20s ago$/, undefined, { kill: 'EPERM' }],
  ['not ended and EPERM: the registry does not call it dead', off({ pid: 4, epermCountsDead: true }), LIVE, 'offline', /^the registry marks it offline for 20s$/, undefined, { kill: 'EPERM' }],
  ['ended and EPERM, but the pid was recycled: the registry is right', ended({ pid: 4 }), os('reused'), 'offline', /^the registry marked it stopped 20s ago$/, undefined, { kill: 'EPERM' }],
];

describe('rule: offline', () => {
  it.each(cases)('%s', (_name, entry, local, verdict, reason, note, drawn) => {
    const j = judgeOffline(entry, local, NOW, POLICY, Object.assign(localEvidence(), drawn));
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
    expect(j.note).toBe(note);
  });

  it('keeps the registry status and, on this host, what the OS said', () => {
    const evidence = localEvidence();
    judgeOffline(off(), os('ghost'), NOW, POLICY, evidence);
    expect(evidence).toMatchObject({ registry: { status: 'offline', offlineSince: NOW - 20_000 }, underlying: 'ghost' });
    const elsewhere = localEvidence();
    judgeOffline(off(), undefined, NOW, POLICY, elsewhere);
    expect(elsewhere.underlying).toBeUndefined();
  });

  it('names the moment in the policy\'s clock, from the registry\'s clock', () => {
    const policy = defaultPolicy(HOST, { clockText: (ms) => `T${ms}`, registryClockOffsetMs: { hypivisor: 3_000 } });
    expect(judgeOffline(off(), os('ghost', 'gone'), NOW, policy, localEvidence()).reason).toBe(`registry: offline since T${NOW - 23_000}; OS: gone`);
    expect(judgeOffline(off(), os('live'), NOW, policy, localEvidence()).reason).toMatch(/offline for 23s/);
  });
});

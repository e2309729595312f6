import { describe, expect, it } from 'vitest';
import { judgeOffline } from '../../../src/core/rules/offline.js';
import { defaultPolicy } from '../../../src/core/types.js';
import type { Judgement } from '../../../src/core/rules/judgement.js';
import type { SessionEntry } from '../../../src/core/types.js';
import { HOST, localEvidence, NOW, POLICY, session } from './support.js';

const off = (fields: Partial<SessionEntry> = {}) => session('a', { offline: true, status: 'offline', offlineSince: NOW - 20_000, ...fields });
const os = (verdict: Judgement['verdict'], reason = `the OS says ${verdict}`): Judgement => ({ verdict, reason });

// Rule offline: the registry's word against what this host's OS said (undefined: another host).
const cases: [name: string, entry: SessionEntry, local: Judgement | undefined, verdict: string, reason: RegExp][] = [
  ['another host', off({ machine: 'laptop' }), undefined, 'offline', /^the registry marks it offline for 20s; it will sweep it$/],
  ['no time of going offline', off({ offlineSince: undefined }), undefined, 'offline', /^the registry marks it offline; it will sweep it$/],
  ['process alive', off(), os('live'), 'offline', /offline for 20s/],
  ['process not checkable', off(), os('unverified'), 'offline', /offline for 20s/],
  ['process gone', off(), os('ghost', 'pid 4 is gone'), 'ghost', /^registry: offline since \d\d:\d\d:\d\d UTC; OS: pid 4 is gone$/],
  ['process a zombie', off(), os('zombie'), 'zombie', /OS: the OS says zombie/],
  ['pid recycled', off(), os('reused'), 'reused', /registry: offline since/],
  ['gone, no time of going offline', off({ offlineSince: undefined }), os('ghost'), 'ghost', /^registry: offline; OS:/],
  ['an ended record stays history', off({ ended: true, status: 'stopped' }), os('ghost'), 'offline', /offline for 20s/],
];

describe('rule: offline', () => {
  it.each(cases)('%s', (_name, entry, local, verdict, reason) => {
    const j = judgeOffline(entry, local, NOW, POLICY, localEvidence());
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
    expect(j.note).toBeUndefined();
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

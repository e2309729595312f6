import { describe, expect, it } from 'vitest';
import { isPlaceholder, judgePending, pendingAge } from '../../../src/core/rules/pending.js';
import type { Judgement } from '../../../src/core/rules/judgement.js';
import { defaultPolicy, type SessionEntry } from '../../../src/core/types.js';
import { HOST, localEvidence, NOW, POLICY, session } from './support.js';

const TTL = POLICY.pendingTtlMs;
const os = (verdict: Judgement['verdict'], note?: string): Judgement => ({ verdict, reason: `os ${verdict}`, note });
const p = (fields: Partial<SessionEntry>) => session('pending-1', fields);

// Rule pending: a placeholder on this host and what the OS said of it.
const cases: [name: string, entry: SessionEntry, local: Judgement, verdict: string, reason: RegExp, note?: string][] = [
  ['young and alive: resolving', p({ registeredAt: NOW - 5_000 }), os('live'), 'live', /^placeholder, 5s old: os live$/, 'resolving'],
  ['young, its details hidden: resolving wins', p({ registeredAt: NOW - 5_000 }), os('live', 'details hidden'), 'live', /placeholder/, 'resolving'],
  ['young and uncheckable', p({ registeredAt: NOW - 5_000 }), os('unverified'), 'unverified', /os unverified/, 'resolving'],
  ['exactly the TTL: still resolving', p({ registeredAt: NOW - TTL }), os('live'), 'live', /placeholder, 2m00s old/, 'resolving'],
  ['past the TTL', p({ registeredAt: NOW - TTL - 1 }), os('live'), 'pending', /^placeholder never resolved: 2m00s old \(TTL 2m00s\)$/],
  ['past the TTL, uncheckable', p({ registeredAt: NOW - TTL - 1 }), os('unverified'), 'pending', /never resolved/],
  ['young, its process gone', p({ registeredAt: NOW - 5_000 }), os('ghost'), 'pending', /^placeholder whose process is dead: os ghost$/],
  ['young, a zombie', p({ registeredAt: NOW - 5_000 }), os('zombie'), 'pending', /process is dead/],
  ['young, its pid recycled', p({ registeredAt: NOW - 5_000 }), os('reused'), 'pending', /process is dead/],
  ['no age: never old', p({}), os('live'), 'live', /age unknown: os live/, 'resolving'],
  ['age from first observed', p({ firstObservedAt: NOW - TTL - 1 }), os('live'), 'pending', /never resolved/],
  ['age from last seen', p({ lastSeen: NOW - TTL - 1 }), os('live'), 'pending', /never resolved/],
  ['a registered_at in the future is not old', p({ registeredAt: NOW + 600_000 }), os('live'), 'live', /0ms old/, 'resolving'],
];

describe('rule: pending', () => {
  it.each(cases)('%s', (_name, entry, local, verdict, reason, note) => {
    const j = judgePending(entry, local, NOW, POLICY, localEvidence());
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
    expect(j.note).toBe(note);
  });

  it('records the age, where it came from, and the TTL', () => {
    const evidence = localEvidence();
    judgePending(p({ registeredAt: NOW - 7_000, firstObservedAt: NOW - 1_000 }), os('live'), NOW, POLICY, evidence);
    expect(evidence.pending).toEqual({ ageMs: 7_000, from: 'registered_at', ttlMs: TTL });
  });

  it('ages on the local clock: registered_at and last_seen are converted, first observed is local', () => {
    const policy = defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: 60_000 } });
    expect(pendingAge(p({ registeredAt: NOW }), NOW, policy)).toEqual({ ms: 60_000, from: 'registered_at' });
    expect(pendingAge(p({ lastSeen: NOW }), NOW, policy)).toEqual({ ms: 60_000, from: 'last_seen' });
    expect(pendingAge(p({ firstObservedAt: NOW - 5 }), NOW, policy)).toEqual({ ms: 5, from: 'first_observed' });
    expect(pendingAge(p({}), NOW, policy)).toEqual({ ms: 0, from: 'unknown' });
  });

  it.each([['pending-1', true], ['pending-', true], ['Pending-1', false], ['x-pending-1', false], ['pending', false]] as const)(
    'is %s a placeholder: %s',
    (id, yes) => expect(isPlaceholder(session(id))).toBe(yes),
  );
});

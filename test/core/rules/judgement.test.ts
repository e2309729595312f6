import { describe, expect, it } from 'vitest';
import { judgeClaim } from '../../../src/core/rules/claims.js';
import { clockText, judged, newEvidence, sessionFinding } from '../../../src/core/rules/judgement.js';
import { VERDICT_TRAITS } from '../../../src/core/types.js';
import { claim, localEvidence, NOW, os, POLICY, session } from './support.js';

// Findings, their evidence and judgements are made by classes (see judgement.ts: V8 pretenures
// object literals). They must stay plain data to everyone who reads them: own enumerable fields in
// one order (the JSON of check and the detail view), copied whole by a spread, equal to a literal.

describe('sessionFinding', () => {
  it('has the fields of a finding, in order, with the traits of its verdict', () => {
    const entry = session('a', { pid: 7 });
    const evidence = localEvidence();
    const f = sessionFinding(entry, judged('ghost', 'pid 7 is gone (ESRCH)'), evidence);
    expect(Object.keys(f)).toEqual(['kind', 'source', 'id', 'verdict', 'problem', 'evictable', 'reason', 'note', 'evidence', 'entry']);
    expect(f).toEqual({
      kind: 'session',
      source: entry.source,
      id: 'a',
      verdict: 'ghost',
      problem: VERDICT_TRAITS.ghost.problem,
      evictable: VERDICT_TRAITS.ghost.evictable,
      reason: 'pid 7 is gone (ESRCH)',
      note: undefined,
      evidence,
      entry,
    });
    expect(f.evidence).toBe(evidence);
    expect(f.entry).toBe(entry);
    expect({ ...f }).toEqual(f);
    expect(JSON.parse(JSON.stringify(f))).toEqual({ ...f, note: undefined, evidence: { host: evidence.host }, entry: JSON.parse(JSON.stringify(entry)) });
  });

  it('takes problem and evictable from the verdict, and keeps a note', () => {
    const live = sessionFinding(session('b'), judged('live', 'pid 1 is alive', 'details hidden'), localEvidence());
    expect([live.problem, live.evictable, live.note]).toEqual([VERDICT_TRAITS.live.problem, VERDICT_TRAITS.live.evictable, 'details hidden']);
    const unverified = sessionFinding(session('c'), judged('unverified', 'not probed yet'), localEvidence());
    expect([unverified.problem, unverified.evictable]).toEqual([false, false]);
    expect([live.problem, sessionFinding(session('d'), judged('zombie', 'z'), localEvidence()).problem]).toEqual([false, true]);
  });
});

describe('newEvidence', () => {
  it('starts with the host and the common fields unset, and takes more fields after them', () => {
    const host = { machine: 'devbox', local: true, matchedAs: 'exact' } as const;
    const e = newEvidence(host);
    expect(Object.keys(e)).toEqual(['host', 'kill', 'state', 'start', 'process', 'usage', 'checkedAt']);
    expect(e.host).toBe(host);
    expect(JSON.stringify(e)).toBe('{"host":{"machine":"devbox","local":true,"matchedAs":"exact"}}');
    e.kill = 'ESRCH';
    e.pending = { ageMs: 1, from: 'registered_at', ttlMs: 2 };
    expect(Object.keys(e).slice(-1)).toEqual(['pending']);
    expect(JSON.parse(JSON.stringify(e))).toEqual({ host, kill: 'ESRCH', pending: { ageMs: 1, from: 'registered_at', ttlMs: 2 } });
  });
});

describe('judged', () => {
  it('is a verdict, a reason and a note', () => {
    expect(judged('reused', 'recycled')).toEqual({ verdict: 'reused', reason: 'recycled', note: undefined });
    expect(Object.keys(judged('live', 'alive', 'resolving'))).toEqual(['verdict', 'reason', 'note']);
    expect({ ...judged('live', 'alive', 'resolving') }).toEqual({ verdict: 'live', reason: 'alive', note: 'resolving' });
  });
});

describe('claim findings', () => {
  it('have the fields of a claim finding, in order, and copy whole', () => {
    const c = claim('repo-lock', { holder: 'h' });
    const f = judgeClaim(c, undefined, { machine: 'devbox', local: true, matchedAs: 'exact' }, os([]), NOW, POLICY);
    expect(Object.keys(f)).toEqual(['kind', 'source', 'id', 'holder', 'verdict', 'problem', 'evictable', 'reason', 'note', 'evidence', 'entry']);
    expect([f.kind, f.id, f.holder, f.entry]).toEqual(['claim', 'repo-lock', 'h', c]);
    expect([f.problem, f.evictable]).toEqual([VERDICT_TRAITS[f.verdict].problem, VERDICT_TRAITS[f.verdict].evictable]);
    expect({ ...f }).toEqual(f);
    expect(judgeClaim(claim('x'), undefined, f.evidence.host, os([]), NOW, POLICY).holder).toBeNull();
  });
});

describe('clockText', () => {
  it('is the policy formatter when there is one, else UTC time of day', () => {
    expect(clockText({ ...POLICY, clockText: (ms) => `T${ms}` }, 5)).toBe('T5');
    const utc = { ...POLICY, clockText: undefined };
    const cases: [ms: number, text: string][] = [
      [0, '00:00:00 UTC'],
      [3_723_000, '01:02:03 UTC'],
      [36_610_000, '10:10:10 UTC'],
      [86_399_000, '23:59:59 UTC'],
      [86_400_000 + 9_000, '00:00:09 UTC'],
      [-1_000, '23:59:59 UTC'],
      [1_800_000_000_000, '08:00:00 UTC'],
    ];
    for (const [ms, text] of cases) expect(clockText(utc, ms), String(ms)).toBe(text);
  });
});

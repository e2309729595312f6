import { describe, expect, it } from 'vitest';
import { newestOrder, supersededByPid, supersededByPortOwner } from '../../../src/core/rules/superseded.js';
import { sessionFinding } from '../../../src/core/rules/judgement.js';
import type { Evidence, SessionEntry, SessionFinding, SessionVerdict } from '../../../src/core/types.js';
import { localEvidence, NOW, POLICY, session } from './support.js';

const REG = NOW - 600_000;
/** A finding as the per-entry rules left it: `live` with a reason, or any verdict. */
function found(entry: SessionEntry, verdict: SessionVerdict = 'live', port?: Evidence['port']): SessionFinding {
  const evidence = localEvidence();
  if (port) evidence.port = port;
  return sessionFinding(entry, { verdict, reason: `pid ${String(entry.pid)} is alive`, note: undefined }, evidence);
}
const byOwner = (owner: number): Evidence['port'] => ({ port: 8080, result: 'open', owner });

// Rule superseded, by pid: the findings of all entries; the amendments by index.
const pidCases: [name: string, findings: SessionFinding[], expected: Record<number, [string, RegExp] | 'none'>][] = [
  ['older by registered_at', [found(session('old', { pid: 5, registeredAt: REG })), found(session('new', { pid: 5, registeredAt: REG + 1 }))],
    { 0: ['superseded', /^pid 5 is alive but belongs to the newer entry new \(by registered at\)$/], 1: ['live', /^pid 5 is alive; newest of 2 entries on this pid$/] }],
  ['by join order', [found(session('a', { pid: 5, joinSeq: 2 })), found(session('b', { pid: 5, joinSeq: 1 }))],
    { 0: ['live', /newest of 2/], 1: ['superseded', /newer entry a \(by join order\)/] }],
  ['by last seen', [found(session('a', { pid: 5, lastSeen: NOW - 9 })), found(session('b', { pid: 5, lastSeen: NOW }))],
    { 0: ['superseded', /by last seen/], 1: ['live', /newest/] }],
  ['nothing tells', [found(session('a', { pid: 5 })), found(session('b', { pid: 5 }))],
    { 0: ['live', /also claimed by b, and nothing tells which registration is newest/], 1: ['live', /also claimed by a/] }],
  ['tied newest', [found(session('a', { pid: 5, registeredAt: REG })), found(session('b', { pid: 5, registeredAt: REG + 1 })), found(session('c', { pid: 5, registeredAt: REG + 1 }))],
    { 0: ['superseded', /newer entry b, c/], 1: ['live', /also claimed by a, c, registered at the same time/], 2: ['live', /also claimed by a, b/] }],
  ['different pids', [found(session('a', { pid: 5, registeredAt: REG })), found(session('b', { pid: 6, registeredAt: REG + 1 }))], { 0: 'none', 1: 'none' }],
  ['different sources', [found(session('a', { pid: 5, registeredAt: REG })), found(session('b', { source: 'claude', pid: 5, registeredAt: REG + 1 }))], { 0: 'none', 1: 'none' }],
  ['only live findings count', [found(session('a', { pid: 5, registeredAt: REG }), 'unverified'), found(session('b', { pid: 5, registeredAt: REG + 1 }))], { 0: 'none', 1: 'none' }],
  ['unusable pids never group', [found(session('a', { pid: 1, registeredAt: REG })), found(session('b', { pid: 1, registeredAt: REG + 1 }))], { 0: 'none', 1: 'none' }],
];

describe('rule: superseded by pid', () => {
  it.each(pidCases)('%s', (_name, findings, expected) => {
    const amendments = supersededByPid(findings, POLICY);
    for (const [index, want] of Object.entries(expected)) {
      const a = amendments.find((x) => x.index === Number(index));
      if (want === 'none') expect(a).toBeUndefined();
      else {
        expect(a?.judgement?.verdict).toBe(want[0]);
        expect(a?.judgement?.reason).toMatch(want[1]);
      }
    }
  });

  it('lists the siblings and what ordered them', () => {
    const [a, b] = supersededByPid([found(session('old', { pid: 5, registeredAt: REG })), found(session('new', { pid: 5, registeredAt: REG + 1 }))], POLICY);
    expect(a!.evidence).toEqual({ siblings: ['new'], siblingCount: 1, sharedBy: 'pid', newestBy: 'registered_at' });
    expect(b!.evidence).toEqual({ siblings: ['old'], siblingCount: 1, sharedBy: 'pid', newestBy: 'registered_at' });
    const [c] = supersededByPid([found(session('x', { pid: 5 })), found(session('y', { pid: 5 }))], POLICY);
    expect(c!.evidence).toEqual({ siblings: ['y'], siblingCount: 1, sharedBy: 'pid' });
    expect(c!.judgement?.note).toBe('shared pid');
  });

  it('keeps the note of the newest', () => {
    const newest = sessionFinding(session('new', { pid: 5, registeredAt: REG + 1 }), { verdict: 'live', reason: 'r', note: 'details hidden' }, localEvidence());
    const out = supersededByPid([found(session('old', { pid: 5, registeredAt: REG })), newest], POLICY);
    expect(out.find((x) => x.index === 1)?.judgement).toEqual({ verdict: 'live', reason: 'r; newest of 2 entries on this pid', note: 'details hidden' });
  });
});

describe('rule: superseded by pid, in a big group', () => {
  // 25 entries on one pid, e-0 oldest ... e-24 newest: evidence names at most 20 siblings, texts at most 3.
  const ids = Array.from({ length: 25 }, (_, i) => `e-${i}`);
  const group = (extra: (i: number) => Partial<SessionEntry>) => ids.map((id, i) => found(session(id, { pid: 7, ...extra(i) })));
  const without = (i: number) => ids.filter((_, k) => k !== i);

  it('lists each member\'s own first 20 siblings, never itself, and counts them all', () => {
    const out = supersededByPid(group((i) => ({ registeredAt: REG + i })), POLICY);
    expect(out.map((a) => a.index)).toEqual(ids.map((_, i) => i));
    for (const [k, a] of out.entries()) {
      expect(a.evidence).toEqual({ siblings: without(k).slice(0, 20), siblingCount: 24, sharedBy: 'pid', newestBy: 'registered_at' });
    }
    // The boundary: the 20th member skips itself and reaches the 21st; the 21st sees the first 20.
    expect(out[19]!.evidence.siblings).toEqual([...ids.slice(0, 19), 'e-20']);
    expect(out[20]!.evidence.siblings).toEqual(ids.slice(0, 20));
  });

  it('members past the first 20 share one evidence value; the older ones one judgement', () => {
    const out = supersededByPid(group((i) => ({ registeredAt: REG + i })), POLICY);
    expect(out[21]!.evidence).toBe(out[20]!.evidence);
    expect(out[23]!.evidence).toBe(out[20]!.evidence);
    expect(out[19]!.evidence).not.toBe(out[20]!.evidence);
    for (const a of out.slice(0, 24)) {
      expect(a.judgement).toBe(out[0]!.judgement);
      expect(a.judgement).toEqual({ verdict: 'superseded', reason: 'pid 7 is alive but belongs to the newer entry e-24 (by registered at)', note: undefined });
    }
    expect(out[24]!.judgement).toEqual({ verdict: 'live', reason: 'pid 7 is alive; newest of 25 entries on this pid', note: undefined });
  });

  it('names three others and counts the rest, each member its own others', () => {
    const out = supersededByPid(group(() => ({})), POLICY);
    const text = (named: string) => `pid 7 is alive; also claimed by ${named} and 21 more, and nothing tells which registration is newest`;
    expect(out[0]!.judgement?.reason).toBe(text('e-1, e-2, e-3'));
    expect(out[2]!.judgement?.reason).toBe(text('e-0, e-1, e-3'));
    expect(out[3]!.judgement?.reason).toBe(text('e-0, e-1, e-2'));
    expect(out[24]!.judgement?.reason).toBe(text('e-0, e-1, e-2'));
    for (const a of out) expect(a.judgement?.note).toBe('shared pid');
  });

  it('a member whose own reason differs keeps it in its text', () => {
    const findings = group(() => ({}));
    findings[10] = sessionFinding(findings[10]!.entry, { verdict: 'live', reason: 'other words', note: undefined }, localEvidence());
    const out = supersededByPid(findings, POLICY);
    expect(out[9]!.judgement?.reason).toMatch(/^pid 7 is alive; also claimed by e-0, e-1, e-2 and 21 more/);
    expect(out[10]!.judgement?.reason).toMatch(/^other words; also claimed by e-0, e-1, e-2 and 21 more/);
    expect(out[11]!.judgement?.reason).toMatch(/^pid 7 is alive; also claimed by e-0, e-1, e-2 and 21 more/);
  });

  it('tied newest members name their others; the older share the one judgement naming the tied', () => {
    const out = supersededByPid(group((i) => ({ registeredAt: i < 20 ? REG : REG + 1 })), POLICY);
    expect(out[0]!.judgement?.reason).toBe('pid 7 is alive but belongs to the newer entry e-20, e-21, e-22 and 2 more (by registered at)');
    expect(out[19]!.judgement).toBe(out[0]!.judgement);
    expect(out[20]!.judgement?.reason).toBe('pid 7 is alive; also claimed by e-0, e-1, e-2 and 21 more, registered at the same time: cannot tell which is newest');
    expect(out[24]!.judgement?.verdict).toBe('live');
  });
});

const ownerCases: [name: string, findings: SessionFinding[], expected: Record<number, string | 'keep' | 'none'>][] = [
  ['older of two served by one process', [found(session('old', { port: 1, registeredAt: REG }), 'live', byOwner(42)), found(session('new', { port: 2, registeredAt: REG + 1 }), 'live', byOwner(42))], { 0: 'superseded', 1: 'keep' }],
  ['an older offline entry too', [found(session('old', { registeredAt: REG }), 'offline', byOwner(42)), found(session('new', { registeredAt: REG + 1 }), 'live', byOwner(42))], { 0: 'superseded', 1: 'keep' }],
  ['an older ghost is not this rule\'s', [found(session('old', { registeredAt: REG }), 'ghost', byOwner(42)), found(session('new', { registeredAt: REG + 1 }), 'live', byOwner(42))], { 0: 'none', 1: 'none' }],
  ['no order: both kept', [found(session('a', {}), 'live', byOwner(42)), found(session('b', {}), 'live', byOwner(42))], { 0: 'keep', 1: 'keep' }],
  ['tied newest: all kept', [found(session('a', { registeredAt: REG }), 'live', byOwner(42)), found(session('b', { registeredAt: REG + 1 }), 'live', byOwner(42)), found(session('c', { registeredAt: REG + 1 }), 'live', byOwner(42))], { 0: 'keep', 1: 'keep', 2: 'keep' }],
  ['different owners', [found(session('a', { registeredAt: REG }), 'live', byOwner(42)), found(session('b', { registeredAt: REG + 1 }), 'live', byOwner(43))], { 0: 'none', 1: 'none' }],
  ['different sources', [found(session('a', { registeredAt: REG }), 'live', byOwner(42)), found(session('b', { source: 'x', registeredAt: REG + 1 }), 'live', byOwner(42))], { 0: 'none', 1: 'none' }],
];

describe('rule: superseded by port owner', () => {
  it.each(ownerCases)('%s', (_name, findings, expected) => {
    const amendments = supersededByPortOwner(findings, POLICY);
    for (const [index, want] of Object.entries(expected)) {
      const a = amendments.find((x) => x.index === Number(index));
      if (want === 'none') expect(a).toBeUndefined();
      else if (want === 'keep') expect(a && a.judgement).toBeUndefined();
      else expect(a?.judgement?.verdict).toBe(want);
    }
    for (const a of amendments) expect(a.evidence.sharedBy).toBe('port-owner');
  });

  it('names the owner and the newer entry', () => {
    const [a] = supersededByPortOwner([found(session('old', { registeredAt: REG }), 'live', byOwner(42)), found(session('new', { registeredAt: REG + 1 }), 'live', byOwner(42))], POLICY);
    expect(a!.judgement?.reason).toBe('pid 42 serves its port and also the newer entry new (by registered at)');
    expect(a!.evidence).toEqual({ siblings: ['new'], siblingCount: 1, sharedBy: 'port-owner', newestBy: 'registered_at' });
  });

  it('in a big group: each member its own first 20 siblings, the older ones one judgement', () => {
    const ids = Array.from({ length: 23 }, (_, i) => `p-${i}`);
    const out = supersededByPortOwner(ids.map((id, i) => found(session(id, { registeredAt: REG + i }), 'live', byOwner(42))), POLICY);
    for (const [k, a] of out.entries()) {
      expect(a.evidence).toEqual({ siblings: ids.filter((_, j) => j !== k).slice(0, 20), siblingCount: 22, sharedBy: 'port-owner', newestBy: 'registered_at' });
      if (k < 22) expect(a.judgement).toBe(out[0]!.judgement);
    }
    expect(out[0]!.judgement?.reason).toBe('pid 42 serves its port and also the newer entry p-22 (by registered at)');
    expect(out[22]!.judgement).toBeUndefined();
  });
});

describe('newestOrder', () => {
  const cases: [name: string, entries: SessionEntry[], by: string | undefined][] = [
    ['registered_at first', [session('a', { registeredAt: 1, joinSeq: 9 }), session('b', { registeredAt: 2, joinSeq: 1 })], 'registered_at'],
    ['a key missing on one entry is skipped', [session('a', { registeredAt: 1, joinSeq: 1 }), session('b', { joinSeq: 2 })], 'join_order'],
    ['a key all tied is skipped', [session('a', { joinSeq: 1, lastSeen: 1 }), session('b', { joinSeq: 1, lastSeen: 2 })], 'last_seen'],
    ['nothing tells', [session('a', { lastSeen: 1 }), session('b', { lastSeen: 1 })], undefined],
  ];
  it.each(cases)('%s', (_name, entries, by) => expect(newestOrder(entries, POLICY)?.by).toBe(by));
});

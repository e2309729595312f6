import { describe, expect, it } from 'vitest';
import { findingKey, planEviction, recheck, type Finding } from '../../src/core/index.js';
import { alive, gone, one, os, run, session } from './fixtures.js';

const findings = run(
  [session('ghost', { pid: 100 }), session('live', { pid: 101 }), session('far', { machine: 'laptop' })],
  os([gone(100), alive(101)]),
  { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'ghost' }] },
);
const ghost = one(findings, 'ghost');
const live = one(findings, 'live');
const far = one(findings, 'far');
const stale = one(findings, 'repo');

describe('planEviction', () => {
  it('sends what is evictable and holds back what needs force', () => {
    const plan = planEviction([ghost, live, far, stale], { force: false });
    expect(plan.send.map((p) => p.action)).toEqual([
      { type: 'release-claim', source: 'hypivisor', resource: 'repo' },
      { type: 'deregister', source: 'hypivisor', id: 'ghost' },
    ]);
    expect(plan.send.every((p) => !p.forced)).toBe(true);
    expect(plan.needsForce.map((f) => f.id)).toEqual(['live', 'far']);
  });

  it('with force, sends everything and marks what was forced', () => {
    const plan = planEviction([live, ghost], { force: true });
    expect(plan.send.map((p) => [p.finding.id, p.forced])).toEqual([
      ['live', true],
      ['ghost', false],
    ]);
    expect(plan.needsForce).toEqual([]);
  });

  it('sends each finding once even if selected twice', () => {
    expect(planEviction([ghost, ghost], { force: false }).send).toHaveLength(1);
  });

  it('keys findings by kind, source and id', () => {
    expect(findingKey(ghost)).not.toBe(findingKey({ ...ghost, kind: 'claim' } as Finding));
    expect(findingKey(ghost)).toBe(findingKey(one(run([session('ghost', { pid: 100 })], os([gone(100)])), 'ghost')));
  });
});

describe('recheck right before sending', () => {
  const [planned] = planEviction([ghost], { force: false }).send;
  it('sends when nothing changed', () => {
    expect(recheck(planned!, one(run([session('ghost', { pid: 100 })], os([gone(100)])), 'ghost'))).toEqual({ send: true });
  });
  it('does not send when the entry turned live, and says why', () => {
    const now = one(run([session('ghost', { pid: 100 })], os([alive(100)])), 'ghost');
    const r = recheck(planned!, now);
    expect(r).toMatchObject({ send: false, outcome: 'skipped' });
    expect(!r.send && r.why).toMatch(/now live \(was ghost\)/);
  });
  it('does not send when the pid changed', () => {
    const now = one(run([session('ghost', { pid: 200 })], os([gone(200)])), 'ghost');
    expect(recheck(planned!, now)).toMatchObject({ send: false, why: 'the entry changed: pid 100 is now 200' });
  });
  it('reports an entry that vanished as already gone', () => {
    expect(recheck(planned!, undefined)).toMatchObject({ send: false, outcome: 'already-gone' });
  });
  it('a forced eviction of a live entry still goes when it is still live', () => {
    const [forced] = planEviction([live], { force: true }).send;
    expect(recheck(forced!, live)).toEqual({ send: true });
  });
  it('a claim whose holder changed is not released', () => {
    const [p] = planEviction([stale], { force: false }).send;
    const now = run([], os(), { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'someone-else' }] })[0];
    expect(recheck(p!, now)).toMatchObject({ send: false, outcome: 'skipped' });
  });
});

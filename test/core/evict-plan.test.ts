// Planning an eviction and the recheck right before sending it: a person confirmed what they saw,
// so any change to the entry's identity (pid, host, port, holder) or verdict stops the eviction,
// with a reason they can read.
import { describe, expect, it } from 'vitest';
import { actionFor, type Finding, findingKey, planEviction, type PlannedEviction, recheck } from '../../src/core/index.js';
import { alive, claim, gone, one, os, port, run, session } from './fixtures.js';

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

/** The finding for `id` after one reconcile of these sessions and claims. */
function seen(sessions: Parameters<typeof session>[1][], facts = os([gone(100), gone(200)], [port(8080, 'refused'), port(9090, 'refused')]), claims: Parameters<typeof claim>[1][] = []): Finding {
  return one(
    run(sessions.map((s) => session('s', s)), facts, { claims: claims.map((c) => claim('repo', c)) }),
    claims.length > 0 ? 'repo' : 's',
  );
}

function planned(f: Finding): PlannedEviction {
  const [p] = planEviction([f], { force: true }).send;
  return p!;
}

describe('recheck: what stops a planned eviction, in the words the person reads', () => {
  it.each([
    ['the pid changed', [{ pid: 100 }], [{ pid: 200 }], 'the entry changed: pid 100 is now 200'],
    ['the pid went away', [{ pid: 100 }], [{ port: 8080 }], 'the entry changed: pid 100 is now none'],
    ['a pid appeared', [{ port: 8080 }], [{ pid: 100, port: 8080 }], 'the entry changed: pid none is now 100'],
    ['it moved to another host', [{ pid: 100 }], [{ pid: 100, machine: 'laptop' }], 'the entry changed: it moved to another host'],
    ['the port changed', [{ port: 8080 }], [{ port: 9090 }], 'the entry changed: port 8080 is now 9090'],
    ['a port appeared', [{ pid: 100 }], [{ pid: 100, port: 9090 }], 'the entry changed: port none is now 9090'],
    ['the port went away', [{ pid: 100, port: 9090 }], [{ pid: 100 }], 'the entry changed: port 9090 is now none'],
  ] as const)('a session: %s', (_name, [before], [after], why) => {
    const r = recheck(planned(seen([before])), seen([after]));
    expect(r).toEqual({ send: false, outcome: 'skipped', why });
  });

  it.each([
    ['the holder changed', { holder: 'a', pid: 100, machine: 'devbox' }, { holder: 'b', pid: 100, machine: 'devbox' }, 'the entry changed: holder a is now b'],
    ['the pid changed', { pid: 100, machine: 'devbox' }, { pid: 200, machine: 'devbox' }, 'the entry changed: pid 100 is now 200'],
    ['the holder went away', { holder: 'a', pid: 100, machine: 'devbox' }, { pid: 100, machine: 'devbox' }, 'the entry changed: holder a is now none'],
    ['a holder appeared', { pid: 100, machine: 'devbox' }, { holder: 'b', pid: 100, machine: 'devbox' }, 'the entry changed: holder none is now b'],
    ['the pid moved to another host', { pid: 100, machine: 'devbox' }, { pid: 100, machine: 'laptop' }, 'the entry changed: it moved to another host'],
  ] as const)('a claim: %s', (_name, before, after, why) => {
    const r = recheck(planned(seen([], undefined, [before])), seen([], undefined, [after]));
    expect(r).toEqual({ send: false, outcome: 'skipped', why });
  });

  it.each([
    ['an unchanged session', () => seen([{ pid: 100, port: 8080 }])],
    ['an unchanged claim', () => seen([], undefined, [{ holder: 'a', pid: 100, machine: 'devbox' }])],
    ['a claim with no holder, unchanged', () => seen([], undefined, [{ pid: 100, machine: 'devbox' }])],
  ])('%s is sent', (_name, make) => {
    expect(recheck(planned(make()), make())).toEqual({ send: true });
  });

  it('a changed verdict stops it, quoting the new reason', () => {
    const before = seen([{ pid: 100 }]);
    const after = seen([{ pid: 100 }], os([alive(100)]));
    expect(before.verdict).toBe('ghost');
    expect(recheck(planned(before), after)).toEqual({ send: false, outcome: 'skipped', why: `it is now live (was ghost): ${after.reason}` });
  });

  it('an entry that left the registry is already gone', () => {
    expect(recheck(planned(seen([{ pid: 100 }])), undefined)).toEqual({ send: false, outcome: 'already-gone', why: 'no longer in the registry' });
  });

  it('a plan that was not forced never sends what needs force', () => {
    const live = seen([{ pid: 100 }], os([alive(100)]));
    const unforced: PlannedEviction = { finding: live, action: actionFor(live), forced: false };
    expect(recheck(unforced, live)).toEqual({ send: false, outcome: 'skipped', why: 'live needs force' });
    expect(recheck(planned(live), live)).toEqual({ send: true });
  });

  it('a forced plan of an evictable entry is sent as it is', () => {
    const ghost = seen([{ pid: 100 }]);
    expect(planEviction([ghost], { force: true }).send.map((p) => [p.action.type, p.forced])).toEqual([['deregister', false]]);
  });
});

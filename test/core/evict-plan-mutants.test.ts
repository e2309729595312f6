// recheck, right before sending: a person confirmed what they saw, so any change to the entry's
// identity (pid, host, port, holder) or verdict stops the eviction, with a reason they can read.
import { describe, expect, it } from 'vitest';
import { actionFor, planEviction, recheck, type Finding, type PlannedEviction } from '../../src/core/index.js';
import { alive, claim, gone, one, os, port, run, session } from './fixtures.js';

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

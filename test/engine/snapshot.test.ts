// The snapshot helpers the engine publishes through, on findings of the real reconcile and on
// hand-made rows where one field must differ: which rows are marked stale (and with what), which
// are `checking` or carry `deadSince`, when a republish would show nothing new, and the exact
// millisecond the next verdict turns with time alone.
import { describe, expect, it } from 'vitest';
import type { Evidence, Finding } from '../../src/core/types.js';
import { buildSnapshot, eventSources, markProgress, markStale, nextVerdictCrossing, sameFindings, staleSources, withMarks, type ProbeProgress } from '../../src/engine/snapshot.js';
import { checkingOf, deadSinceOf, goneAtFirstProbeOf, staleOf, type EngineFinding, type HostStatus } from '../../src/engine/types.js';
import { demoFindings, source } from '../support/ui-fixtures.js';

/** A session row with only what a test sets; the rest as reconcile would leave a live local one. */
function row(fields: Partial<Omit<Finding, 'evidence' | 'entry'>> & { evidence?: Partial<Evidence>; pid?: number; mark?: Partial<EngineFinding> } = {}): Finding {
  const { evidence, pid, mark, ...rest } = fields;
  return {
    kind: 'session',
    source: 'hypivisor',
    id: 'a',
    verdict: 'live',
    problem: false,
    evictable: false,
    reason: 'process is running',
    evidence: { host: { machine: 'devbox', local: true }, ...evidence },
    entry: { source: 'hypivisor', id: 'a', machine: 'devbox', ...(pid !== undefined ? { pid } : {}) },
    ...rest,
    ...mark,
  } as Finding;
}

describe('staleSources', () => {
  it('only sources that are not reading are marked; since = confirmedAt, else downSince, else since; why = cause, else lastError, else the status', () => {
    const marks = staleSources([
      source({ name: 'reading', status: 'connected' }),
      source({ name: 'files', status: 'files-only' }),
      source({ name: 'all', status: 'unreachable', since: 10, downSince: 20, confirmedAt: 30, cause: 'connection refused', lastError: 'ECONNREFUSED' }),
      source({ name: 'down', status: 'unreachable', since: 10, downSince: 20, lastError: 'ECONNREFUSED' }),
      source({ name: 'bare', status: 'auth-refused', since: 10 }),
    ]);
    expect([...marks]).toEqual([
      ['all', { source: 'all', since: 30, why: 'connection refused' }],
      ['down', { source: 'down', since: 20, why: 'ECONNREFUSED' }],
      ['bare', { source: 'bare', since: 10, why: 'auth-refused' }],
    ]);
  });
});

describe('markStale', () => {
  const findings = [row({ id: 'h1', evictable: true }), row({ id: 'x1', source: 'other', evictable: true })];

  it('every source reading: the very same array', () => {
    expect(markStale(findings, [source({ name: 'hypivisor' }), source({ name: 'other' })])).toBe(findings);
  });

  it('a source not reading that has no rows: still the very same array', () => {
    expect(markStale(findings, [source({ name: 'hypivisor' }), source({ name: 'empty', status: 'unreachable' })])).toBe(findings);
  });

  it('only the rows of the source not reading are copied, marked and made not evictable', () => {
    const out = markStale(findings, [source({ name: 'hypivisor' }), source({ name: 'other', status: 'unreachable', since: 5, cause: 'connection dropped' })]);
    expect(out).not.toBe(findings);
    expect(out[0]).toBe(findings[0]);
    expect(out[0]!.evictable).toBe(true);
    expect(staleOf(out[0]!)).toBeUndefined();
    expect(out[1]).toEqual({ ...findings[1], evictable: false, stale: { source: 'other', since: 5, why: 'connection dropped' } });
  });
});

describe('buildSnapshot and eventSources', () => {
  it('counts every verdict, the problems and the rows being checked; panes only when there are some', () => {
    const findings = [
      row({ id: 'a', verdict: 'live' }),
      row({ id: 'b', verdict: 'ghost', problem: true }),
      row({ id: 'c', verdict: 'ghost', problem: true }),
      row({ id: 'd', verdict: 'unverified', mark: { checking: true } }),
    ];
    const base = { findings, sources: [], host: 'devbox', os: { processTable: 'ok' }, computedAt: 7, version: 3, settled: true } as const;
    const snap = buildSnapshot({ ...base, panes: new Map() });
    expect(snap.counts.live).toBe(1);
    expect(snap.counts.ghost).toBe(2);
    expect(snap.counts.unverified).toBe(1);
    expect(snap.counts.zombie).toBe(0);
    expect(snap.problems).toBe(2);
    expect(snap.checking).toBe(1);
    expect(snap).toMatchObject({ host: 'devbox', computedAt: 7, version: 3, settled: true });
    expect('panes' in snap).toBe(false);
    const panes = new Map([[1, { pane: '%1' }]]) as never;
    expect(buildSnapshot({ ...base, panes }).panes).toBe(panes);
  });

  it('the ssh hosts only when the engine has some (an empty list is still a list); the events and os as given', () => {
    const base = { findings: [], sources: [], host: 'devbox', os: { processTable: 'ok' }, computedAt: 7, version: 3, settled: false } as const;
    const bare = buildSnapshot(base);
    expect('hosts' in bare).toBe(false);
    expect(bare.events).toBeUndefined();
    expect(bare).toMatchObject({ problems: 0, checking: 0, settled: false, os: { processTable: 'ok' } });
    const hosts: HostStatus[] = [{ machine: 'build-1', dest: 'build-1', transport: 'ssh', state: 'up', connections: 1 }];
    const events = [{ at: 1 }] as never;
    const snap = buildSnapshot({ ...base, hosts, events });
    expect(snap.hosts).toBe(hosts);
    expect(snap.events).toBe(events);
    expect(buildSnapshot({ ...base, hosts: [] }).hosts).toEqual([]);
  });

  it('a source in the events frame: reading from its status, why = cause else lastError', () => {
    const sources = eventSources([
      source({ name: 'a', status: 'connected' }),
      source({ name: 'b', status: 'unreachable', cause: 'refused', lastError: 'ECONNREFUSED' }),
      source({ name: 'c', status: 'auth-refused', lastError: '401' }),
    ]);
    expect(sources).toEqual([
      { name: 'a', status: 'connected', reading: true, why: undefined },
      { name: 'b', status: 'unreachable', reading: false, why: 'refused' },
      { name: 'c', status: 'auth-refused', reading: false, why: '401' },
    ]);
  });
});

describe('markProgress', () => {
  const progress = (awaiting: { pids?: number[]; ports?: number[]; dead?: [number, number][]; goneFirst?: number[] }): ProbeProgress => ({
    awaitingPid: (pid) => (awaiting.pids ?? []).includes(pid),
    awaitingPort: (port) => (awaiting.ports ?? []).includes(port),
    deadSince: (pid) => new Map(awaiting.dead ?? []).get(pid),
    goneAtFirstProbe: (pid) => (awaiting.goneFirst ?? []).includes(pid),
  });

  it('nothing to mark: the very same array; one row to mark: only that row is copied', () => {
    const findings = demoFindings();
    expect(markProgress(findings, progress({}))).toBe(findings);
    const out = markProgress(findings, progress({ dead: [[40777, 1234]] }));
    const changed = out.flatMap((f, i) => (f === findings[i] ? [] : [f.id]));
    expect(changed).toEqual(['c0ffee00-ghost']);
    expect(deadSinceOf(out.find((f) => f.id === 'c0ffee00-ghost')!)).toBe(1234);
  });

  it('a local unverified session awaiting its pid is checking; one whose pid was probed is not', () => {
    const findings = [row({ id: 'u1', verdict: 'unverified', pid: 100 }), row({ id: 'u2', verdict: 'unverified', pid: 200 })];
    const out = markProgress(findings, progress({ pids: [100] }));
    expect(checkingOf(out[0]!)).toBe(true);
    expect(out[1]).toBe(findings[1]);
    expect(checkingOf(out[1]!)).toBe(false);
  });

  it('a pid-less one is checking only while its port is awaited and not probed yet', () => {
    const waiting = row({ id: 'p1', verdict: 'unverified', evidence: { port: { port: 8000, result: 'not-probed' } } });
    const probed = row({ id: 'p2', verdict: 'unverified', evidence: { port: { port: 8000, result: 'timeout' } } });
    const other = row({ id: 'p3', verdict: 'unverified', evidence: { port: { port: 9000, result: 'not-probed' } } });
    const out = markProgress([waiting, probed, other], progress({ ports: [8000] }));
    expect(out.map(checkingOf)).toEqual([true, false, false]);
  });

  it('a local unverified session with neither a pid nor a port is not checking', () => {
    const findings = [row({ id: 'bare', verdict: 'unverified' })];
    expect(markProgress(findings, progress({ pids: [100], ports: [8000] }))).toBe(findings);
  });

  it('neither a remote unverified row nor a live row is checking, even with its pid awaited', () => {
    const findings = [row({ id: 'r', verdict: 'unverified', pid: 100, evidence: { host: { machine: 'laptop', local: false } } }), row({ id: 'l', verdict: 'live', pid: 100 })];
    expect(markProgress(findings, progress({ pids: [100] }))).toBe(findings);
  });

  it('an offline row whose process has not had its first probe is checking: its offline is for want of the OS\'s word', () => {
    const findings = [
      row({ id: 'waits', verdict: 'offline', pid: 100, evidence: { underlying: 'unverified' } }),
      row({ id: 'probed', verdict: 'offline', pid: 200, evidence: { underlying: 'live' } }),
    ];
    expect(markProgress(findings, progress({ pids: [100, 200] })).map(checkingOf)).toEqual([true, false]);
  });

  it('a held claim is checking while its own pid or its holder waits for a first probe; a stale claim never (issue 27: held flashed before a recycled pid was probed)', () => {
    const claim = (id: string, fields: { pid?: number; holder?: string; problem?: boolean; holderSource?: string }) =>
      ({
        kind: 'claim',
        source: 'hypivisor',
        id,
        holder: fields.holder ?? null,
        verdict: fields.problem ? 'stale-claim' : 'held',
        problem: fields.problem === true,
        evictable: fields.problem === true,
        reason: 'r',
        evidence: { host: { machine: 'devbox', local: true }, holder: { id: fields.holder ?? null, present: fields.holder !== undefined, verdict: 'unverified', source: fields.holderSource } },
        entry: { source: 'hypivisor', resource: id, holder: fields.holder, pid: fields.pid },
      }) as unknown as Finding;
    const findings = [
      row({ id: 'agent-1', verdict: 'unverified', pid: 100 }),
      row({ id: 'agent-2', verdict: 'live', pid: 200 }),
      claim('own-pid-waits', { pid: 300, holder: 'agent-2' }),
      claim('holder-waits', { holder: 'agent-1' }),
      claim('holder-elsewhere', { holder: 'agent-1', holderSource: 'agentctl' }),
      claim('both-known', { pid: 200, holder: 'agent-2' }),
      claim('stale', { pid: 300, holder: 'agent-1', problem: true }),
    ];
    const out = markProgress(findings, progress({ pids: [100, 300] }));
    expect(out.map((f) => [f.id, checkingOf(f)])).toEqual([
      ['agent-1', true],
      ['agent-2', false],
      ['own-pid-waits', true],
      ['holder-waits', true],
      ['holder-elsewhere', false],
      ['both-known', false],
      ['stale', false],
    ]);
  });

  it('a gone process first seen gone here is marked goneAtFirstProbe; one seen alive before is not', () => {
    const findings = [
      row({ id: 'before-us', verdict: 'ghost', problem: true, pid: 100, evidence: { kill: 'ESRCH' } }),
      row({ id: 'seen-die', verdict: 'ghost', problem: true, pid: 200, evidence: { kill: 'ESRCH' } }),
    ];
    const out = markProgress(findings, progress({ dead: [[100, 1000], [200, 2000]], goneFirst: [100] }));
    expect(out.map((f) => [deadSinceOf(f), goneAtFirstProbeOf(f)])).toEqual([
      [1000, true],
      [2000, false],
    ]);
  });

  it('a local problem whose process is gone (ESRCH) or a zombie carries deadSince of the pid judged', () => {
    const findings = [
      row({ id: 'g', verdict: 'ghost', problem: true, pid: 100, evidence: { kill: 'ESRCH' } }),
      row({ id: 'z', verdict: 'zombie', problem: true, pid: 200, evidence: { kill: 'ok', state: 'Z' } }),
      // Judged by the port's owner, not the registered pid.
      row({ id: 'o', verdict: 'ghost', problem: true, pid: 300, evidence: { kill: 'ESRCH', port: { port: 8000, result: 'open', owner: 400 } } }),
    ];
    const out = markProgress(findings, progress({ dead: [[100, 1000], [200, 2000], [300, 3000], [400, 4000]] }));
    expect(out.map(deadSinceOf)).toEqual([1000, 2000, 4000]);
    expect(out[0]).toEqual({ ...findings[0], deadSince: 1000 });
  });

  it('no deadSince for a problem whose process lives, a remote problem, or a dead pid the engine has no time for', () => {
    const findings = [
      row({ id: 'reused', verdict: 'reused', problem: true, pid: 100, evidence: { kill: 'ok', state: 'S' } }),
      row({ id: 'remote', verdict: 'ghost', problem: true, pid: 100, evidence: { kill: 'ESRCH', host: { machine: 'laptop', local: false } } }),
      row({ id: 'unknown', verdict: 'ghost', problem: true, pid: 500, evidence: { kill: 'ESRCH' } }),
      row({ id: 'nopid', verdict: 'ghost', problem: true, evidence: { kill: 'ESRCH' } }),
      row({ id: 'fine', verdict: 'live', problem: false, pid: 100, evidence: { kill: 'ESRCH' } }),
    ];
    expect(markProgress(findings, progress({ dead: [[100, 1000]] }))).toBe(findings);
  });
});

describe('withMarks', () => {
  const session = row({ id: 's1', verdict: 'ghost', problem: true, evictable: true, reason: 'gone', note: 'n', pid: 7 });
  const claim = {
    kind: 'claim',
    source: 'hypivisor',
    id: 'repo:/w',
    holder: 's1',
    verdict: 'stale-claim',
    problem: true,
    evictable: true,
    reason: 'holder gone',
    note: 'n',
    evidence: { host: { machine: 'devbox', local: true } },
    entry: { source: 'hypivisor', resource: 'repo:/w', holder: 's1' },
  } as unknown as Finding;
  const stale = { source: 'hypivisor', since: 5, why: 'down' };

  it.each([
    ['a session', session],
    ['a claim', claim],
  ])('a copy of %s keeps every field, the same values, and adds only the marks', (_what, f) => {
    const copy = withMarks(f, { deadSince: 9 });
    expect(copy).not.toBe(f);
    for (const [k, v] of Object.entries(f)) expect([k, (copy as unknown as Record<string, unknown>)[k]]).toEqual([k, v]);
    expect(Object.keys(copy).filter((k) => !(k in f)).sort()).toEqual(['checking', 'deadSince', 'departed', 'goneAtFirstProbe', 'leftovers', 'stale']);
    expect([deadSinceOf(copy), checkingOf(copy), staleOf(copy)]).toEqual([9, false, undefined]);
  });

  it('marks already on the row stay; a mark given replaces its own; evictable only when given', () => {
    const once = withMarks(session, { evictable: false, stale });
    expect([once.evictable, staleOf(once)]).toEqual([false, stale]);
    const twice = withMarks(once, { deadSince: 3 });
    expect([twice.evictable, staleOf(twice), deadSinceOf(twice), checkingOf(twice)]).toEqual([false, stale, 3, false]);
    const thrice = withMarks(twice, { checking: true, deadSince: 4 });
    expect([staleOf(thrice), deadSinceOf(thrice), checkingOf(thrice), thrice.evictable]).toEqual([stale, 4, true, false]);
    expect(withMarks(session, {}).evictable).toBe(true);
  });
});

describe('sameFindings', () => {
  const base = [row({ id: 'a' }), row({ id: 'b', verdict: 'ghost', reason: 'gone', note: 'n' })];

  it('equal rows, even as copies: the same; another length: not', () => {
    expect(sameFindings(base, base.map((f) => ({ ...f })))).toBe(true);
    expect(sameFindings([], [])).toBe(true);
    expect(sameFindings(base, base.slice(0, 1))).toBe(false);
    expect(sameFindings(base.slice(0, 1), base)).toBe(false);
  });

  it('evidence alone changing (a new checkedAt) is not something to republish', () => {
    const later = base.map((f) => ({ ...f, evidence: { ...f.evidence, checkedAt: 99 } }));
    expect(sameFindings(base, later)).toBe(true);
  });

  it.each<[string, Partial<EngineFinding>]>([
    ['kind', { kind: 'claim' } as never],
    ['source', { source: 'agentctl' }],
    ['id', { id: 'c' }],
    ['verdict', { verdict: 'zombie' }],
    ['reason', { reason: 'gone now' }],
    ['note', { note: 'other' }],
    ['stale since', { stale: { source: 'hypivisor', since: 2, why: 'down' } }],
    ['checking', { checking: true }],
    ['deadSince', { deadSince: 5 }],
    ['goneAtFirstProbe', { goneAtFirstProbe: true }],
  ])('a row differing in %s (the last row) is a change', (_, change) => {
    const changed = [base[0]!, { ...base[1]!, ...change } as Finding];
    expect(sameFindings(base, changed)).toBe(false);
    expect(sameFindings(changed, base)).toBe(false);
  });

  it('a difference in the first row only is a change too', () => {
    expect(sameFindings(base, [{ ...base[0]!, id: 'z' }, base[1]!])).toBe(false);
  });

  it('stale marks: same since and why are the same; another since or another why is a change', () => {
    const mark = (since: number, why: string) => [row({ mark: { stale: { source: 'hypivisor', since, why } } })];
    expect(sameFindings(mark(1, 'down'), mark(1, 'down'))).toBe(true);
    expect(sameFindings(mark(1, 'down'), mark(2, 'down'))).toBe(false);
    expect(sameFindings(mark(1, 'down'), mark(1, 'refused'))).toBe(false);
    expect(sameFindings(mark(1, 'down'), [row()])).toBe(false);
    expect(sameFindings([row()], mark(1, 'down'))).toBe(false);
  });
});

describe('nextVerdictCrossing', () => {
  const pending = (ageMs: number, ttlMs: number, verdict: Finding['verdict'] = 'live', from: 'registered_at' | 'unknown' = 'registered_at') =>
    row({ verdict, evidence: { pending: { ageMs, ttlMs, from } } });
  const held = (ageMs: number, staleAfterMs: number, verdict: Finding['verdict'] = 'held') =>
    row({ kind: 'claim', verdict, evidence: { heartbeat: { at: 0, ageMs, staleAfterMs } } } as never);

  it('nothing that turns with time: undefined', () => {
    expect(nextVerdictCrossing([], 1000)).toBeUndefined();
    expect(nextVerdictCrossing([row()], 1000)).toBeUndefined();
  });

  it('a young pending entry: one millisecond after its age outlives the TTL', () => {
    expect(nextVerdictCrossing([pending(30_000, 120_000)], 1_000_000)).toBe(1_000_000 + 90_000 + 1);
  });

  it('an entry already pending, or of unknown age, never crosses', () => {
    expect(nextVerdictCrossing([pending(30_000, 120_000, 'pending')], 1000)).toBeUndefined();
    expect(nextVerdictCrossing([pending(30_000, 120_000, 'live', 'unknown')], 1000)).toBeUndefined();
  });

  it('a held claim: one millisecond after its heartbeat outlives the limit; a claim not held, never', () => {
    expect(nextVerdictCrossing([held(10_000, 60_000)], 5000)).toBe(5000 + 50_000 + 1);
    expect(nextVerdictCrossing([held(10_000, 60_000, 'stale-claim')], 5000)).toBeUndefined();
  });

  it('the earliest crossing of all, in whatever order the rows come', () => {
    const rows = [pending(0, 120_000), held(50_000, 60_000), pending(100_000, 120_000)];
    expect(nextVerdictCrossing(rows, 0)).toBe(10_001);
    expect(nextVerdictCrossing([...rows].reverse(), 0)).toBe(10_001);
    expect(nextVerdictCrossing([rows[2]!, rows[0]!], 0)).toBe(20_001);
    expect(nextVerdictCrossing([rows[0]!, rows[2]!], 0)).toBe(20_001);
  });
});

describe('markProgress over ssh', () => {
  const progress = (awaiting: { pids?: number[]; dead?: [number, number][] }): ProbeProgress => ({
    awaitingPid: (pid) => (awaiting.pids ?? []).includes(pid),
    awaitingPort: () => false,
    deadSince: (pid) => new Map(awaiting.dead ?? []).get(pid),
    goneAtFirstProbe: () => false,
  });
  const ssh = (host: string, state: 'up' | 'down' | 'connecting') => ({ host: { machine: host, local: false, ssh: { host, state, via: `via ssh ${host}` } } });

  it("a row verified over ssh is marked from its host's progress, asked by the host's name; pid 100 there is not pid 100 here", () => {
    const findings = [
      row({ id: 'u', verdict: 'unverified', pid: 100, evidence: ssh('build-1', 'up') }),
      row({ id: 'g', verdict: 'ghost', problem: true, pid: 200, evidence: { ...ssh('build-1', 'up'), kill: 'ESRCH' } }),
      row({ id: 'here', verdict: 'unverified', pid: 100 }),
    ];
    const asked: string[] = [];
    const out = markProgress(findings, progress({}), (machine) => {
      asked.push(machine);
      return machine === 'build-1' ? progress({ pids: [100], dead: [[200, 7000]] }) : undefined;
    });
    expect(asked).toEqual(['build-1', 'build-1']);
    expect(out.map(checkingOf)).toEqual([true, false, false]);
    expect(out.map(deadSinceOf)).toEqual([undefined, 7000, undefined]);
    expect(out[2]).toBe(findings[2]);
  });

  it('a host that is not up, a host with no progress, or no remote progress at all: nothing is marked', () => {
    const findings = [
      row({ id: 'down', verdict: 'unverified', pid: 100, evidence: ssh('build-1', 'down') }),
      row({ id: 'connecting', verdict: 'unverified', pid: 100, evidence: ssh('build-1', 'connecting') }),
      row({ id: 'other', verdict: 'unverified', pid: 100, evidence: ssh('build-2', 'up') }),
    ];
    const asked: string[] = [];
    const remote = (machine: string) => {
      asked.push(machine);
      return machine === 'build-1' ? progress({ pids: [100] }) : undefined;
    };
    expect(markProgress(findings, progress({ pids: [100] }), remote)).toBe(findings);
    expect(asked).toEqual(['build-2']);
    expect(markProgress(findings, progress({ pids: [100] }))).toBe(findings);
  });
});

// Rules pid domain, exact identity and one session open twice: a record naming its pid namespace
// is judged in that namespace (through the host pid NSpid gives it) or not at all; a recorded
// start (procStart) must match to the tick; two live processes carrying one session id are both
// marked.
import { describe, expect, it } from 'vitest';
import { chooseProbeTargets, localMachineTest, namespacesNamed } from '../../../src/core/probe-targets.js';
import { judgedPid, pidToProbe, placePid } from '../../../src/core/rules/pid-domain.js';
import type { Evidence, OsFacts, PidDomain, PidNamespaceFacts, SessionEntry, SessionFinding } from '../../../src/core/types.js';
import { alive, gone, HOST, NOW, one, os, run, session } from './support.js';

const MACHINE = '3d1219c7c4c5404aaa1f6d2a48adfda4';
const OWN = '4026531836';
const OTHER = '4026532999';
const domain = (ns: string, machine = MACHINE) => ({ text: `linux:${machine}:pid:[${ns}]`, machineId: machine, namespace: ns });

function nsFacts(fields: Partial<PidNamespaceFacts> = {}): PidNamespaceFacts {
  return { machineId: MACHINE, own: OWN, initial: true, blind: undefined, namespaces: new Map(), checkedAt: NOW, ...fields };
}

function claude(id: string, pid: number, fields: Partial<SessionEntry> = {}): SessionEntry {
  return session(id, { source: 'claude', status: 'idle', pid, sessionId: id, ...fields });
}

const withNs = (facts: OsFacts, ns: PidNamespaceFacts): OsFacts => ({ ...facts, pidNamespaces: ns });
const mapped = nsFacts({ namespaces: new Map([[OTHER, new Map([[2, 48213]])]]) });

// [name, entry, namespace facts, OS facts, verdict, reason, pidDomain status]
const cases: [string, SessionEntry, PidNamespaceFacts | undefined, OsFacts, string, RegExp, string | undefined][] = [
  ['no domain: our table, as always', claude('a', 2), undefined, os([alive(2)]), 'live', /^pid 2 is alive$/, undefined],
  ['our own namespace: our table', claude('a', 7, { pidDomain: domain(OWN) }), nsFacts(), os([alive(7)]), 'live', /^pid 7 is alive$/, 'this-namespace'],
  ['another namespace, mapped: judged by the host pid', claude('a', 2, { pidDomain: domain(OTHER) }), mapped, os([alive(2), alive(48213)]), 'live', /^pid 2 of pid namespace 4026532999 \(host pid 48213\) is alive$/, 'mapped'],
  ['another namespace, mapped, host pid gone', claude('a', 2, { pidDomain: domain(OTHER) }), mapped, os([alive(2), gone(48213)]), 'ghost', /host pid 48213\) is gone \(ESRCH\)/, 'mapped'],
  ['another namespace, never our pid 2 (kthreadd) alive', claude('a', 2, { pidDomain: domain(OTHER) }), nsFacts({ namespaces: new Map([[OTHER, null]]) }), os([alive(2)]), 'ghost', /^pid 2 of pid namespace 4026532999 is gone: no process is left in that namespace$/, 'namespace-gone'],
  ['namespace gone, but we do not see every process', claude('a', 2, { pidDomain: domain(OTHER) }), nsFacts({ blind: 'not root', namespaces: new Map([[OTHER, null]]) }), os([alive(2)]), 'unverified', /^no process of pid namespace 4026532999 is visible here \(not root\)$/, 'unseen'],
  ['namespace gone, but we run in a namespace of our own', claude('a', 2, { pidDomain: domain(OTHER) }), nsFacts({ initial: false, own: '4026532000', namespaces: new Map([[OTHER, null]]) }), os([alive(2)]), 'unverified', /pid namespace of its own/, 'unseen'],
  ['namespace held, pid not in it', claude('a', 3, { pidDomain: domain(OTHER) }), mapped, os([alive(3)]), 'ghost', /pid 3 of pid namespace 4026532999 is gone: no process in that namespace has it/, 'pid-not-in-namespace'],
  ['namespace held, pid not in it, blind', claude('a', 3, { pidDomain: domain(OTHER) }), { ...mapped, blind: '/proc is mounted with hidepid=2' }, os([alive(3)]), 'unverified', /hidepid=2/, 'unseen'],
  ['namespace not read yet', claude('a', 2, { pidDomain: domain(OTHER) }), nsFacts(), os([alive(2)]), 'unverified', /has not been read yet/, 'unseen'],
  ['no namespace facts at all', claude('a', 2, { pidDomain: domain(OTHER) }), undefined, os([alive(2)]), 'unverified', /has not been read yet/, 'unseen'],
  ['another machine', claude('a', 2, { pidDomain: domain(OTHER, 'f'.repeat(32)) }), mapped, os([alive(2)]), 'unverified', /another machine's pid table/, 'other-machine'],
  ['our machine-id unknown', claude('a', 2, { pidDomain: domain(OWN) }), nsFacts({ machineId: undefined }), os([alive(2)]), 'unverified', /machine-id is unknown/, 'unseen'],
  ['an unreadable domain', claude('a', 2, { pidDomain: { text: 'darwin:x', unreadable: 'not linux' } }), mapped, os([alive(2)]), 'unverified', /cannot be read \(not linux\)/, 'unreadable'],
  ['a container init (pid 1) mapped', claude('a', 1, { pidDomain: domain(OTHER) }), nsFacts({ namespaces: new Map([[OTHER, new Map([[1, 5000]])]]) }), os([alive(5000)]), 'live', /pid 1 of pid namespace 4026532999 \(host pid 5000\) is alive/, 'mapped'],
  ['one pid table (macOS): a record written here is judged as any pid', claude('a', 7, { pidDomain: { text: 'darwin:x', unreadable: 'not linux' } }), nsFacts({ flat: true, machineId: undefined, own: undefined }), os([alive(7)]), 'live', /^pid 7 is alive$/, 'this-namespace'],
  ['one pid table (macOS): a Linux namespace is another machine\'s', claude('a', 7, { pidDomain: domain(OTHER) }), nsFacts({ flat: true }), os([alive(7)]), 'unverified', /this host has no such namespace/, 'other-machine'],
  ['a pid that is no process number', claude('a', -4, { pidDomain: domain(OTHER) }), mapped, os(), 'unverified', /not a process number/, 'unreadable'],
];

describe('rule: pid domain', () => {
  it.each(cases)('%s', (_name, entry, ns, facts, verdict, reason, status) => {
    const f = one(run([entry], ns ? withNs(facts, ns) : facts), entry.id) as SessionFinding;
    expect(f.verdict).toBe(verdict);
    expect(f.reason).toMatch(reason);
    expect(f.evidence.pidDomain?.status).toBe(status);
  });

  it('names both pids and the namespace in the evidence', () => {
    const f = one(run([claude('a', 2, { pidDomain: domain(OTHER) })], withNs(os([alive(48213)]), mapped)), 'a') as SessionFinding;
    expect(f.evidence.pidDomain).toEqual({ domain: `linux:${MACHINE}:pid:[${OTHER}]`, machineId: MACHINE, namespace: OTHER, nsPid: 2, hostPid: 48213, status: 'mapped' });
    expect(judgedPid(f.entry, f.evidence)).toBe(48213);
  });

  it('probes the host pid of a mapped record, nothing for an unplaced one, the pid itself otherwise', () => {
    const isLocal = localMachineTest(HOST, []);
    const view = {
      sessions: [claude('a', 2, { pidDomain: domain(OTHER) }), claude('b', 9, { pidDomain: domain(OWN) }), claude('c', 11), claude('d', 3, { pidDomain: domain('4026532555') })],
      claims: [],
    };
    expect([...chooseProbeTargets(view, isLocal, mapped).pids].sort()).toEqual([11, 48213, 9]);
    expect([...chooseProbeTargets(view, isLocal, undefined).pids].sort()).toEqual([11]);
    expect([...namespacesNamed(view, isLocal)].sort()).toEqual([OWN, '4026532555', OTHER]);
    expect([...namespacesNamed({ sessions: [claude('m', 3, { pidDomain: { text: 'darwin:x', unreadable: 'not linux' } })], claims: [] }, isLocal)]).toEqual(['']);
    expect(pidToProbe(claude('x', 4), undefined)).toBe(4);
    expect(placePid(claude('x', 4), undefined)).toEqual({ kind: 'ours' });
  });

  it('never makes two containers\' pid 2 siblings of one process (superseded is by host pid)', () => {
    const ns2 = '4026532888';
    const facts = withNs(os([alive(48213), alive(48300)]), nsFacts({ namespaces: new Map([[OTHER, new Map([[2, 48213]])], [ns2, new Map([[2, 48300]])]]) }));
    const findings = run([claude('a', 2, { pidDomain: domain(OTHER), registeredAt: NOW - 5000 }), claude('b', 2, { pidDomain: domain(ns2), registeredAt: NOW - 1000 })], facts);
    expect(findings.map((f) => f.verdict)).toEqual(['live', 'live']);
    // Two records mapped to one host pid do share it.
    const same = withNs(os([alive(48213)]), nsFacts({ namespaces: new Map([[OTHER, new Map([[2, 48213], [3, 48213]])]]) }));
    const shared = run([claude('a', 2, { pidDomain: domain(OTHER), registeredAt: NOW - 5000, sessionId: 'x' }), claude('b', 3, { pidDomain: domain(OTHER), registeredAt: NOW - 1000, sessionId: 'y' })], same);
    expect(shared.map((f) => f.verdict)).toEqual(['superseded', 'live']);
    expect(shared[0]!.reason).toMatch(/^pid 48213 is alive but belongs to the newer entry b/);
  });
});

describe('rule: exact identity (procStart)', () => {
  const REG = NOW - 600_000;
  it('a process with exactly the recorded start is live, even when the record was written 18 s after it started', () => {
    const f = one(run([claude('a', 7, { pidStartTicks: 97090, registeredAt: REG })], os([alive(7, { startTicks: 97090, startedAt: REG + 18_000 })])), 'a');
    expect(f.verdict).toBe('live');
    expect(f.evidence.startTicks).toEqual({ recorded: 97090, process: 97090 });
    expect(f.evidence.start).toBeUndefined();
  });

  it('any other start is a recycled pid, with no slack', () => {
    const f = one(run([claude('a', 7, { pidStartTicks: 97090, registeredAt: REG })], os([alive(7, { startTicks: 97091, startedAt: REG - 60_000 })])), 'a');
    expect(f.verdict).toBe('reused');
    expect(f.reason).toBe('pid 7 belongs to a process that started at tick 97091 after boot, not 97090 as recorded: the pid was recycled');
  });

  it('without the process\'s ticks (macOS, hidepid) the slack rule stands', () => {
    expect(one(run([claude('a', 7, { pidStartTicks: 97090, registeredAt: REG })], os([alive(7, { startedAt: REG + 60_000 })])), 'a').verdict).toBe('reused');
    expect(one(run([claude('a', 7, { pidStartTicks: 97090, registeredAt: REG })], os([alive(7, { startedAt: REG - 60_000 })])), 'a').verdict).toBe('live');
  });

  it('a mapped record is checked against its host process\'s ticks', () => {
    const f = one(run([claude('a', 2, { pidDomain: domain(OTHER), pidStartTicks: 500 })], withNs(os([alive(48213, { startTicks: 501 })]), mapped)), 'a');
    expect(f.verdict).toBe('reused');
    expect(f.reason).toMatch(/^pid 2 of pid namespace 4026532999 \(host pid 48213\) belongs to a process that started at tick 501/);
  });
});

describe('rule: one session open twice', () => {
  it('marks both live processes of one session id, each naming the other', () => {
    const findings = run([claude('s1', 10, { sessionId: 'S' }), claude('s1~11.json', 11, { sessionId: 'S' }), claude('other', 12)], os([alive(10), alive(11), alive(12)]));
    const [a, b, c] = findings as SessionFinding[];
    expect(a!.verdict).toBe('live');
    expect(a!.note).toBe('also open in pid 11');
    expect(a!.reason).toMatch(/this session is also open in pid 11: two processes write one transcript$/);
    expect(a!.evidence.alsoOpenIn).toEqual([11]);
    expect(a!.evictable).toBe(false);
    expect(b!.note).toBe('also open in pid 10');
    expect(b!.evidence.alsoOpenIn).toEqual([10]);
    expect(c!.note).toBeUndefined();
    expect(c!.evidence.alsoOpenIn).toBeUndefined();
  });

  it('a dead copy is a ghost, not a second open; other sources do not count; three name the two others', () => {
    const dead = run([claude('s1', 10, { sessionId: 'S' }), claude('s1~11.json', 11, { sessionId: 'S' })], os([alive(10), gone(11)]));
    expect(dead.map((f) => [f.verdict, f.note])).toEqual([['live', undefined], ['ghost', undefined]]);
    const apart = run([claude('s1', 10, { sessionId: 'S' }), claude('s1', 11, { sessionId: 'S', source: 'claude:work' })], os([alive(10), alive(11)]));
    expect(apart.map((f) => f.note)).toEqual([undefined, undefined]);
    const three = run([claude('a', 10, { sessionId: 'S' }), claude('b', 11, { sessionId: 'S' }), claude('c', 12, { sessionId: 'S' })], os([alive(10), alive(11), alive(12)]));
    expect(three.map((f) => f.note)).toEqual(['also open in pids 11, 12', 'also open in pids 10, 12', 'also open in pids 10, 11']);
  });
});

describe('placing a pid, case by case', () => {
  const entry = (pid: unknown, d: PidDomain = domain(OTHER)) => claude('a', 0, { pid, pidDomain: d });
  const nsWith = (pids: [number, number][]) => nsFacts({ namespaces: new Map([[OTHER, new Map(pids)]]) });

  it('maps only process numbers of that namespace: 1 up to the kernel\'s pid limit', () => {
    const all = nsWith([[1, 501], [4_194_304, 502]]);
    expect(placePid(entry(1), all)).toEqual({ kind: 'mapped', pid: 501, nsPid: 1, namespace: OTHER });
    expect(placePid(entry(4_194_304), all)).toEqual({ kind: 'mapped', pid: 502, nsPid: 4_194_304, namespace: OTHER });
    for (const bad of [0, -1, 4_194_305, 1.5, '2', null, Number.NaN]) {
      expect(placePid(entry(bad), all), String(bad)).toMatchObject({ kind: 'unplaced', verdict: 'unverified', reason: expect.stringMatching(/is not a process number in pid namespace/) });
    }
  });

  it('a domain without its machine or its namespace is unreadable, whatever else it says', () => {
    for (const d of [{ text: 'x', namespace: OTHER }, { text: 'x', machineId: MACHINE }, { text: 'x', machineId: MACHINE, namespace: OTHER, unreadable: 'odd' }]) {
      const evidence: { pidDomain?: Evidence['pidDomain'] } = {};
      expect(placePid(entry(2, d), mapped, evidence)).toMatchObject({ kind: 'unplaced', verdict: 'unverified', reason: expect.stringMatching(/^its pid domain "x" cannot be read/) });
      expect(evidence.pidDomain).toMatchObject({ status: 'unreadable' });
    }
  });

  it('what the probes watch and what a finding was judged by', () => {
    const gone = nsFacts({ namespaces: new Map([[OTHER, null]]) });
    expect(pidToProbe(entry(2), mapped)).toBe(48213);
    expect(pidToProbe(entry(2), gone)).toBeUndefined();
    expect(pidToProbe(entry(2, domain(OWN)), mapped)).toBe(2);
    const judged = (status: string, hostPid?: number) => judgedPid(claude('a', 7), { host: { machine: HOST, local: true }, pidDomain: { domain: 'd', nsPid: 7, hostPid, status: status as 'mapped' } });
    expect(judged('mapped', 900)).toBe(900);
    expect(judged('this-namespace')).toBe(7);
    for (const s of ['namespace-gone', 'pid-not-in-namespace', 'unseen', 'other-machine', 'unreadable']) expect(judged(s)).toBeUndefined();
    expect(judgedPid(claude('a', 7), { host: { machine: HOST, local: true } })).toBe(7);
    expect(judgedPid(claude('a', 1), { host: { machine: HOST, local: true } })).toBeUndefined();
  });

  it('one session open twice counts only live rows with a pid judged here', () => {
    // Live by a port (no pid) and a superseded copy carry the session id but open nothing here.
    const findings = run(
      [claude('a', 10, { sessionId: 'S' }), session('b', { source: 'claude', sessionId: 'S', port: 8080 }), claude('c', 11, { sessionId: 'S', pidDomain: domain(OTHER) })],
      withNs(os([alive(10)], [{ port: 8080, result: 'open', checkedAt: NOW }]), nsFacts({ namespaces: new Map([[OTHER, null]]) })),
    );
    expect(findings.map((f) => [f.verdict, f.note])).toEqual([['live', undefined], ['live', undefined], ['ghost', undefined]]);
  });
});

describe('the edges of those two rules', () => {
  it('a record without procStart is judged by the slack rule even when the process\'s ticks are known', () => {
    const f = one(run([claude('a', 7, { registeredAt: NOW - 600_000 })], os([alive(7, { startTicks: 123, startedAt: NOW - 3_600_000 })])), 'a');
    expect(f.verdict).toBe('live');
    expect(f.evidence.startTicks).toBeUndefined();
    expect(f.evidence.start).toMatchObject({ reference: 'registered_at' });
  });

  it('entries without a session id are never one session', () => {
    const findings = run([session('a', { pid: 10 }), session('b', { pid: 11 })], os([alive(10), alive(11)]));
    expect(findings.map((f) => [f.note, f.evidence.alsoOpenIn])).toEqual([[undefined, undefined], [undefined, undefined]]);
  });
});

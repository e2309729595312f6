import { describe, expect, it } from 'vitest';
import { defaultPolicy, VERDICT_TRAITS, type Finding, type OsFacts, type Policy, type SessionEntry } from '../../src/core/index.js';
import { alive, claim, gone, HOST, NOW, one, os, pidFacts, POLICY, port, run, session } from './fixtures.js';

interface Case {
  name: string;
  sessions: SessionEntry[];
  facts?: OsFacts;
  policy?: Policy;
  now?: number;
  id?: string;
  verdict: Finding['verdict'];
  note?: string;
  reason?: RegExp;
}

const REGISTERED = NOW - 600_000; // ten minutes ago
const MIN = 60_000;

function table(cases: Case[]): void {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const findings = run(c.sessions, c.facts ?? os(), { ...(c.policy ? { policy: c.policy } : {}), ...(c.now ? { now: c.now } : {}) });
    const f = one(findings, c.id ?? c.sessions[0]!.id);
    expect(f.verdict).toBe(c.verdict);
    expect(f.problem).toBe(VERDICT_TRAITS[c.verdict].problem);
    expect(f.evictable).toBe(VERDICT_TRAITS[c.verdict].evictable);
    if (c.note !== undefined) expect(f.note).toBe(c.note);
    else if (c.verdict !== 'live') expect(f.note === undefined || f.note === 'shared pid').toBe(true);
    if (c.reason) expect(f.reason).toMatch(c.reason);
    expect(f.reason.length).toBeGreaterThan(0);
    expect(f.reason).not.toMatch(/\n/);
  });
}

describe('live', () => {
  table([
    { name: 'alive pid that started before registration', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([alive(4242)]), verdict: 'live', reason: /pid 4242 is alive/ },
    { name: 'alive by kill but hidden from /proc (hidepid): live, details hidden, never a ghost', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([pidFacts(4242, 'EPERM', { detailsHidden: '/proc/4242 is hidden from this user (ENOENT: hidepid)' })]), verdict: 'live', note: 'details hidden', reason: /EPERM.*details hidden \(hidepid\)/ },
    { name: 'EPERM means alive, owned by another user', sessions: [session('a', { pid: 4242 })], facts: os([pidFacts(4242, 'EPERM', { state: 'S' })]), verdict: 'live', reason: /EPERM/ },
    { name: 'no pid, something listens on the port', sessions: [session('a', { port: 8080 })], facts: os([], [port(8080, 'open')]), verdict: 'live', reason: /port 8080/ },
    { name: 'entry says the FQDN, this host is the short name', sessions: [session('a', { pid: 4242, machine: 'devbox.corp.example.com' })], facts: os([alive(4242)]), verdict: 'live' },
    { name: 'entry says the short name, this host is the FQDN', sessions: [session('a', { pid: 4242, machine: 'DevBox' })], facts: os([alive(4242)]), policy: defaultPolicy('devbox.corp.example.com'), verdict: 'live' },
    { name: 'host names differ only in case and a trailing dot', sessions: [session('a', { pid: 4242, machine: 'DEVBOX.' })], facts: os([alive(4242)]), verdict: 'live' },
    { name: 'a configured alias counts as this host', sessions: [session('a', { pid: 4242, machine: 'builder-7' })], facts: os([alive(4242)]), policy: defaultPolicy(HOST, { hostAliases: ['builder-7'] }), verdict: 'live' },
    { name: 'start time within the tolerance of registered_at', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([alive(4242, { startedAt: REGISTERED + 1_500 })]), verdict: 'live' },
    { name: 'start time equal to pid_started_at', sessions: [session('a', { pid: 4242, pidStartedAt: REGISTERED - 5_000, registeredAt: REGISTERED })], facts: os([alive(4242, { startedAt: REGISTERED - 5_000 })]), verdict: 'live' },
    { name: 'no start time known yet (kill-only probe): alive is live', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([pidFacts(4242, 'ok')]), verdict: 'live' },
    { name: 'registry clock 5 minutes behind, offset known: a real agent stays live', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED - 5 * MIN })], facts: os([alive(4242, { startedAt: REGISTERED - 1_000 })]), policy: defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: -5 * MIN } }), verdict: 'live' },
    { name: 'registry clock 5 minutes ahead: a real agent stays live', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED + 5 * MIN })], facts: os([alive(4242, { startedAt: REGISTERED - 1_000 })]), verdict: 'live' },
    { name: 'two entries in one cwd with different pids are both live', id: 'b', sessions: [session('a', { pid: 4242, cwd: '/repo' }), session('b', { pid: 4243, cwd: '/repo' })], facts: os([alive(4242), alive(4243)]), verdict: 'live' },
    { name: 'one pid seen by two sources is not superseded', id: 'a', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED }), session('a-claude', { source: 'claude', pid: 4242, registeredAt: REGISTERED + 1000 })], facts: os([alive(4242)]), verdict: 'live' },
  ]);
});

describe('ghost', () => {
  table([
    { name: 'pid is gone (ESRCH)', sessions: [session('a', { pid: 4242 })], facts: os([gone(4242)]), verdict: 'ghost', reason: /ESRCH/ },
    { name: 'no pid and nothing listens on the port', sessions: [session('a', { port: 8080 })], facts: os([], [port(8080, 'refused')]), verdict: 'ghost', reason: /nothing listens on port 8080/ },
    { name: 'a pid above pid_max that the kernel says is gone', sessions: [session('a', { pid: 4_194_305 })], facts: os([gone(4_194_305)]), verdict: 'ghost' },
    { name: 'FQDN entry, gone', sessions: [session('a', { pid: 4242, machine: 'devbox.lan' })], facts: os([gone(4242)]), verdict: 'ghost' },
  ]);
});

describe('zombie', () => {
  table([
    { name: 'pid exists but is defunct (state Z)', sessions: [session('a', { pid: 4242 })], facts: os([alive(4242, { state: 'Z' })]), verdict: 'zombie', reason: /zombie/ },
    { name: 'EPERM zombie is still a zombie', sessions: [session('a', { pid: 4242 })], facts: os([pidFacts(4242, 'EPERM', { state: 'Z' })]), verdict: 'zombie' },
    { name: 'zombie wins over a recycled-looking start time', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([alive(4242, { state: 'Z', startedAt: NOW - 1000 })]), verdict: 'zombie' },
  ]);
});

describe('reused', () => {
  table([
    { name: 'process started after registered_at', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([alive(4242, { startedAt: REGISTERED + 60_000 })]), verdict: 'reused', reason: /after the entry was registered/ },
    { name: 'process started after pid_started_at', sessions: [session('a', { pid: 4242, pidStartedAt: REGISTERED - 1000 })], facts: os([alive(4242, { startedAt: NOW - 1000 })]), verdict: 'reused', reason: /registered process started/ },
    { name: 'process started after ghostwatch first saw the entry', sessions: [session('a', { pid: 4242, firstObservedAt: NOW - 30_000 })], facts: os([alive(4242, { startedAt: NOW - 5_000 })]), verdict: 'reused', reason: /first saw/ },
    { name: 'pid_started_at wins over registered_at', sessions: [session('a', { pid: 4242, pidStartedAt: NOW - 2 * MIN, registeredAt: NOW - 10_000 })], facts: os([alive(4242, { startedAt: NOW - 60_000 })]), verdict: 'reused' },
    { name: 'registry clock 5 minutes ahead, offset known: a recycled pid is caught', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED + 5 * MIN })], facts: os([alive(4242, { startedAt: REGISTERED + 60_000 })]), policy: defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: 5 * MIN } }), verdict: 'reused' },
    { name: 'EPERM process with a later start time', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED })], facts: os([pidFacts(4242, 'EPERM', { state: 'S', startedAt: NOW - 1000 })]), verdict: 'reused' },
  ]);
});

describe('superseded', () => {
  const shared = os([alive(4242)]);
  table([
    { name: 'older registration by registered_at', id: 'old', sessions: [session('old', { pid: 4242, registeredAt: REGISTERED }), session('new', { pid: 4242, registeredAt: REGISTERED + 1000 })], facts: shared, verdict: 'superseded', reason: /newer entry new .*registered at/ },
    { name: 'newest registration stays live', id: 'new', sessions: [session('old', { pid: 4242, registeredAt: REGISTERED }), session('new', { pid: 4242, registeredAt: REGISTERED + 1000 })], facts: shared, verdict: 'live', reason: /newest of 2/ },
    { name: 'by join order when registered_at is missing', id: 'first', sessions: [session('first', { pid: 4242, joinSeq: 3, lastSeen: NOW }), session('second', { pid: 4242, joinSeq: 7, lastSeen: NOW - 5000 })], facts: shared, verdict: 'superseded', reason: /join order/ },
    { name: 'by last_seen when neither is known', id: 'stale', sessions: [session('stale', { pid: 4242, lastSeen: NOW - 40_000 }), session('fresh', { pid: 4242, lastSeen: NOW - 1000 })], facts: shared, verdict: 'superseded', reason: /last seen/ },
    { name: 'registered_at on only one entry falls back to join order', id: 'b', sessions: [session('a', { pid: 4242, registeredAt: NOW, joinSeq: 9 }), session('b', { pid: 4242, joinSeq: 2 })], facts: shared, verdict: 'superseded' },
    { name: 'three on one pid: the middle one is superseded too', id: 'mid', sessions: [session('old', { pid: 4242, registeredAt: REGISTERED }), session('mid', { pid: 4242, registeredAt: REGISTERED + 1 }), session('new', { pid: 4242, registeredAt: REGISTERED + 2 })], facts: shared, verdict: 'superseded' },
    { name: 'a young pending placeholder is superseded by its real entry', id: 'pending-4242', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 10_000 }), session('real', { pid: 4242, registeredAt: NOW - 2_000 })], facts: shared, verdict: 'superseded' },
    { name: 'tie in last_seen: neither is called superseded', id: 'x', sessions: [session('x', { pid: 4242, lastSeen: NOW - 1000 }), session('y', { pid: 4242, lastSeen: NOW - 1000 })], facts: shared, verdict: 'live', note: 'shared pid', reason: /cannot tell|nothing tells/ },
    { name: 'tie in join order falls through to last_seen', id: 'x', sessions: [session('x', { pid: 4242, joinSeq: 0, lastSeen: NOW - 9000 }), session('y', { pid: 4242, joinSeq: 0, lastSeen: NOW })], facts: shared, verdict: 'superseded' },
    { name: 'nothing to order by: both live, flagged as a shared pid', id: 'x', sessions: [session('x', { pid: 4242 }), session('y', { pid: 4242 })], facts: shared, verdict: 'live', note: 'shared pid' },
  ]);
});

describe('pending', () => {
  const ttl = POLICY.pendingTtlMs;
  table([
    { name: 'older than the TTL, pid alive', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - ttl - 1 })], facts: os([alive(4242)]), verdict: 'pending', reason: /never resolved/ },
    { name: 'exactly at the TTL is still resolving', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - ttl })], facts: os([alive(4242)]), verdict: 'live', note: 'resolving' },
    { name: 'young with a live pid is live, resolving', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 5_000 })], facts: os([alive(4242)]), verdict: 'live', note: 'resolving', reason: /placeholder, 5s old/ },
    { name: 'young but its pid is dead', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 5_000 })], facts: os([gone(4242)]), verdict: 'pending', reason: /ESRCH/ },
    { name: 'young but its pid is a zombie', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 5_000 })], facts: os([alive(4242, { state: 'Z' })]), verdict: 'pending' },
    { name: 'age from first observed when registered_at is missing', sessions: [session('pending-4242', { pid: 4242, firstObservedAt: NOW - ttl - 5_000 })], facts: os([alive(4242)]), verdict: 'pending' },
    { name: 'age from last_seen as the last resort', sessions: [session('pending-4242', { pid: 4242, lastSeen: NOW - ttl - 5_000 })], facts: os([alive(4242)]), verdict: 'pending' },
    { name: 'registry clock minutes ahead (registered_at in the future): not old', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW + 3 * MIN })], facts: os([alive(4242)]), verdict: 'live', note: 'resolving', reason: /0ms old/ },
    { name: 'registry clock 10 minutes behind, offset known: still young', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 10 * MIN - 5_000 })], facts: os([alive(4242)]), policy: defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: -10 * MIN } }), verdict: 'live', note: 'resolving' },
    { name: 'no age at all and a live pid: resolving, never old', sessions: [session('pending-4242', { pid: 4242 })], facts: os([alive(4242)]), verdict: 'live', note: 'resolving', reason: /age unknown/ },
    { name: 'no pid, nothing on its port', sessions: [session('pending-x', { port: 9001, registeredAt: NOW - 1000 })], facts: os([], [port(9001, 'refused')]), verdict: 'pending' },
    { name: 'young and not checkable stays unverified', sessions: [session('pending-x', { registeredAt: NOW - 1000 })], verdict: 'unverified', note: 'resolving' },
  ]);
});

describe('offline', () => {
  table([
    { name: 'the registry marks it offline', sessions: [session('a', { pid: 4242, offline: true, status: 'offline', offlineSince: NOW - 20_000 })], facts: os([alive(4242)]), verdict: 'offline', reason: /offline for 20s/ },
    { name: 'offline on another host', sessions: [session('a', { machine: 'other', offline: true })], verdict: 'offline' },
    { name: 'offline pending placeholder is offline', sessions: [session('pending-1', { offline: true, registeredAt: NOW - 10 * MIN })], verdict: 'offline' },
  ]);
  it('keeps what the local check said as evidence, beside the registry status', () => {
    const f = one(run([session('a', { pid: 4242, offline: true, status: 'offline' })], os([gone(4242)])), 'a');
    expect(f.evidence.underlying).toBe('ghost');
    expect(f.evidence.kill).toBe('ESRCH');
    expect(f.evidence.registry).toEqual({ status: 'offline', offlineSince: undefined });
  });
});

// A killed pi closes its socket: the registry says offline at once and sweeps ~40 s later.
// The process being gone is what decides; the registry's "offline" is only the first half.
describe('offline, and the OS says the process is gone', () => {
  const offline = { offline: true, status: 'offline', offlineSince: NOW - 20_000 } as const;
  table([
    { name: 'offline and its pid is gone: ghost, naming both facts', sessions: [session('a', { pid: 4242, ...offline })], facts: os([gone(4242)]), verdict: 'ghost', reason: /^registry: offline since \d\d:\d\d:\d\d UTC; OS: pid 4242 is gone \(ESRCH\)$/ },
    { name: 'offline and its pid is a zombie', sessions: [session('a', { pid: 4242, ...offline })], facts: os([pidFacts(4242, 'ok', { state: 'Z' })]), verdict: 'zombie', reason: /registry: offline since .*; OS: pid 4242 is a zombie/ },
    { name: 'offline and its pid was recycled', sessions: [session('a', { pid: 4242, registeredAt: REGISTERED, ...offline })], facts: os([alive(4242, { startedAt: REGISTERED + 5 * MIN })]), verdict: 'reused', reason: /registry: offline.*recycled/ },
    { name: 'offline with no time of going offline', sessions: [session('a', { pid: 4242, offline: true })], facts: os([gone(4242)]), verdict: 'ghost', reason: /^registry: offline; OS: pid 4242 is gone/ },
    { name: 'offline and alive: may reconnect, stays offline', sessions: [session('a', { pid: 4242, ...offline })], facts: os([alive(4242)]), verdict: 'offline', reason: /offline for 20s/ },
    { name: 'offline and alive as another user (EPERM): offline', sessions: [session('a', { pid: 4242, ...offline })], facts: os([pidFacts(4242, 'EPERM', { state: 'S' })]), verdict: 'offline' },
    { name: 'offline and the probe failed: offline, never a problem', sessions: [session('a', { pid: 4242, ...offline })], facts: os([pidFacts(4242, 'error', { error: 'EINVAL' })]), verdict: 'offline' },
    { name: 'offline and not probed yet: offline', sessions: [session('a', { pid: 4242, ...offline })], verdict: 'offline' },
    { name: 'offline, no pid, nothing on its port: ghost', sessions: [session('a', { port: 8080, ...offline })], facts: os([], [port(8080, 'refused')]), verdict: 'ghost', reason: /registry: offline since .*; OS: .*nothing listens on port 8080/ },
    { name: 'offline, no pid, its port answers: offline', sessions: [session('a', { port: 8080, ...offline })], facts: os([], [port(8080, 'open')]), verdict: 'offline' },
    { name: 'offline, no pid, port probe timed out: offline', sessions: [session('a', { port: 8080, ...offline })], facts: os([], [port(8080, 'timeout')]), verdict: 'offline' },
    { name: 'a record the registry keeps as ended (agentctl stopped) stays offline, pid gone or not', sessions: [session('a', { pid: 4242, ...offline, status: 'stopped', ended: true })], facts: os([gone(4242)]), verdict: 'offline' },
    { name: 'offline on another host, whatever this host says of that pid', sessions: [session('a', { pid: 4242, machine: 'elsewhere', ...offline })], facts: os([gone(4242)]), verdict: 'offline' },
    { name: 'an offline placeholder whose pid is gone is a dead pending', sessions: [session('pending-4242', { pid: 4242, registeredAt: NOW - 10_000, ...offline })], facts: os([gone(4242)]), verdict: 'pending', reason: /process is dead: registry: offline/ },
  ]);
  it('uses the formatter the policy gives for the moment it went offline', () => {
    const policy = defaultPolicy(HOST, { clockText: (ms) => `T${ms}` });
    const f = one(run([session('a', { pid: 4242, ...offline })], os([gone(4242)]), { policy }), 'a');
    expect(f.reason).toBe(`registry: offline since T${NOW - 20_000}; OS: pid 4242 is gone (ESRCH)`);
  });
  it('converts the registry clock before naming the moment', () => {
    const policy = defaultPolicy(HOST, { clockText: (ms) => `T${ms}`, registryClockOffsetMs: { hypivisor: 3_000 } });
    const f = one(run([session('a', { pid: 4242, ...offline })], os([gone(4242)]), { policy }), 'a');
    expect(f.reason).toContain(`since T${NOW - 23_000};`);
  });
  it('a claim held by an offline ghost is stale', () => {
    const findings = run([session('h', { pid: 4242, ...offline })], os([gone(4242)]), { claims: [claim('repo', { holder: 'h' })] });
    expect(findings.find((f) => f.kind === 'claim')?.verdict).toBe('stale-claim');
  });
});

describe('remote', () => {
  table([
    { name: 'another host', sessions: [session('a', { machine: 'laptop', pid: 4242 })], facts: os([gone(4242)]), verdict: 'remote', reason: /laptop/ },
    { name: 'same first label, different domains', sessions: [session('a', { machine: 'devbox.b.com', pid: 4242 })], facts: os([gone(4242)]), policy: defaultPolicy('devbox.a.com'), verdict: 'remote' },
    { name: 'an IP literal is not split at its dots', sessions: [session('a', { machine: '10.0.0.5', pid: 4242 })], facts: os([gone(4242)]), policy: defaultPolicy('10'), verdict: 'remote' },
    { name: 'a host name with an escape sequence is shown inert', sessions: [session('a', { machine: 'evil\u001b]0;pwned\u0007', pid: 4242 })], verdict: 'remote', reason: /evil\^\[\]0;pwned\^G/ },
  ]);
});

describe('unverified', () => {
  const noPort = (pid: unknown, label: string): Case => ({
    name: `pid ${label} is never used`,
    sessions: [session('a', { pid })],
    facts: os([gone(0), gone(1), gone(-5)]),
    verdict: 'unverified',
  });
  table([
    noPort(0, '0'),
    noPort(1, '1'),
    noPort(-5, 'negative'),
    noPort(12.5, 'float'),
    noPort('4242', 'string'),
    noPort(Number.NaN, 'NaN'),
    noPort(2 ** 40, 'huge'),
    noPort(null, 'null'),
    { name: 'local, no pid and no port', sessions: [session('a')], verdict: 'unverified', reason: /nothing to check/ },
    { name: 'pid not probed yet', sessions: [session('a', { pid: 4242 })], verdict: 'unverified', reason: /not been probed/ },
    { name: 'kill failed with an unexpected error', sessions: [session('a', { pid: 4242 })], facts: os([pidFacts(4242, 'error', { error: 'EINVAL' })]), verdict: 'unverified', reason: /EINVAL/ },
    { name: 'port probe timed out', sessions: [session('a', { port: 8080 })], facts: os([], [port(8080, 'timeout')]), verdict: 'unverified', reason: /timeout/ },
    { name: 'port probe errored', sessions: [session('a', { port: 8080 })], facts: os([], [port(8080, 'error', 'EMFILE')]), verdict: 'unverified', reason: /EMFILE/ },
    { name: 'port not probed yet', sessions: [session('a', { port: 8080 })], verdict: 'unverified' },
    { name: 'an unusable pid falls back to the port', sessions: [session('a', { pid: 0, port: 8080 })], facts: os([], [port(8080, 'refused')]), verdict: 'ghost' },
    { name: 'a port out of range is not probed', sessions: [session('a', { port: 70_000 })], verdict: 'unverified' },
    { name: 'no host named', sessions: [session('a', { machine: undefined, pid: 4242 })], facts: os([gone(4242)]), verdict: 'unverified', reason: /names no host/ },
    { name: 'process older than its registered start time', sessions: [session('a', { pid: 4242, pidStartedAt: NOW - 1000 })], facts: os([alive(4242, { startedAt: NOW - 3_600_000 })]), verdict: 'unverified', reason: /identity unclear/ },
  ]);
  it('records why a pid was not used', () => {
    const f = one(run([session('a', { pid: 1 })]), 'a');
    expect(f.evidence.pid).toEqual({ value: null, raw: 1, unusable: 'pid 1 is init, never an agent' });
  });
});

describe('claims', () => {
  const live = session('holder', { pid: 4242 });
  const dead = session('holder', { pid: 4242 });
  const cases: { name: string; sessions: SessionEntry[]; facts: OsFacts; claim: Parameters<typeof run>[2]; verdict: string; reason?: RegExp }[] = [
    { name: 'holder is live: held', sessions: [live], facts: os([alive(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'held', reason: /held by holder, which is live/ },
    { name: 'holder missing from the registry: stale', sessions: [], facts: os(), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'nobody' }] }, verdict: 'stale-claim', reason: /not in the registry/ },
    { name: 'holder is a ghost: stale', sessions: [dead], facts: os([gone(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim', reason: /holder holder is ghost/ },
    { name: 'holder offline and its pid is gone: stale', sessions: [session('holder', { pid: 4242, offline: true })], facts: os([gone(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim', reason: /offline/ },
    { name: 'the claim\'s own pid is dead: stale', sessions: [live], facts: os([alive(4242), gone(5151)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder', pid: 5151 }] }, verdict: 'stale-claim', reason: /5151 is gone/ },
    { name: 'remote holder: held, not checked here', sessions: [session('holder', { machine: 'laptop', pid: 4242 })], facts: os([gone(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder', pid: 4242 }] }, verdict: 'held', reason: /remote/ },
    { name: 'no holder and a live local pid: held', sessions: [], facts: os([alive(6000)]), claim: { claims: [{ source: 'agentctl', resource: '/repo', pid: 6000, machine: HOST }] }, verdict: 'held' },
    { name: 'no holder and a dead local pid: stale', sessions: [], facts: os([gone(6000)]), claim: { claims: [{ source: 'agentctl', resource: '/repo', pid: 6000, machine: HOST }] }, verdict: 'stale-claim' },
    { name: 'holder only in another source, the very same id: linked there', sessions: [session('holder', { source: 'claude', pid: 4242 })], facts: os([alive(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'held', reason: /held by holder \(in claude\), which is live/ },
    { name: 'holder in another source is a ghost: stale, saying where', sessions: [session('holder', { source: 'claude', pid: 4242 })], facts: os([gone(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim', reason: /holder holder \(in claude\) is ghost/ },
    { name: 'the claim\'s own source wins over another with the same id', sessions: [session('holder', { source: 'claude', pid: 4242 }), session('holder', { pid: 5151 })], facts: os([alive(4242), gone(5151)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim', reason: /holder holder is ghost/ },
    { name: 'two other sources have that id, one alive: linked to the live one', sessions: [session('holder', { source: 'claude', pid: 5151 }), session('holder', { source: 'agentctl', pid: 4242 })], facts: os([alive(4242), gone(5151)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'held', reason: /held by holder \(in agentctl\), which is live/ },
    { name: 'two other sources have that id, both dead: stale, naming the first', sessions: [session('holder', { source: 'claude', pid: 5151 }), session('holder', { source: 'agentctl', pid: 4242 })], facts: os([gone(4242), gone(5151)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim', reason: /\(in claude\) is ghost/ },
    { name: 'an id that differs in case is not the same id', sessions: [session('Holder', { source: 'claude', pid: 4242 })], facts: os([alive(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: 'holder' }] }, verdict: 'stale-claim' },
    { name: 'a pending-* id is not its resolved id', sessions: [session('pending-4242', { source: 'agentctl', pid: 4242 })], facts: os([alive(4242)]), claim: { claims: [{ source: 'hypivisor', resource: 'repo', holder: '4242' }] }, verdict: 'stale-claim' },
    { name: 'heartbeat older than its limit: stale, even with a live pid', sessions: [], facts: os([alive(6000)]), claim: { claims: [{ source: 'claude-sessions', resource: 'sd-1', pid: 6000, machine: HOST, heartbeatAt: NOW - 901_000, staleAfterMs: 900_000 }] }, verdict: 'stale-claim', reason: /last heartbeat 15m01s ago \(stale after 15m00s\)/ },
    { name: 'fresh heartbeat and a live pid: held', sessions: [], facts: os([alive(6000)]), claim: { claims: [{ source: 'claude-sessions', resource: 'sd-1', pid: 6000, machine: HOST, heartbeatAt: NOW - 60_000, staleAfterMs: 900_000 }] }, verdict: 'held' },
    { name: 'fresh heartbeat but the pid is gone: stale for the pid', sessions: [], facts: os([gone(6000)]), claim: { claims: [{ source: 'claude-sessions', resource: 'sd-1', pid: 6000, machine: HOST, heartbeatAt: NOW - 60_000, staleAfterMs: 900_000 }] }, verdict: 'stale-claim', reason: /6000 is gone/ },
    { name: 'remote claim with an old heartbeat: stale (the heartbeat needs no local check)', sessions: [], facts: os(), claim: { claims: [{ source: 'claude-sessions', resource: 'sd-1', pid: 6000, machine: 'laptop', heartbeatAt: NOW - 1_000_000, staleAfterMs: 900_000 }] }, verdict: 'stale-claim', reason: /heartbeat/ },
  ];
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_n, c) => {
    const f = run(c.sessions, c.facts, c.claim).find((x) => x.kind === 'claim')!;
    expect(f.verdict).toBe(c.verdict);
    expect(f.problem).toBe(c.verdict === 'stale-claim');
    if (c.reason) expect(f.reason).toMatch(c.reason);
  });
  it('a claim with nothing to check is held but noted unverified', () => {
    const f = run([], os(), { claims: [{ source: 'agentctl', resource: '/repo', note: 'manual' }] })[0]!;
    expect(f).toMatchObject({ kind: 'claim', id: '/repo', holder: null, verdict: 'held', note: 'unverified' });
  });
});

describe('evidence', () => {
  it('carries the syscall, state, start times, port and siblings behind each verdict', () => {
    const findings = run(
      [
        session('ghost', { pid: 100 }),
        session('zombie', { pid: 101 }),
        session('reused', { pid: 102, registeredAt: REGISTERED }),
        session('old', { pid: 103, registeredAt: REGISTERED }),
        session('new', { pid: 103, registeredAt: REGISTERED + 1 }),
        session('portless', { port: 8080 }),
        session('pending-104', { pid: 104, registeredAt: NOW - 10 * MIN }),
      ],
      os(
        [gone(100), alive(101, { state: 'Z' }), alive(102, { startedAt: NOW - 1000, process: { pid: 102, ppid: 1, name: 'node', cmd: 'node pi' } }), alive(103), alive(104)],
        [port(8080, 'refused')],
      ),
    );
    expect(one(findings, 'ghost').evidence).toMatchObject({ kill: 'ESRCH', host: { local: true, matchedAs: 'exact' }, checkedAt: NOW });
    expect(one(findings, 'zombie').evidence).toMatchObject({ kill: 'ok', state: 'Z' });
    expect(one(findings, 'reused').evidence).toMatchObject({
      start: { reference: 'registered_at', referenceAt: REGISTERED, processStartedAt: NOW - 1000, deltaMs: NOW - 1000 - REGISTERED },
      process: { pid: 102, ppid: 1, name: 'node', cmd: 'node pi' },
    });
    expect(one(findings, 'old').evidence).toMatchObject({ siblings: ['new'], newestBy: 'registered_at' });
    expect(one(findings, 'portless').evidence.port).toEqual({ port: 8080, result: 'refused' });
    expect(one(findings, 'pending-104').evidence.pending).toEqual({ ageMs: 10 * MIN, from: 'registered_at', ttlMs: POLICY.pendingTtlMs });
  });

  it('is JSON-safe: a round trip through JSON loses nothing', () => {
    const findings = run([session('a', { pid: 4242, registeredAt: REGISTERED }), session('b', { port: 1 })], os([alive(4242)], [port(1, 'open')]));
    for (const f of findings) expect(JSON.parse(JSON.stringify(f.evidence))).toEqual(f.evidence);
  });

  it('returns one finding per session and per claim, sessions first', () => {
    const findings = run([session('a'), session('b')], os(), { claims: [{ source: 'hypivisor', resource: 'r' }] });
    expect(findings.map((f) => `${f.kind}:${f.id}`)).toEqual(['session:a', 'session:b', 'claim:r']);
  });
});

describe('defaultPolicy', () => {
  it('keeps a default when an override is given as undefined', () => {
    expect(defaultPolicy(HOST, { pendingTtlMs: undefined, hostAliases: ['x'] })).toMatchObject({ pendingTtlMs: 120_000, hostAliases: ['x'] });
  });
});

describe('many entries on one pid', () => {
  it('stays linear: evidence lists 20 siblings and the count, the reason names 3', () => {
    const sessions = Array.from({ length: 500 }, (_, i) => session(`s${i}`, { pid: 4242, registeredAt: REGISTERED + i }));
    const findings = run(sessions, os([alive(4242)]));
    const old = one(findings, 's0');
    expect(old.verdict).toBe('superseded');
    expect(old.evidence.siblings).toHaveLength(20);
    expect(old.evidence.siblingCount).toBe(499);
    expect(one(findings, 's499').verdict).toBe('live');
    expect(findings.filter((f) => f.verdict === 'superseded')).toHaveLength(499);
    const tied = run([session('x', { pid: 4242 }), ...Array.from({ length: 10 }, (_, i) => session(`t${i}`, { pid: 4242 }))], os([alive(4242)]));
    expect(one(tied, 'x').reason).toMatch(/also claimed by t0, t1, t2 and 7 more/);
  });
});

// Agents from before pi-socket's 2026-02-23 change register no pid: the process listening on the
// entry's port (from the socket table) stands in for it (protocols.md §1).
describe('pid-less entries judged by the process that serves their port', () => {
  const served = (p: number, owners: number[], extra: Partial<ReturnType<typeof port>> = {}) => ({ ...port(p, 'open'), owners, ...extra });
  const named = (pid: number, fields: Parameters<typeof alive>[1] = {}) => alive(pid, { process: { pid, ppid: 1, name: 'pi', cmd: 'node pi' }, ...fields });
  table([
    { name: 'its port is served by a live process: live, naming it', sessions: [session('a', { port: 8080, registeredAt: REGISTERED })], facts: os([named(4242)], [served(8080, [4242])]), verdict: 'live', reason: /^no pid; port 8080 is served by pid 4242 \(pi\), which is alive$/ },
    { name: 'served by a process that started after the entry registered: reused', sessions: [session('a', { port: 8080, registeredAt: REGISTERED })], facts: os([named(4242, { startedAt: REGISTERED + 5 * MIN })], [served(8080, [4242])]), verdict: 'reused', reason: /port 8080 is served by pid 4242 \(pi\): pid 4242 belongs to a process started 5m00s after the entry was registered/ },
    { name: 'served by a zombie (it inherited the socket): zombie', sessions: [session('a', { port: 8080 })], facts: os([named(4242, { state: 'Z' })], [served(8080, [4242])]), verdict: 'zombie' },
    { name: 'served by a pid kill() says is gone (it died since): ghost', sessions: [session('a', { port: 8080 })], facts: os([gone(4242)], [served(8080, [4242])]), verdict: 'ghost', reason: /ESRCH/ },
    { name: 'the owner has not been probed yet: judged by the port alone', sessions: [session('a', { port: 8080 })], facts: os([], [served(8080, [4242])]), verdict: 'live', reason: /something accepts connections on port 8080/ },
    { name: 'several owners: the earliest started stands for the entry', sessions: [session('a', { port: 8080, registeredAt: REGISTERED })], facts: os([named(4243, { startedAt: REGISTERED + MIN }), named(4242, { startedAt: REGISTERED - MIN })], [served(8080, [4243, 4242])]), verdict: 'live', reason: /pid 4242/ },
    { name: 'owner unknown (another user, hidepid): live by the port, saying why', sessions: [session('a', { port: 8080 })], facts: os([], [port(8080, 'open')]), verdict: 'live' },
    { name: 'listening on a non-loopback address only is live, naming it', sessions: [session('a', { port: 8080 })], facts: os([], [{ ...port(8080, 'open'), listeners: ['10.1.2.3'] }]), verdict: 'live', reason: /listening on 10\.1\.2\.3/ },
    { name: 'an unusable pid and a served port: judged by the owner', sessions: [session('a', { pid: 'x', port: 8080 })], facts: os([named(4242)], [served(8080, [4242])]), verdict: 'live', reason: /^pid is a string, not a number; port 8080 is served by pid 4242/ },
    { name: 'a refused port with a stale owner list is a ghost', sessions: [session('a', { port: 8080 })], facts: os([named(4242)], [{ ...port(8080, 'refused'), owners: [4242] }]), verdict: 'ghost' },
  ]);

  it('keeps the owner and the listeners as evidence', () => {
    const f = one(run([session('a', { port: 8080 })], os([named(4242)], [served(8080, [4242], { listeners: ['0.0.0.0'] })])), 'a');
    expect(f.evidence.port).toMatchObject({ port: 8080, result: 'open', owner: 4242, listeners: ['0.0.0.0'] });
    expect(f.evidence.process).toMatchObject({ pid: 4242, name: 'pi' });
    expect(f.evidence.kill).toBe('ok');
  });

  describe('two entries whose ports one process serves', () => {
    table([
      { name: 'the older registration is superseded', id: 'old', sessions: [session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { port: 8081, registeredAt: REGISTERED + MIN })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'superseded', reason: /pid 4242 serves its port and also the newer entry new \(by registered at\)/ },
      { name: 'the newest stays live', id: 'new', sessions: [session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { port: 8081, registeredAt: REGISTERED + MIN })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'live' },
      { name: 'any status: an older offline entry is superseded too', id: 'old', sessions: [session('old', { port: 8080, registeredAt: REGISTERED, offline: true, status: 'offline' }), session('new', { port: 8081, registeredAt: REGISTERED + MIN })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'superseded' },
      { name: 'an offline newest stays offline', id: 'new', sessions: [session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { port: 8081, registeredAt: REGISTERED + MIN, offline: true, status: 'offline' })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'offline' },
      { name: 'no order between them: both stay as they are', id: 'old', sessions: [session('old', { port: 8080 }), session('new', { port: 8081 })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'live' },
      { name: 'different processes: not superseded', id: 'old', sessions: [session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { port: 8081, registeredAt: REGISTERED + MIN })], facts: os([named(4242), named(4243)], [served(8080, [4242]), served(8081, [4243])]), verdict: 'live' },
      { name: 'another registry listing the same agent: not superseded', id: 'old', sessions: [session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { source: 'other', port: 8081, registeredAt: REGISTERED + MIN })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'live' },
      { name: 'another host: not superseded', id: 'old', sessions: [session('old', { port: 8080, registeredAt: REGISTERED, machine: 'elsewhere' }), session('new', { port: 8081, registeredAt: REGISTERED + MIN, machine: 'elsewhere' })], facts: os([named(4242)], [served(8080, [4242]), served(8081, [4242])]), verdict: 'remote' },
    ]);
    it('names the sibling and what they share', () => {
      const findings = run([session('old', { port: 8080, registeredAt: REGISTERED }), session('new', { port: 8081, registeredAt: REGISTERED + MIN })], os([named(4242)], [served(8080, [4242]), served(8081, [4242])]));
      expect(one(findings, 'old').evidence).toMatchObject({ siblings: ['new'], siblingCount: 1, sharedBy: 'port-owner', newestBy: 'registered_at' });
    });
  });
});

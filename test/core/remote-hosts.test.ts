// Entries of a machine verified over ssh are judged by the same rules as local ones, on that host's
// own facts (pid 4242 there is not pid 4242 here); a host that cannot answer makes its entries
// unverified with the reason; a machine with no ssh stays `remote`.
import { describe, expect, it } from 'vitest';
import { remotePortKey, VERDICT_TRAITS, type Finding, type OsFacts, type RemoteHostFacts, type SessionEntry } from '../../src/core/index.js';
import { alive, claim, gone, HOST, NOW, one, os, port, run, session } from './fixtures.js';
import { newEvidence } from '../../src/core/rules/judgement.js';
import { judgeUnreachable } from '../../src/core/rules/remote.js';

const REGISTERED = NOW - 600_000;

function remote(machine: string, facts: OsFacts, fields: Partial<RemoteHostFacts> = {}): RemoteHostFacts {
  return { machine, transport: 'ssh', state: 'up', rttMs: 12.4, facts, ...fields };
}

/** This host's facts say the opposite of build-42's for every pid: a mix-up would show. */
const HERE = os([gone(4242), gone(4243), alive(5000), gone(5001)], [port(8080, 'open')]);

interface Case {
  name: string;
  sessions: SessionEntry[];
  host: RemoteHostFacts;
  id?: string;
  verdict: Finding['verdict'];
  reason?: RegExp;
}

const on42 = (id: string, fields: Partial<SessionEntry> = {}): SessionEntry => session(id, { machine: 'build-42', ...fields });

const CASES: Case[] = [
  { name: 'live there (gone here)', sessions: [on42('a', { pid: 4242, registeredAt: REGISTERED })], host: remote('build-42', os([alive(4242)])), verdict: 'live', reason: /^pid 4242 is alive \(via ssh build-42\)$/ },
  { name: 'ghost there (alive here)', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os([gone(5000)])), verdict: 'ghost', reason: /^pid 5000 is gone \(ESRCH\) \(via ssh build-42\)$/ },
  { name: 'zombie there', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os([alive(5000, { state: 'Z' })])), verdict: 'zombie', reason: /zombie.*via ssh build-42/ },
  { name: 'reused there: started after registration', sessions: [on42('a', { pid: 5000, registeredAt: REGISTERED })], host: remote('build-42', os([alive(5000, { startedAt: REGISTERED + 60_000 })])), verdict: 'reused', reason: /recycled/ },
  { name: 'offline with its process gone there: ghost', sessions: [on42('a', { pid: 5000, offline: true, status: 'offline' })], host: remote('build-42', os([gone(5000)])), verdict: 'ghost', reason: /registry: offline; OS: pid 5000 is gone/ },
  { name: 'pending placeholder whose process is dead there', sessions: [on42('pending-1', { pid: 5000 })], host: remote('build-42', os([gone(5000)])), verdict: 'pending', reason: /placeholder whose process is dead.*via ssh build-42/ },
  { name: 'young pending placeholder alive there: live, resolving', sessions: [on42('pending-1', { pid: 4242, registeredAt: NOW - 1000 })], host: remote('build-42', os([alive(4242)])), verdict: 'live' },
  {
    name: 'superseded there: an older entry on the same live pid',
    id: 'old',
    sessions: [on42('old', { pid: 4242, registeredAt: REGISTERED }), on42('new', { pid: 4242, registeredAt: REGISTERED + 1000 })],
    host: remote('build-42', os([alive(4242)])),
    verdict: 'superseded',
    reason: /belongs to the newer entry new .*\(via ssh build-42\)$/,
  },
  {
    name: 'the newest entry on that live pid stays live, the transport named once',
    id: 'new',
    sessions: [on42('old', { pid: 4242, registeredAt: REGISTERED }), on42('new', { pid: 4242, registeredAt: REGISTERED + 1000 })],
    host: remote('build-42', os([alive(4242)])),
    verdict: 'live',
    reason: /^pid 4242 is alive \(via ssh build-42\); newest of 2 entries on this pid$/,
  },
  { name: 'no pid, its port refused there (open here)', sessions: [on42('a', { port: 8080 })], host: remote('build-42', os([], [port(8080, 'refused')])), verdict: 'ghost', reason: /nothing listens on port 8080/ },
  { name: 'not probed there yet: unverified, never a guess from this host', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os()), verdict: 'unverified', reason: /not been probed/ },
  { name: 'the short name of the configured FQDN', sessions: [session('a', { pid: 5000, machine: 'build-42' })], host: remote('build-42.corp.example', os([gone(5000)])), verdict: 'ghost' },
  { name: 'host down: unverified with the reason', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os([gone(5000)]), { state: 'down', reason: 'authentication failed: Permission denied (publickey)' }), verdict: 'unverified', reason: /^ssh build-42 down: authentication failed: Permission denied \(publickey\)$/ },
  { name: 'host connecting: unverified', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os([gone(5000)]), { state: 'connecting' }), verdict: 'unverified', reason: /^ssh build-42 connecting/ },
  { name: 'host answering under another name: unverified with what it said', sessions: [on42('a', { pid: 5000 })], host: remote('build-42', os([gone(5000)]), { state: 'down', reason: 'answers as "gpu-7", not "build-42"' }), verdict: 'unverified', reason: /answers as "gpu-7"/ },
  { name: 'host down, the registry says offline: still unverified (never evictable without force), saying both', sessions: [on42('a', { pid: 5000, offline: true })], host: remote('build-42', os([gone(5000)]), { state: 'down', reason: 'connection refused' }), verdict: 'unverified', reason: /^ssh build-42 down: connection refused; the registry marks it offline$/ },
  { name: 'another machine than the configured one stays remote', sessions: [session('a', { pid: 5000, machine: 'gpu-7' })], host: remote('build-42', os([gone(5000)])), verdict: 'remote' },
  { name: 'a remote host named as this host never takes this host’s entries', sessions: [session('a', { pid: 4242 })], host: remote('devbox', os([alive(4242)])), verdict: 'ghost', reason: /^pid 4242 is gone \(ESRCH\)$/ },
];

describe('entries of a host verified over ssh', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const f = one(run(c.sessions, { ...HERE, remotes: [c.host] }), c.id ?? c.sessions[0]!.id);
    expect(f.verdict).toBe(c.verdict);
    expect(f.problem).toBe(VERDICT_TRAITS[c.verdict].problem);
    expect(f.evictable).toBe(VERDICT_TRAITS[c.verdict].evictable);
    if (c.reason) expect(f.reason).toMatch(c.reason);
  });

  it('a verified entry’s evidence names the host, the transport and the rtt; it is not this host', () => {
    const f = one(run([on42('a', { pid: 5000 })], { ...HERE, remotes: [remote('build-42', os([gone(5000)]))] }), 'a');
    expect(f.evidence.host).toEqual({ machine: 'build-42', local: false, matchedAs: undefined, ssh: { host: 'build-42', state: 'up', reason: undefined, rttMs: 12, via: 'via ssh build-42 (rtt 12 ms)' } });
    expect(f.evidence.kill).toBe('ESRCH');
  });

  it('without a measured rtt the evidence says only the host', () => {
    const f = one(run([on42('a', { pid: 5000 })], { ...HERE, remotes: [remote('build-42', os([gone(5000)]), { rttMs: undefined })] }), 'a');
    expect(f.evidence.host.ssh).toMatchObject({ rttMs: undefined, via: 'via ssh build-42' });
  });

  it('a down host’s offline entry keeps what the registry said in its evidence', () => {
    const f = one(run([on42('a', { pid: 5000, offline: true, status: 'offline', offlineSince: NOW - 5_000 })], { ...HERE, remotes: [remote('build-42', os(), { state: 'down', reason: 'connection refused' })] }), 'a');
    expect(f.evidence.registry).toEqual({ status: 'offline', offlineSince: NOW - 5_000 });
  });

  it('judgeUnreachable: a host up with no facts for the entry says so, never "down"', () => {
    const ssh = { host: 'build-42', state: 'up' as const, reason: undefined, rttMs: 3, via: 'via ssh build-42 (rtt 3 ms)' };
    const j = judgeUnreachable(ssh, on42('a', { pid: 5000 }), newEvidence({ machine: 'build-42', local: false, matchedAs: undefined, ssh }));
    expect(j).toMatchObject({ verdict: 'unverified', reason: 'ssh build-42: no facts yet' });
    const down = judgeUnreachable({ ...ssh, state: 'down' }, on42('a', { pid: 5000 }), newEvidence({ machine: 'build-42', local: false, matchedAs: undefined, ssh }));
    expect(down.reason).toBe('ssh build-42 down: no reason given');
  });

  it('a port check never overrides a host’s own facts: not this host’s, not an ssh host’s that is up', () => {
    const checks = (machine: string) => new Map([[remotePortKey(machine, 8080), { machine, port: 8080, result: 'refused' as const, checkedAt: NOW }]]);
    const here = one(run([session('a', { pid: 5000, port: 8080 })], { ...HERE, remotePorts: checks(HOST) }), 'a');
    expect(here.verdict).toBe('live');
    expect(here.evidence.transport).toBeUndefined();
    const there = one(run([on42('a', { pid: 5000, port: 8080 })], { ...HERE, remotes: [remote('build-42', os([alive(5000)]))], remotePorts: checks('build-42') }), 'a');
    expect(there.verdict).toBe('live');
    expect(there.evidence.transport).toBeUndefined();
    const down = one(run([on42('a', { pid: 5000, port: 8080 })], { ...HERE, remotes: [remote('build-42', os(), { state: 'down', reason: 'connection refused' })], remotePorts: checks('build-42') }), 'a');
    expect(down.verdict).toBe('unverified');
  });

  it('a down host’s reason is sanitized', () => {
    const f = one(run([on42('a', { pid: 5000 })], { ...HERE, remotes: [remote('build-42', os(), { state: 'down', reason: 'refused\u001b[31m\nred' })] }), 'a');
    expect(f.reason).not.toMatch(/[\u001b\n]/);
  });

  it('one pid on two hosts is two processes: never superseded across hosts', () => {
    const sessions = [session('here', { pid: 4242, registeredAt: REGISTERED }), on42('there', { pid: 4242, registeredAt: REGISTERED + 1000 }), session('gpu', { pid: 4242, machine: 'gpu-7', registeredAt: REGISTERED + 2000 })];
    const facts: OsFacts = { ...os([alive(4242)]), remotes: [remote('build-42', os([alive(4242)])), remote('gpu-7', os([alive(4242)]))] };
    const findings = run(sessions, facts);
    expect(findings.map((f) => f.verdict)).toEqual(['live', 'live', 'live']);
    expect(findings.map((f) => f.evidence.siblings)).toEqual([undefined, undefined, undefined]);
  });

  it('a port served by one pid on two hosts is two processes', () => {
    const sessions = [session('here', { port: 8080, registeredAt: REGISTERED }), on42('there', { port: 8080, registeredAt: REGISTERED + 1000 })];
    const served = os([alive(77)], [{ ...port(8080, 'open'), owners: [77] }]);
    const findings = run(sessions, { ...served, remotes: [remote('build-42', served)] });
    expect(findings.map((f) => f.verdict)).toEqual(['live', 'live']);
  });

  it('a claim on a verified host is judged by that host’s pid', () => {
    const findings = run([], { ...HERE, remotes: [remote('build-42', os([gone(5000)]))] }, { claims: [claim('src/a.ts', { pid: 5000, machine: 'build-42' })] });
    expect(one(findings, 'src/a.ts').verdict).toBe('stale-claim');
    const down = run([], { ...HERE, remotes: [remote('build-42', os([gone(5000)]), { state: 'down' })] }, { claims: [claim('src/a.ts', { pid: 5000, machine: 'build-42' })] });
    expect(one(down, 'src/a.ts').verdict).toBe('held');
  });

  it('without remotes, a pid of build-42 is remote whatever this host says', () => {
    expect(one(run([on42('a', { pid: 5001 })], HERE), 'a').verdict).toBe('remote');
    expect(one(run([on42('a', { pid: 5001 })], { ...HERE, remotes: [] }), 'a').verdict).toBe('remote');
  });
});

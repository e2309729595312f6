import { describe, expect, it } from 'vitest';
import { judgeElsewhere, judgeRemotePort, PORT_CHECK_TRANSPORT } from '../../../src/core/rules/elsewhere.js';
import { newEvidence } from '../../../src/core/rules/judgement.js';
import { chooseRemotePortTargets, localMachineTest, remoteMachineProblem, remotePortKey, type OsFacts, type PortResult, type RemotePortFacts } from '../../../src/core/index.js';
import { HOST, NOW, one, os, run, session } from './support.js';

function checked(machine: string, port: number, result: PortResult, detail?: string): RemotePortFacts {
  return { machine, port, result, checkedAt: NOW, ...(detail ? { detail } : {}) };
}

function withChecks(...facts: RemotePortFacts[]): OsFacts {
  return { ...os(), remotePorts: new Map(facts.map((f) => [remotePortKey(f.machine, f.port), f])) };
}

const remoteEvidence = () => newEvidence({ machine: 'build-42', local: false, matchedAs: undefined });

// Rule: a remote entry judged by a port check of its own machine:port from this host.
const cases: [name: string, entry: Parameters<typeof session>[1], facts: OsFacts, verdict: string | undefined, reason?: RegExp][] = [
  ['refused: nothing listens there', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'refused', 'ECONNREFUSED')), 'ghost', /^port 8080 refused from this host: nothing listens on build-42:8080$/],
  ['accepted: still remote, never live', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'open')), 'remote', /port 8080 accepts from this host \(which process serves it cannot be checked here\)/],
  ['timeout: unverified with the reason', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'timeout', 'no answer within 1500 ms')), 'unverified', /failed \(timeout: no answer within 1500 ms\)/],
  ['timeout without a detail: the result alone', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'timeout')), 'unverified', /^the port check of build-42:8080 from this host failed \(timeout\)$/],
  ['unresolved: unverified with the reason', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'error', 'cannot resolve build-42 (ENOTFOUND)')), 'unverified', /cannot resolve build-42 \(ENOTFOUND\)/],
  ['a check of another port of the machine is not this one', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8081, 'refused')), undefined],
  ['a check of the same port on another machine is not this one', { machine: 'build-42', port: 8080 }, withChecks(checked('build-43', 8080, 'refused')), undefined],
  ['no checks (the flag is off)', { machine: 'build-42', port: 8080 }, os(), undefined],
  ['no usable port', { machine: 'build-42', port: 0 }, withChecks(checked('build-42', 0, 'refused')), undefined],
  ['a hostile detail is shown inert', { machine: 'build-42', port: 8080 }, withChecks(checked('build-42', 8080, 'error', 'x\u001b[2Jy')), 'unverified', /x\^\[\[2Jy/],
];

describe('rule: remote port check', () => {
  it.each(cases)('%s', (_name, fields, facts, verdict, reason) => {
    const evidence = remoteEvidence();
    const j = judgeRemotePort(session('a', fields), facts, evidence);
    expect(j?.verdict).toBe(verdict);
    if (reason) expect(j?.reason).toMatch(reason);
    if (j) {
      expect(evidence.transport).toBe(PORT_CHECK_TRANSPORT);
      expect(evidence.port).toMatchObject({ port: 8080 });
      expect(evidence.checkedAt).toBe(NOW);
    } else expect(evidence.transport).toBeUndefined();
  });

  it('without a check the entry is judged as before', () => {
    expect(judgeElsewhere(session('a', { machine: 'build-42' })).verdict).toBe('remote');
  });
});

describe('reconcile with remote port checks', () => {
  const facts = withChecks(checked('build-42', 8080, 'refused'), checked('build-42', 8081, 'open'), checked('build-42', 8082, 'timeout'));
  const table: [name: string, fields: Parameters<typeof session>[1], verdict: string, problem: boolean, evictable: boolean, reason: RegExp][] = [
    ['active, refused: a ghost, evictable', { machine: 'build-42', port: 8080, pid: 77 }, 'ghost', true, true, /refused from this host/],
    ['active, accepted: remote, force only', { machine: 'build-42', port: 8081 }, 'remote', false, false, /accepts from this host/],
    ['active, timeout: unverified, force only', { machine: 'build-42', port: 8082 }, 'unverified', false, false, /timeout/],
    ['offline, refused: the dead agent is a ghost', { machine: 'build-42', port: 8080, offline: true, status: 'offline' }, 'ghost', true, true, /^registry: offline; port check: port 8080 refused from this host/],
    ['offline, accepted: the registry\'s word stands', { machine: 'build-42', port: 8081, offline: true, status: 'offline' }, 'offline', false, true, /marks it offline/],
    ['offline and ended: history, not a ghost', { machine: 'build-42', port: 8080, offline: true, ended: true, status: 'stopped' }, 'offline', false, true, /marked it stopped/],
    ['this host is never judged by a remote check', { machine: HOST, port: 8080 }, 'unverified', false, false, /not been probed/],
  ];
  it.each(table)('%s', (_name, fields, verdict, problem, evictable, reason) => {
    const f = one(run([session('a', fields)], facts), 'a');
    expect(f.verdict).toBe(verdict);
    expect(f.problem).toBe(problem);
    expect(f.evictable).toBe(evictable);
    expect(f.reason).toMatch(reason);
  });

  it('a remote ghost carries the port fact and the transport in its evidence', () => {
    const f = one(run([session('a', { machine: 'build-42', port: 8080 })], facts), 'a');
    expect(f.evidence).toMatchObject({ host: { machine: 'build-42', local: false }, port: { port: 8080, result: 'refused' }, transport: 'port check from this host', checkedAt: NOW });
  });
});

describe('remote port targets', () => {
  const isLocal = localMachineTest(HOST, ['alias-box']);
  const none = () => false;
  it('only remote entries with a machine and a usable port, each machine:port once', () => {
    const view = {
      sessions: [
        session('a', { machine: 'build-42', port: 8080 }),
        session('b', { machine: 'build-42', port: 8080 }),
        session('c', { machine: 'build-42', port: 8081, offline: true }),
        session('local', { machine: HOST, port: 9000 }),
        session('alias', { machine: 'alias-box', port: 9001 }),
        session('noport', { machine: 'build-42' }),
        session('badport', { machine: 'build-42', port: 70_000 }),
        session('nomachine', { machine: undefined, port: 8080 }),
        session('ended', { machine: 'build-43', port: 8080, offline: true, ended: true }),
        session('url', { machine: 'http://evil/', port: 8080 }),
      ],
      claims: [],
    };
    expect([...chooseRemotePortTargets(view, isLocal, none).values()]).toEqual([
      { machine: 'build-42', port: 8080 },
      { machine: 'build-42', port: 8081 },
    ]);
  });
  it('never a machine verified over SSH', () => {
    const view = { sessions: [session('a', { machine: 'build-42', port: 8080 }), session('b', { machine: 'build-43', port: 8080 })], claims: [] };
    expect([...chooseRemotePortTargets(view, isLocal, (m) => m === 'build-42').keys()]).toEqual([remotePortKey('build-43', 8080)]);
  });

  const machines: [string, string | undefined][] = [
    ['build-42', undefined],
    ['build-42.example.internal', undefined],
    ['build-42.example.internal.', undefined],
    ['127.0.0.2', undefined],
    ['10.1.2.3', undefined],
    ['::1', undefined],
    ['fe80::1', undefined],
    ['0.0.0.0', 'a wildcard address, not a host'],
    ['::', 'a wildcard address, not a host'],
    ['255.255.255.255', 'a multicast or broadcast address, not a host'],
    ['239.1.2.3', 'a multicast or broadcast address, not a host'],
    ['ff02::1', 'a multicast address, not a host'],
    ['300.1.2.3', 'not an IP address'],
    ['1.2.3', 'not an IP address'],
    ['', 'not a host name'],
    ['a b', 'not a host name'],
    ['http://x/', 'not a host name'],
    ['user@host', 'not a host name'],
    ['-rf', 'not a host name'],
    ['a'.repeat(64), 'not a host name'],
    ['x\u001b[2J', 'not a host name'],
    // The edges of each check (mutation testing found these unpinned).
    ['a', undefined],
    [('a'.repeat(63) + '.').repeat(3) + 'a'.repeat(61), undefined],
    [('a'.repeat(63) + '.').repeat(3) + 'a'.repeat(62), 'not a host name'],
    ['224.0.0.1', 'a multicast or broadcast address, not a host'],
    ['223.255.255.255', undefined],
    ['x0.2.3.4', undefined],
    ['0.2.3.4x', undefined],
    ['1:2', 'not an IP address'],
    ['1:2:3:4:5:6:7:8', undefined],
    ['1:2:3:4:5:6:7:8:9', 'not an IP address'],
    ['1::2::3', 'not an IP address'],
    ['g::1', 'not a host name'],
    ['::1g', 'not a host name'],
    ['1::0', undefined],
    ['a::ff', undefined],
    ['a b.', 'not a host name'],
    ['1.2.3a', undefined],
    ['build-42.bad name', 'not a host name'],
  ];
  it.each(machines)('machine %j: %s', (machine, problem) => {
    expect(remoteMachineProblem(machine)).toBe(problem);
  });
});

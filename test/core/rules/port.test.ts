import { describe, expect, it } from 'vitest';
import { judgeByPort, portOwner } from '../../../src/core/rules/port.js';
import type { OsFacts, SessionEntry } from '../../../src/core/types.js';
import { alive, gone, localEvidence, NOW, os, POLICY, port, session } from './support.js';

const REG = NOW - 600_000;
const pi = (pid: number, fields: Parameters<typeof alive>[1] = {}) => alive(pid, { process: { pid, ppid: 1, name: 'pi', cmd: 'node pi' }, ...fields });
const served = (p: number, owners: number[]) => ({ ...port(p, 'open'), owners });

// Rule port: an entry whose pid cannot be used ("no pid"), judged by its port and its owner.
const cases: [name: string, entry: SessionEntry, facts: OsFacts, verdict: string, reason: RegExp][] = [
  ['no usable port', session('a', { port: 0 }), os(), 'unverified', /^no pid and no port to probe: nothing to check$/],
  ['port not probed yet', session('a', { port: 8080 }), os(), 'unverified', /port 8080 has not been probed yet/],
  ['open, owner unknown', session('a', { port: 8080 }), os([], [port(8080, 'open')]), 'live', /^no pid; something accepts connections on port 8080$/],
  ['open on a named address', session('a', { port: 8080 }), os([], [{ ...port(8080, 'open'), listeners: ['10.1.2.3', '::1'] }]), 'live', /listening on 10\.1\.2\.3, ::1/],
  ['refused', session('a', { port: 8080 }), os([], [port(8080, 'refused')]), 'ghost', /^no pid; nothing listens on port 8080$/],
  ['refused, a stale owner list is ignored', session('a', { port: 8080 }), os([pi(42)], [{ ...port(8080, 'refused'), owners: [42] }]), 'ghost', /nothing listens/],
  ['timeout', session('a', { port: 8080 }), os([], [port(8080, 'timeout')]), 'unverified', /failed \(timeout\)/],
  ['error with a detail', session('a', { port: 8080 }), os([], [port(8080, 'error', 'EMFILE')]), 'unverified', /failed \(error: EMFILE\)/],
  ['served by a live process', session('a', { port: 8080, registeredAt: REG }), os([pi(42)], [served(8080, [42])]), 'live', /^no pid; port 8080 is served by pid 42 \(pi\), which is alive$/],
  ['served by a recycled process', session('a', { port: 8080, registeredAt: REG }), os([pi(42, { startedAt: REG + 60_000 })], [served(8080, [42])]), 'reused', /served by pid 42 \(pi\): pid 42 belongs to a process started 1m00s after/],
  ['served by a zombie', session('a', { port: 8080 }), os([pi(42, { state: 'Z' })], [served(8080, [42])]), 'zombie', /served by pid 42/],
  ['served by a pid now gone', session('a', { port: 8080 }), os([gone(42)], [served(8080, [42])]), 'ghost', /served by pid 42: pid 42 is gone/],
  ['owner not probed: the port alone', session('a', { port: 8080 }), os([], [served(8080, [42])]), 'live', /something accepts/],
];

describe('rule: port', () => {
  it.each(cases)('%s', (_name, entry, facts, verdict, reason) => {
    const j = judgeByPort(entry, 'no pid', facts, POLICY, localEvidence());
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
  });

  it('records why the pid was not used, the probe, its owner and listeners', () => {
    const evidence = localEvidence();
    judgeByPort(session('a', { pid: 'x', port: 8080 }), 'pid is a string, not a number', os([pi(42)], [{ ...served(8080, [42]), listeners: ['0.0.0.0'] }]), POLICY, evidence);
    expect(evidence.pid).toEqual({ value: null, raw: 'x', unusable: 'pid is a string, not a number' });
    expect(evidence.port).toMatchObject({ port: 8080, result: 'open', owner: 42, listeners: ['0.0.0.0'] });
    expect(evidence.process?.name).toBe('pi');
    const none = localEvidence();
    judgeByPort(session('a', { port: 8080 }), 'no pid', os(), POLICY, none);
    expect(none.pid).toBeUndefined();
    expect(none.port).toEqual({ port: 8080, result: 'not-probed', detail: undefined });
  });
});

describe('portOwner', () => {
  const cases: [name: string, owners: number[], facts: OsFacts, owner: number | undefined][] = [
    ['no owners', [], os(), undefined],
    ['an owner the facts do not know', [42], os(), undefined],
    ['unusable pids are skipped', [1, 0, -1, 42], os([alive(1), alive(42)]), 42],
    ['the earliest started of several', [43, 42], os([alive(43, { startedAt: NOW - 10 }), alive(42, { startedAt: NOW - 20 })]), 42],
    ['a known start time wins over none', [43, 42], os([alive(43, { startedAt: undefined }), alive(42)]), 42],
    ['no start times: the first listed', [43, 42], os([alive(43, { startedAt: undefined }), alive(42, { startedAt: undefined })]), 43],
  ];
  it.each(cases)('%s', (_name, owners, facts, owner) => {
    expect(portOwner({ ...port(8080, 'open'), owners }, facts)).toBe(owner);
  });
});

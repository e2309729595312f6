// Rule suspended, by table: a stopped process (T, t) behind an entry the registry calls active is
// suspended (not a problem, not evictable, never a ghost), with since when and the way out; the
// registry's offline, a zombie, a recycled pid and a pending placeholder past its TTL keep their
// own verdicts; a process that runs is not suspended. Then the same through reconcile.
import { describe, expect, it } from 'vitest';
import { clockText } from '../../../src/core/rules/judgement.js';
import { judgeSuspended, wayOut } from '../../../src/core/rules/suspended.js';
import { isStopped } from '../../../src/core/usage.js';
import type { OsFacts, SessionEntry } from '../../../src/core/types.js';
import { alive, gone, localEvidence, NOW, one, os, pidFacts, POLICY, port, run, session } from './support.js';

const SINCE = NOW - 90_000;

describe('rule: suspended', () => {
  it.each([
    ['T', true],
    ['t', true],
    ['S', false],
    ['R', false],
    ['D', false],
    ['Z', false],
    ['I', false],
    [undefined, false],
  ] as const)('state %s is a stop: %s', (state, stopped) => {
    expect(isStopped(state)).toBe(stopped);
    const evidence = localEvidence();
    const j = judgeSuspended('pid 7', 7, alive(7, { state, stoppedSince: SINCE }), POLICY, evidence);
    expect(j?.verdict).toBe(stopped ? 'suspended' : undefined);
    expect(evidence.stoppedSince).toBe(stopped ? SINCE : undefined);
  });

  it('says since when (the first probe that found it stopped) and the way out; a tracer\'s stop is the tracer\'s to end', () => {
    expect(judgeSuspended('pid 7', 7, alive(7, { state: 'T', stoppedSince: SINCE }), POLICY, localEvidence())?.reason).toBe(
      `pid 7 is stopped (state T, Ctrl-Z or SIGSTOP) since ${clockText(POLICY, SINCE)}: it cannot answer until continued; o jumps to its pane: fg there, or kill -CONT 7`,
    );
    expect(judgeSuspended('pid 7', 7, alive(7, { state: 't', stoppedSince: SINCE }), POLICY, localEvidence())?.reason).toMatch(/^pid 7 is stopped \(state t, by a tracer\) since .*; its tracer \(a debugger\) holds it: continue it there; o jumps to its pane$/);
    // Facts without the time of the stop (another host's reading): no "since".
    expect(judgeSuspended('pid 7', 7, alive(7, { state: 'T' }), POLICY, localEvidence())?.reason).toMatch(/^pid 7 is stopped \(state T, Ctrl-Z or SIGSTOP\): it cannot/);
    expect(wayOut(42, 'T')).toBe('o jumps to its pane: fg there, or kill -CONT 42');
  });
});

const STOPPED = { state: 'T', stoppedSince: SINCE } as const;
// Through reconcile: the entry, what the OS said, and the verdict.
const table: [name: string, entry: SessionEntry, facts: OsFacts, verdict: string, problem: boolean][] = [
  ['active, its pid stopped', session('a', { pid: 7 }), os([alive(7, STOPPED)]), 'suspended', false],
  ['active, its pid stopped by a tracer', session('a', { pid: 7 }), os([alive(7, { state: 't' })]), 'suspended', false],
  ['active, its pid stopped, another user\'s (EPERM)', session('a', { pid: 7 }), os([pidFacts(7, 'EPERM', STOPPED)]), 'suspended', false],
  ['active, its pid running', session('a', { pid: 7 }), os([alive(7)]), 'live', false],
  ['active, its pid gone', session('a', { pid: 7 }), os([gone(7)]), 'ghost', true],
  ['active, its pid a zombie', session('a', { pid: 7 }), os([alive(7, { state: 'Z' })]), 'zombie', true],
  ['active, its pid stopped but recycled', session('a', { pid: 7, registeredAt: NOW - 60_000 }), os([alive(7, { ...STOPPED, startedAt: NOW - 1_000 })]), 'reused', true],
  ['offline in the registry, its pid stopped', session('a', { pid: 7, offline: true, status: 'offline' }), os([alive(7, STOPPED)]), 'offline', false],
  ['no pid, its port served by a stopped process', session('a', { port: 8101 }), { pids: new Map([[9, alive(9, STOPPED)]]), ports: new Map([[8101, { ...port(8101, 'open'), owners: [9] }]]) }, 'suspended', false],
  ['a young placeholder, stopped', session('pending-1', { pid: 7, registeredAt: NOW - 5_000 }), os([alive(7, STOPPED)]), 'suspended', false],
  ['a placeholder past its TTL, stopped', session('pending-1', { pid: 7, registeredAt: NOW - 3_600_000 }), os([alive(7, STOPPED)]), 'pending', true],
];

describe('suspended through reconcile', () => {
  it.each(table)('%s: %s', (_name, entry, facts, verdict, problem) => {
    const f = one(run([entry], facts), entry.id);
    expect(f.verdict).toBe(verdict);
    expect(f.problem).toBe(problem);
    if (verdict === 'suspended') expect(f.evictable).toBe(false);
  });

  it('the registry\'s offline keeps what the OS said: underlying suspended, state T', () => {
    const f = one(run([session('a', { pid: 7, offline: true, status: 'offline' })], os([alive(7, STOPPED)])), 'a');
    expect(f.evidence).toMatchObject({ underlying: 'suspended', state: 'T', stoppedSince: SINCE });
  });

  it('a claim held by a suspended agent stays held', () => {
    const [, c] = run([session('a', { pid: 7 })], os([alive(7, STOPPED)]), { claims: [{ source: 'hypivisor', resource: '/repo', holder: 'a' }] });
    expect(c).toMatchObject({ kind: 'claim', verdict: 'held' });
  });
});

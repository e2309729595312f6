// Which pids and ports this host watches (design.md, "Rules that protect users": only entries
// whose machine is this host are ever checked against this host's processes).
import { describe, expect, it } from 'vitest';
import { chooseProbeTargets, localMachineTest, namespacesNamed, namespaceSteps, probeTargetSteps, TARGETS_STEP, type ClaimEntry, type SessionEntry } from '../../src/core/index.js';
import { claim, HOST, session } from './fixtures.js';

const isLocal = localMachineTest(HOST, ['devbox-alias']);

describe('localMachineTest: is a registry machine this host?', () => {
  it.each([
    ['no machine at all', undefined, false],
    ['the host name', 'devbox', true],
    ['the host name in capitals with a trailing dot', 'DEVBOX.', true],
    ['an FQDN of this host', 'devbox.lan', true],
    ['an alias', 'devbox-alias', true],
    ['another host', 'laptop', false],
    ['an empty name', '', false],
  ])('%s → %s', (_name, machine, local) => {
    expect(isLocal(machine)).toBe(local);
    // Asked again (from its memo), the answer is the same.
    expect(isLocal(machine)).toBe(local);
  });

  it('keeps answering right past its memo limit (a hostile registry with many machine names)', () => {
    const test = localMachineTest(HOST, []);
    for (let i = 0; i < 2_100; i++) expect(test(`host-${i}`)).toBe(false);
    expect(test('devbox')).toBe(true);
    expect(test('host-1')).toBe(false);
  });
});

interface Case {
  name: string;
  sessions?: SessionEntry[];
  claims?: ClaimEntry[];
  pids: number[];
  ports: number[];
}

describe('chooseProbeTargets', () => {
  it.each<Case>([
    { name: 'nothing in the registry: nothing to watch', pids: [], ports: [] },
    {
      name: 'a local session with a usable pid: its pid, not its port',
      sessions: [session('a', { pid: 500, port: 8080 })],
      pids: [500],
      ports: [],
    },
    {
      name: 'a local session with no usable pid: its port',
      sessions: [session('a', { pid: 1, port: 8080 }), session('b', { port: 8081 })],
      pids: [],
      ports: [8080, 8081],
    },
    {
      name: 'a local session with neither: nothing',
      sessions: [session('a', { pid: 'x', port: 70_000 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a session on another machine, or with none: nothing',
      sessions: [session('far', { machine: 'laptop', pid: 500, port: 8080 }), session('nowhere', { machine: undefined, pid: 501 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim on this machine: its pid',
      claims: [claim('repo', { machine: HOST, pid: 600 })],
      pids: [600],
      ports: [],
    },
    {
      name: 'a claim on this machine with an unusable pid: nothing',
      claims: [claim('repo', { machine: HOST, pid: 0 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim on another machine: nothing',
      claims: [claim('repo', { machine: 'laptop', pid: 600 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim without a machine is on its holder’s machine: local holder',
      sessions: [session('h', { port: 9000 })],
      claims: [claim('repo', { holder: 'h', pid: 600 })],
      pids: [600],
      ports: [9000],
    },
    {
      name: 'a claim without a machine is on its holder’s machine: remote holder',
      sessions: [session('h', { machine: 'laptop' })],
      claims: [claim('repo', { holder: 'h', pid: 600 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim whose holder is not in the registry: nowhere known, nothing',
      claims: [claim('repo', { holder: 'missing', pid: 600 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim without machine or holder: nothing',
      claims: [claim('repo', { pid: 600 })],
      pids: [],
      ports: [],
    },
    {
      name: 'the holder is looked up in the claim’s own source only',
      sessions: [session('h', { source: 'agentctl' })],
      claims: [claim('repo', { holder: 'h', pid: 600 })],
      pids: [],
      ports: [],
    },
    {
      name: 'a claim’s own machine wins over its holder’s',
      sessions: [session('h', { machine: 'laptop' }), session('l')],
      claims: [claim('mine', { machine: HOST, holder: 'h', pid: 600 }), claim('theirs', { machine: 'laptop', holder: 'l', pid: 601 })],
      pids: [600],
      ports: [],
    },
    {
      name: 'several claims and holders in one source: each holder found',
      sessions: [session('h1'), session('h2'), session('h3', { machine: 'laptop' })],
      claims: [
        claim('a', { holder: 'h1', pid: 601 }),
        claim('b', { holder: 'h2', pid: 602 }),
        claim('c', { holder: 'h3', pid: 603 }),
        claim('d', { holder: 'h1', pid: 604 }),
      ],
      pids: [601, 602, 604],
      ports: [],
    },
    {
      name: 'holders in two sources, same ids: each in its own source',
      sessions: [session('h'), session('h', { source: 'agentctl', machine: 'laptop' })],
      claims: [claim('a', { holder: 'h', pid: 601 }), claim('b', { source: 'agentctl', holder: 'h', pid: 602 })],
      pids: [601],
      ports: [],
    },
    {
      name: 'a pid shared by a session and a claim is watched once',
      sessions: [session('s', { pid: 700 })],
      claims: [claim('repo', { holder: 's', pid: 700 })],
      pids: [700],
      ports: [],
    },
  ])('$name', ({ sessions = [], claims = [], pids, ports }) => {
    const targets = chooseProbeTargets({ sessions, claims }, isLocal);
    expect([...targets.pids].sort()).toEqual(pids);
    expect([...targets.ports].sort()).toEqual(ports);
  });
});

describe('probeTargetSteps and namespaceSteps: the same answers, in steps', () => {
  it('pause every TARGETS_STEP sessions and end with what chooseProbeTargets and namespacesNamed give', () => {
    const sessions = Array.from({ length: TARGETS_STEP * 2 + 5 }, (_, i) =>
      session(`s${i}`, { machine: i % 3 === 0 ? 'elsewhere' : HOST, pid: i % 5 === 0 ? undefined : 1_000 + i, port: 20_000 + i, ...(i === 7 ? { pidDomain: { text: 'pid:[4026532000]', namespace: '4026532000' } } : {}) }),
    );
    const view = { sessions, claims: [] };
    const isLocal = localMachineTest(HOST, []);
    const run = <T>(steps: Generator<void, T, void>): { pauses: number; value: T } => {
      let pauses = 0;
      for (;;) {
        const step = steps.next();
        if (step.done) return { pauses, value: step.value };
        pauses++;
      }
    };
    const targets = run(probeTargetSteps(view, isLocal));
    expect(targets.pauses).toBe(2);
    expect(targets.value).toEqual(chooseProbeTargets(view, isLocal));
    const named = run(namespaceSteps(view, isLocal));
    expect(named.pauses).toBe(2);
    expect(named.value).toEqual(namespacesNamed(view, isLocal));
    expect([...named.value]).toEqual(['4026532000']);
  });
});

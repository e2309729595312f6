// The pid namespaces the records name, as the engine reads them: nothing while no record names
// one, at once when a new one is named, then at the slow cadence, telling only a change; and the
// real engine on a record of a real pid namespace, live and then a ghost as soon as it dies.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PidNamespaceFacts } from '../../src/core/types.js';
import type { ProbeProvider } from '../../src/os/provider.js';
import { PidDomains, sameNamespaceFacts } from '../../src/engine/pid-domains.js';
import { claudeSources } from '../../src/sources/claude/index.js';
import { describeOn } from '../support/platform.js';
import { FakeClock, settle } from './fake-clock.js';
import { engineFor, finding, HOST, inPidNamespace, tempDir, until } from './helpers.js';

const facts = (map: [string, [number, number][] | null][]): PidNamespaceFacts => ({
  machineId: 'a'.repeat(32),
  own: '4026531836',
  initial: true,
  namespaces: new Map(map.map(([ns, pids]) => [ns, pids === null ? null : new Map(pids)])),
  checkedAt: 0,
});

function provider(answer: () => PidNamespaceFacts): { probes: ProbeProvider; asked: ReadonlySet<string>[] } {
  const asked: ReadonlySet<string>[] = [];
  const probes = {
    pidNamespaces: (wanted: ReadonlySet<string>) => {
      asked.push(new Set(wanted));
      return Promise.resolve(answer());
    },
  } as unknown as ProbeProvider;
  return { probes, asked };
}

describe('the pid domains tracker', () => {
  it('reads nothing while no record names a namespace; a new one at once; then every period; tells only changes', async () => {
    const clock = new FakeClock();
    let answer = facts([['4026532999', [[2, 500]]]]);
    const { probes, asked } = provider(() => answer);
    let changes = 0;
    const d = new PidDomains({ probes, clock, periodMs: 5_000, onChange: () => changes++ });
    d.setWanted(new Set());
    await clock.advance(20_000);
    expect(asked).toHaveLength(0);
    expect(d.settled).toBe(true);
    expect(d.facts).toBeUndefined();

    d.setWanted(new Set(['4026532999']));
    expect(d.settled).toBe(false);
    await settle();
    expect(asked).toHaveLength(1);
    expect(d.settled).toBe(true);
    expect(changes).toBe(1);
    expect(d.facts?.namespaces.get('4026532999')?.get(2)).toBe(500);

    await clock.advance(5_000);
    expect(asked).toHaveLength(2);
    expect(changes).toBe(1);
    answer = facts([['4026532999', null]]);
    await clock.advance(5_000);
    expect(asked).toHaveLength(3);
    expect(changes).toBe(2);

    // The same set again is no new read; a grown set is read at once.
    d.setWanted(new Set(['4026532999']));
    await settle();
    expect(asked).toHaveLength(3);
    d.setWanted(new Set(['4026532999', '4026532888']));
    await settle();
    expect(asked).toHaveLength(4);
    expect([...asked[3]!].sort()).toEqual(['4026532888', '4026532999']);

    // Named no more: no timer, no facts.
    d.setWanted(new Set());
    await clock.advance(60_000);
    expect(asked).toHaveLength(4);
    expect(d.facts).toBeUndefined();
    d.stop();
  });

  it('compares facts by what reconcile reads', () => {
    const a = facts([['1', [[2, 500]]], ['3', null]]);
    expect(sameNamespaceFacts(undefined, a)).toBe(false);
    expect(sameNamespaceFacts(a, { ...facts([['1', [[2, 500]]], ['3', null]]), checkedAt: 99 })).toBe(true);
    expect(sameNamespaceFacts(a, facts([['1', [[2, 501]]], ['3', null]]))).toBe(false);
    expect(sameNamespaceFacts(a, facts([['1', null], ['3', null]]))).toBe(false);
    expect(sameNamespaceFacts(a, facts([['1', [[2, 500]]], ['4', null]]))).toBe(false);
    expect(sameNamespaceFacts(a, { ...a, blind: 'not root' })).toBe(false);
    expect(sameNamespaceFacts(a, { ...a, machineId: undefined })).toBe(false);
  });
});

describeOn(['linux'], 'pid namespaces are Linux')('the engine on a record of another pid namespace', () => {
  it('is live by the host pid of its process, and a ghost within the kill tick of its death', async () => {
    expect(process.getuid?.(), 'runs as root (CI does): unshare --pid needs it').toBe(0);
    const { sleepHost: sleep, ns } = await inPidNamespace();
    const home = tempDir();
    mkdirSync(join(home, '.claude', 'sessions'), { recursive: true });
    const machineId = readFileSync('/etc/machine-id', 'utf8').trim();
    writeFileSync(join(home, '.claude', 'sessions', '2.json'), JSON.stringify({ pid: 2, sessionId: 'boxed', cwd: '/w', startedAt: Date.now(), status: 'idle', pidDomain: `linux:${machineId}:pid:[${ns}]` }));
    const engine = engineFor(claudeSources({ claudeDirs: [join(home, '.claude')], claimsDir: join(home, '.claude-sessions') }, HOST, join(home, 'trash')));
    const live = await until(() => (finding(engine.getSnapshot(), 'boxed')?.verdict === 'live' ? finding(engine.getSnapshot(), 'boxed') : undefined), 10_000);
    expect(live?.evidence.pidDomain).toMatchObject({ status: 'mapped', hostPid: sleep, nsPid: 2 });
    process.kill(sleep, 'SIGKILL');
    const ghost = await until(() => (finding(engine.getSnapshot(), 'boxed')?.verdict === 'ghost' ? finding(engine.getSnapshot(), 'boxed') : undefined), 10_000);
    expect(ghost?.reason).toMatch(new RegExp(`^pid 2 of pid namespace ${ns}( \\(host pid ${sleep}\\))? is gone`));
  });
});

// The re-check right before a send probes exactly what the entry's verdict rests on, and nothing
// else: its own pid (or, pid-less, its port and the processes serving it), the sessions sharing
// that pid or that serving process, a claim's holder and the claim's own pid, only on this host.
import { describe, expect, it } from 'vitest';
import type { ClaimEntry, Finding, OsFacts, SessionEntry } from '../../src/core/types.js';
import { defaultPolicy } from '../../src/core/types.js';
import { freshFinding, type FreshContext } from '../../src/engine/fresh-finding.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { ScriptedSource } from './scripted-source.js';

const HOST = 'devbox';

function setup(sessions: SessionEntry[], claims: ClaimEntry[] = [], known: OsFacts = { pids: new Map(), ports: new Map() }) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const source = new ScriptedSource('reg', sessions, claims);
  const ctx: FreshContext = { policy: defaultPolicy(HOST), now: () => clock.now(), isLocal: (m) => m === HOST, known, probes };
  return { clock, probes, source, ctx };
}

const session = (id: string, fields: Partial<SessionEntry> = {}): SessionEntry => ({ source: 'reg', id, machine: HOST, ...fields });
const planSession = (id: string): Finding => ({ kind: 'session', source: 'reg', id, entry: { id } }) as unknown as Finding;
const planClaim = (resource: string, key?: string): Finding => ({ kind: 'claim', source: 'reg', id: resource, entry: { resource, key } }) as unknown as Finding;
const probed = (probes: FakeProbes) => ({ full: probes.of('full').map((c) => c.items), ports: probes.of('ports').map((c) => c.items), kill: probes.of('kill').length });

describe('freshFinding: what is probed', () => {
  it('a session with a pid: that pid and the pids of no one else, fully; its siblings on the same pid are judged with it', async () => {
    const h = setup([session('old', { pid: 100, registeredAt: 1000 }), session('other', { pid: 300 }), session('new', { pid: 100, registeredAt: 2000 })]);
    h.probes.processes.set(100, { kill: 'ok', startedAt: 500 });
    h.probes.processes.set(300, { kill: 'ok', startedAt: 500 });
    const fresh = await freshFinding(h.source, planSession('old'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [[100]], ports: [], kill: 0 });
    expect(fresh.current).toMatchObject({ id: 'old', verdict: 'superseded' });
    expect(fresh.current?.evidence).toMatchObject({ siblings: ['new'], siblingCount: 1 });
    expect([...fresh.pids.keys()]).toEqual([100]);
    expect(fresh.pids.get(100)).toMatchObject({ kill: 'ok', checkedAt: h.clock.now() });
    expect(fresh.ports.size).toBe(0);
    // The newer one of the pair is the live one.
    expect((await freshFinding(h.source, planSession('new'), h.ctx)).current).toMatchObject({ id: 'new', verdict: 'live' });
  });

  it("facts are read on the re-check's clock", async () => {
    const h = setup([session('a', { pid: 100 }), session('b', { port: 8000 })]);
    const later = h.clock.now() + 7_000;
    const ctx = { ...h.ctx, now: () => later };
    expect((await freshFinding(h.source, planSession('a'), ctx)).pids.get(100)?.checkedAt).toBe(later);
    expect((await freshFinding(h.source, planSession('b'), ctx)).ports.get(8000)?.checkedAt).toBe(later);
  });

  it('a remote session: nothing is probed at all', async () => {
    const h = setup([session('far', { pid: 100, port: 8000, machine: 'laptop' })]);
    const fresh = await freshFinding(h.source, planSession('far'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [], ports: [], kill: 0 });
    expect(fresh.current?.verdict).toBe('remote');
    expect(fresh.pids.size).toBe(0);
  });

  it('a pid-less session: its port, then the process serving it; pid-less siblings served by the same process come along', async () => {
    const known: OsFacts = {
      pids: new Map(),
      ports: new Map([
        [8001, { port: 8001, result: 'open', checkedAt: 0, owners: [500] }],
        [8002, { port: 8002, result: 'open', checkedAt: 0, owners: [501, 500] }],
        [8003, { port: 8003, result: 'open', checkedAt: 0, owners: [600] }],
        [8004, { port: 8004, result: 'open', checkedAt: 0, owners: [500] }],
      ]),
    };
    const h = setup(
      [
        session('p1', { port: 8001, registeredAt: 1000 }),
        session('p2', { port: 8002, registeredAt: 2000 }),
        session('p3', { port: 8003 }), // served by another process
        session('p4', { pid: 700, port: 8004 }), // has a pid of its own
        session('p5', { port: 8005 }), // the engine knows nothing of its port
      ],
      [],
      known,
    );
    h.probes.openPorts.set(8001, [500]);
    h.probes.openPorts.set(8002, [500]);
    h.probes.processes.set(500, { kill: 'ok', startedAt: 10 });
    const fresh = await freshFinding(h.source, planSession('p1'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [[500]], ports: [[8001, 8002]], kill: 0 });
    expect([...fresh.ports.keys()]).toEqual([8001, 8002]);
    expect([...fresh.pids.keys()]).toEqual([500]);
    // Judged with the one sibling the same process serves (not with itself): the newer one wins.
    expect(fresh.current).toMatchObject({ id: 'p1', verdict: 'superseded', evidence: { siblings: ['p2'], siblingCount: 1, sharedBy: 'port-owner' } });
  });

  it('a pid-less session whose port nobody known serves: only its own port, whoever serves the others', async () => {
    const known: OsFacts = { pids: new Map(), ports: new Map([[8006, { port: 8006, result: 'open', checkedAt: 0, owners: [500] }]]) };
    const h = setup([session('p5', { port: 8005 }), session('p6', { port: 8006 })], [], known);
    const fresh = await freshFinding(h.source, planSession('p5'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [], ports: [[8005]], kill: 0 });
    expect(fresh.ports.get(8005)).toMatchObject({ result: 'refused' });
    expect(fresh.pids.size).toBe(0);
  });

  it('a session with neither a usable pid nor a port: nothing to probe', async () => {
    const h = setup([session('bare', {})]);
    const fresh = await freshFinding(h.source, planSession('bare'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [], ports: [], kill: 0 });
    expect(fresh.current?.verdict).toBe('unverified');
  });

  it("a claim: its holder's pid and the claim's own pid (on the holder's host)", async () => {
    const h = setup([session('h1', { pid: 100 }), session('x', { pid: 300 })], [{ source: 'reg', resource: '/repo', holder: 'h1', pid: 900 }]);
    const fresh = await freshFinding(h.source, planClaim('/repo'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [[100, 900]], ports: [], kill: 0 });
    expect(fresh.current).toMatchObject({ kind: 'claim', id: '/repo' });
  });

  it("a claim's pid on another host, or of no known host, is not probed; its holder's still is", async () => {
    const h = setup([session('h1', { pid: 100, machine: 'laptop' })], [{ source: 'reg', resource: '/repo', holder: 'h1', pid: 900 }]);
    await freshFinding(h.source, planClaim('/repo'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [], ports: [], kill: 0 });

    const far = setup([], [{ source: 'reg', resource: '/r', pid: 900, machine: 'laptop' }]);
    await freshFinding(far.source, planClaim('/r'), far.ctx);
    expect(probed(far.probes)).toEqual({ full: [], ports: [], kill: 0 });

    const nobody = setup([], [{ source: 'reg', resource: '/r', holder: 'gone', pid: 900 }]);
    const fresh = await freshFinding(nobody.source, planClaim('/r'), nobody.ctx);
    expect(probed(nobody.probes)).toEqual({ full: [], ports: [], kill: 0 });
    expect(fresh.current?.kind).toBe('claim');
  });

  it("a holder-less claim on this host: the claim's pid alone", async () => {
    const h = setup([session('x', { pid: 300 })], [{ source: 'reg', resource: '/r', pid: 900, machine: HOST }]);
    await freshFinding(h.source, planClaim('/r'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [[900]], ports: [], kill: 0 });
  });

  it('claims are found by key when they have one, so the one of several on a resource is re-checked', async () => {
    const h = setup(
      [session('a', { pid: 100 }), session('b', { pid: 200 })],
      [
        { source: 'reg', resource: '/r', key: 'k1', holder: 'a' },
        { source: 'reg', resource: '/r', key: 'k2', holder: 'b' },
      ],
    );
    const fresh = await freshFinding(h.source, planClaim('/r', 'k2'), h.ctx);
    expect(probed(h.probes)).toEqual({ full: [[200]], ports: [], kill: 0 });
    expect(fresh.current).toMatchObject({ kind: 'claim', holder: 'b' });
  });

  it('an entry no longer in the registry: undefined, nothing probed', async () => {
    const h = setup([session('other', { pid: 100 })], [{ source: 'reg', resource: '/x', holder: 'other' }]);
    for (const planned of [planSession('gone'), planClaim('/gone')]) {
      const fresh = await freshFinding(h.source, planned, h.ctx);
      expect(fresh).toEqual({ current: undefined, pids: new Map(), ports: new Map() });
    }
    expect(h.probes.calls).toEqual([]);
  });

  it('the registry is re-read first; when it cannot be, the re-check fails and nothing is probed', async () => {
    const h = setup([session('a', { pid: 100 })]);
    h.source.rereads = false;
    await expect(freshFinding(h.source, planSession('a'), h.ctx)).rejects.toThrow('could not re-read the registry right before sending');
    expect(h.probes.calls).toEqual([]);
  });

  it("the engine's process row for a pid is carried over when the process is the same one", async () => {
    const row = { pid: 100, ppid: 1, name: 'pi', cmd: 'pi --serve', startedAt: 500 };
    const known: OsFacts = { pids: new Map([[100, { pid: 100, kill: 'ok', startedAt: 500, checkedAt: 0, process: row }]]), ports: new Map() };
    const h = setup([session('a', { pid: 100 })], [], known);
    h.probes.processes.set(100, { kill: 'ok', startedAt: 500 });
    const fresh = await freshFinding(h.source, planSession('a'), h.ctx);
    expect(fresh.pids.get(100)?.process).toEqual(row);
    expect(fresh.current?.evidence.process).toEqual(row);
  });
});

describe('freshFinding: an entry verified over ssh', () => {
  const FAR = 'build-1';
  const planSsh = (id: string, host = FAR): Finding =>
    ({ kind: 'session', source: 'reg', id, entry: { id }, evidence: { host: { machine: host, local: false, ssh: { host, state: 'up', via: `via ssh ${host}` } } } }) as unknown as Finding;

  function sshSetup(sessions: SessionEntry[], remoteKnown: OsFacts = { pids: new Map(), ports: new Map() }) {
    const h = setup(sessions);
    const far = new FakeProbes(h.clock);
    const asked: string[] = [];
    let rechecks = 0;
    const ctx: FreshContext = {
      ...h.ctx,
      remote: (machine) => {
        asked.push(machine);
        return machine !== FAR
          ? undefined
          : { provider: far, known: remoteKnown, isOn: (m) => m === FAR, hostFacts: (facts) => ({ machine: FAR, transport: 'ssh', state: 'up', facts }) };
      },
      remotePorts: {
        recheck: async () => {
          rechecks++;
          return new Map();
        },
      },
    };
    return { ...h, far, asked, ctx, rechecks: () => rechecks };
  }

  it("is re-probed on its host only, over that host's provider, and judged on those facts alone", async () => {
    const h = sshSetup([session('g', { pid: 100, machine: FAR }), session('sib', { pid: 100, machine: FAR }), session('here', { pid: 100 })]);
    // The same pid lives here: that says nothing of the process on build-1, which is gone.
    h.probes.processes.set(100, { kill: 'ok', startedAt: 500 });
    const fresh = await freshFinding(h.source, planSsh('g'), h.ctx);
    expect(h.asked).toEqual([FAR]);
    expect(h.probes.calls).toEqual([]);
    expect(h.far.of('full').map((c) => c.items)).toEqual([[100]]);
    expect(h.far.of('ports')).toEqual([]);
    expect(fresh.remoteHost).toBe(FAR);
    expect(fresh.current).toMatchObject({ id: 'g', verdict: 'ghost', evidence: { kill: 'ESRCH', host: { ssh: { host: FAR, state: 'up' } } } });
    expect([...fresh.pids.keys()]).toEqual([100]);
    expect(fresh.pids.get(100)).toMatchObject({ kill: 'ESRCH', checkedAt: h.clock.now() });
    // Never connected to from here as well: its host said what it is.
    expect(h.rechecks()).toBe(0);
    // An entry of this host is probed here; no host is asked for a connection.
    h.probes.processes.delete(100);
    expect((await freshFinding(h.source, planSession('here'), h.ctx)).current?.verdict).toBe('ghost');
    expect(h.asked).toEqual([FAR]);
    expect(h.probes.of('full').map((c) => c.items)).toEqual([[100]]);
  });

  it("the process row known on that host is carried over, not this host's", async () => {
    const row = { pid: 100, ppid: 1, name: 'pi', cmd: 'pi --serve', startedAt: 500 };
    const h = sshSetup([session('a', { pid: 100, machine: FAR })], { pids: new Map([[100, { pid: 100, kill: 'ok', startedAt: 500, checkedAt: 0, process: row }]]), ports: new Map() });
    h.far.processes.set(100, { kill: 'ok', startedAt: 500 });
    const fresh = await freshFinding(h.source, planSsh('a'), h.ctx);
    expect(fresh.pids.get(100)?.process).toEqual(row);
    expect(fresh.current?.verdict).toBe('live');
  });

  it('with no connection to its host: the re-check fails, naming the host, before the registry is read or anything probed', async () => {
    const h = sshSetup([session('g', { pid: 100, machine: 'build-2' })]);
    let rereads = 0;
    h.source.onResync = () => void rereads++;
    await expect(freshFinding(h.source, planSsh('g', 'build-2'), h.ctx)).rejects.toThrow('no ssh connection to build-2 to re-check it over');
    await expect(freshFinding(h.source, planSsh('g', 'build-2'), { ...h.ctx, remote: undefined })).rejects.toThrow('no ssh connection to build-2 to re-check it over');
    expect(rereads).toBe(0);
    expect(h.probes.calls).toEqual([]);
    expect(h.far.calls).toEqual([]);
  });

  it('gone from the registry: undefined, with the host it would have been read on', async () => {
    const h = sshSetup([]);
    const fresh = await freshFinding(h.source, planSsh('g'), h.ctx);
    expect(fresh.current).toBeUndefined();
    expect(fresh.remoteHost).toBe(FAR);
    expect(h.far.calls).toEqual([]);
  });
});

describe('freshFinding: remote port checks', () => {
  it("with them on, a remote entry's own machine:port is connected to again now (only the remote ones of what is judged), and judged on that", async () => {
    const h = setup([session('far', { port: 8000, machine: 'laptop' }), session('here', { pid: 100 })]);
    const asked: SessionEntry[][] = [];
    const ctx: FreshContext = {
      ...h.ctx,
      remotePorts: {
        recheck: async (entries) => {
          asked.push([...entries]);
          return new Map([['laptop|8000', { machine: 'laptop', port: 8000, result: 'refused', detail: 'ECONNREFUSED', checkedAt: h.clock.now() }]]);
        },
      },
    };
    const fresh = await freshFinding(h.source, planSession('far'), ctx);
    expect(asked.map((a) => a.map((s) => s.id))).toEqual([['far']]);
    expect(fresh.remotePorts?.get('laptop|8000')).toMatchObject({ result: 'refused' });
    expect(fresh.current).toMatchObject({ verdict: 'ghost', evidence: { port: { port: 8000, result: 'refused' } } });
    expect(h.probes.calls).toEqual([]);

    // A local entry is still checked with them on, but none of its entries is remote: nothing to connect to.
    const local = await freshFinding(h.source, planSession('here'), ctx);
    expect(asked.at(-1)).toEqual([]);
    expect(local.current?.verdict).toBe('ghost');
    // With them off: judged remote, as before.
    expect((await freshFinding(h.source, planSession('far'), h.ctx)).current?.verdict).toBe('remote');
  });
});

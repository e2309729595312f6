// The engine's ssh hosts (RemoteHosts) on their own, against a fake `ssh` client that runs the
// real probe loop under this machine's sh (test/support/fake-ssh.ts), on a hand-driven clock: no
// poll ever fires unless the test advances it, so whatever reaches the facts came from a probe the
// hosts asked for or from the remote's own watchers. What the fleet tests (real sshd hosts) show
// end to end and the engine's mutation run cannot see: when watchers are armed, what each host
// reports while it connects, comes up and reconnects, when the hosts are settled, the R key,
// --ssh-all's hosts and their trackers, and the hosts' bench counters. Then the same fake ssh
// inside the whole engine: --ssh-all with hostile machine names, --probe-remote-ports beside ssh
// (no TCP connect to an ssh-verified machine), a host answering under another name, a host
// flooding the monitor with pushed lines, a bulk eviction across hosts, --ssh naming this host,
// and the engine's clock timing the handshake.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localMachineTest } from '../../src/core/probe-targets.js';
import type { RegistryView, SessionEntry } from '../../src/core/types.js';
import { MAX_SSH_ALL_HOSTS, RemoteHosts, type SshSettings } from '../../src/engine/remote-hosts.js';
import { CADENCE, PUSHED_POLL_FACTOR } from '../../src/engine/os-facts.js';
import type { SshHostConfig } from '../../src/os/ssh-command.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../../src/os/ssh-provider.js';
import { FLOOR_LINES } from '../../src/os/push-budget.js';
import { fakeSsh } from '../support/fake-ssh.js';
import { FakeClock } from './fake-clock.js';
import { agent, deadPid, engineFor, finding, HOST, killAndReap, listNodes, onCleanup, serve, sleeper, source, tempDir, until } from './helpers.js';
import type { LiveEngine } from '../../src/engine/index.js';
import type { EngineSnapshot } from '../../src/engine/types.js';
import { RemotePortChecker } from '../../src/os/remote-port-check.js';
import { countingServer } from '../os/remote-ports-support.js';
import { burner } from '../support/processes.js';
import { sleepMs } from '../support/wait.js';

const HERE = 'this-box';
const BACKOFF_MS = 1_000;

const entry = (machine: string | undefined, fields: { pid?: number; port?: number } = {}): SessionEntry => ({
  source: 'hypivisor',
  id: `${machine}-${fields.pid ?? ''}-${fields.port ?? ''}`,
  machine,
  ...fields,
});
const view = (...sessions: SessionEntry[]): RegistryView => ({ sessions, claims: [] });

/** What the UI and reconcile read of the first host each time the hosts say something changed. */
interface Seen {
  readonly status: string | undefined;
  readonly reason: string | undefined;
  readonly facts: string | undefined;
  readonly settled: boolean;
}

function remoteHosts(hosts: SshHostConfig[], more: { all?: boolean; maxConnecting?: number; command?: string } = {}) {
  const clock = new FakeClock();
  const ssh = fakeSsh();
  const seen: Seen[] = [];
  const rh: RemoteHosts = new RemoteHosts({
    ssh: { hosts, all: more.all, maxConnecting: more.maxConnecting, options: { sshCommand: more.command ?? ssh.command, backoff: { initialMs: BACKOFF_MS, maxMs: BACKOFF_MS } } },
    hostName: HERE,
    hostAliases: [],
    isLocal: localMachineTest(HERE, []),
    intervalScale: 1,
    clock,
    now: () => clock.now(),
    onChange: () => {
      const s = rh.statuses()[0];
      seen.push({ status: s?.state, reason: s?.reason, facts: rh.facts()[0]?.state, settled: rh.settled });
    },
  });
  onCleanup(() => rh.stop());
  return { rh, clock, ssh, seen };
}

/** Every watch a host is asked for, with its state then, and whether the remote accepted it. */
function watches(rh: RemoteHosts, machine: string): { pids: number[]; ports: number[]; state: string; ok?: boolean }[] {
  const host = rh.probeContext(machine)!.provider;
  const calls: { pids: number[]; ports: number[]; state: string; ok?: boolean }[] = [];
  const watch = host.watch.bind(host);
  host.watch = (pids, ports) => {
    const call: (typeof calls)[number] = { pids: [...pids], ports: [...ports], state: host.state.state };
    calls.push(call);
    return watch(pids, ports).then((ok) => {
      call.ok = ok;
      return ok;
    });
  };
  return calls;
}

const settled = (rh: RemoteHosts) => until(() => (rh.settled ? true : undefined), 10_000, 'the hosts settled');

describe('RemoteHosts over a fake ssh running the real probe loop', () => {
  it('a host arms its watchers only once up, with its own entries’ pids and ports; what they push reaches its facts with no poll at all', async () => {
    const live = sleeper();
    const { rh } = remoteHosts([
      { machine: 'build-1', dest: 'build-1' },
      { machine: 'build-2', dest: 'build-2' },
    ]);
    const w1 = watches(rh, 'build-1');
    const w2 = watches(rh, 'build-2');
    rh.setView(
      view(
        entry('build-1', { pid: live.pid }),
        entry('BUILD-1.lab', { port: 39_011 }),
        entry('build-2', { pid: 4_242 }),
        entry(HERE, { pid: 1_234 }),
        entry(undefined, { pid: 999 }),
        entry('elsewhere', { pid: 77 }),
      ),
    );
    // Not up yet (not even started): nothing is armed.
    expect([w1, w2]).toEqual([[], []]);
    rh.start();
    await settled(rh);
    await until(() => (w1[0]?.ok && w2[0]?.ok ? true : undefined), 5_000, 'both armed');
    expect(w1).toEqual([{ pids: [live.pid], ports: [39_011], state: 'up', ok: true }]);
    expect(w2).toEqual([{ pids: [4_242], ports: [], state: 'up', ok: true }]);
    const facts = () => rh.facts()[0]!.facts;
    expect(facts().pids.get(live.pid)).toMatchObject({ kill: 'ok' });
    expect([...rh.facts()[1]!.facts.pids.keys()]).toEqual([4_242]);
    // The clock never moves: only the remote's watcher can tell that the pid is gone.
    await killAndReap(live);
    await until(() => (facts().pids.get(live.pid)?.kill === 'ESRCH' ? true : undefined), 5_000, 'the pushed death');
    expect(rh.counters()[0]!.linesPushed).toBeGreaterThan(0);
  });

  it('watchers are armed again only when the targets change, and after a reconnect; meanwhile a host retrying is down for its last reason', async () => {
    const { rh, clock, seen } = remoteHosts([
      { machine: 'build-1', dest: 'build-1' },
      { machine: 'noauth-1', dest: 'noauth-1' },
    ]);
    const w = watches(rh, 'build-1');
    rh.setView(view(entry('build-1', { pid: 678 }), entry('build-1', { pid: 5 })));
    rh.start();
    // Connecting for the first time: connecting, not down.
    expect(rh.statuses()[0]).toMatchObject({ state: 'connecting', reason: undefined });
    expect(rh.facts()[0]).toMatchObject({ state: 'connecting' });
    expect(rh.settled).toBe(false);
    await settled(rh);
    // Up, yet not settled nor up for reconcile until its first probes are back.
    const upAt = seen.findIndex((s) => s.status === 'up');
    expect(seen[upAt]).toEqual({ status: 'up', reason: undefined, facts: 'connecting', settled: false });
    expect(seen.at(-1)).toEqual({ status: 'up', reason: undefined, facts: 'up', settled: true });
    await until(() => (w[0]?.ok ? true : undefined), 5_000, 'armed');
    expect(w.map((c) => c.pids)).toEqual([[5, 678]]);

    // The same targets in another order: nothing to arm.
    rh.setView(view(entry('build-1', { pid: 5 }), entry('build-1', { pid: 678 })));
    expect(w).toHaveLength(1);
    // Other pids (whose digits run the same), then ports of the same digits as the pids were.
    rh.setView(view(entry('build-1', { pid: 56 }), entry('build-1', { pid: 78 })));
    // A pid nobody asked this host about yet: not settled until it is probed.
    expect(rh.settled).toBe(false);
    await settled(rh);
    rh.setView(view(entry('build-1', { port: 56 }), entry('build-1', { port: 78 })));
    expect(w.map((c) => [c.pids, c.ports])).toEqual([
      [[5, 678], []],
      [[56, 78], []],
      [[], [56, 78]],
    ]);
    await settled(rh);
    await until(() => (w.every((c) => c.ok) ? true : undefined), 5_000, 'armed');

    // The connection drops: down for that reason, and still down for it while it retries.
    const before = seen.length;
    process.kill(rh.probeContext('build-1')!.provider.sshPid!, 'SIGKILL');
    await until(() => (rh.statuses()[0]!.state === 'down' ? true : undefined), 5_000, 'down');
    const down = rh.statuses()[0]!;
    expect(down.reason).toBeTruthy();
    expect(rh.facts()[0]).toMatchObject({ state: 'down', reason: down.reason });
    expect(rh.settled).toBe(true); // a down host has made up its mind
    await clock.advance(BACKOFF_MS);
    await until(() => (rh.facts()[0]!.state === 'up' ? true : undefined), 5_000, 'up again');
    const retry = seen.slice(before);
    const connecting = retry.slice(retry.findIndex((s) => s.status === 'down'), retry.findIndex((s) => s.status === 'up'));
    expect(connecting.length).toBeGreaterThan(1);
    for (const s of connecting) expect(s).toEqual({ status: 'down', reason: down.reason, facts: 'down', settled: expect.any(Boolean) });
    // While it retries (the other host down for good), the hosts are not settled.
    expect(connecting.at(-1)!.settled).toBe(false);
    // A new connection has no watchers: armed again with what it watched.
    await until(() => (w.length === 4 && w[3]!.ok ? true : undefined), 5_000, 'armed again');
    expect(w[3]).toEqual({ pids: [], ports: [56, 78], state: 'up', ok: true });
  });

  it('statuses, facts and a re-probe’s context per host: sanitized, the rtt whole, nothing for a machine that is not a host', async () => {
    const live = sleeper();
    const { rh, clock } = remoteHosts([
      { machine: 'build-1', dest: 'build-1' },
      { machine: 'noauth-1', dest: 'noauth-\u001b]0;x\u0007' },
    ]);
    rh.setView(view(entry('build-1', { pid: live.pid })));
    rh.start();
    await settled(rh);
    const [up, down] = rh.statuses();
    expect(up).toEqual({ machine: 'build-1', dest: 'build-1', transport: 'ssh', state: 'up', remoteName: 'build-1', rttMs: 0, connections: 1 });
    expect(down).toEqual({ machine: 'noauth-1', dest: expect.any(String), transport: 'ssh', state: 'down', kind: 'auth', reason: expect.stringMatching(/^authentication failed: /), connections: 1 });
    expect(down!.dest + down!.reason!).not.toMatch(/[\u0000-\u001f\u007f]/);
    const facts = rh.facts();
    expect(facts).toEqual([
      { machine: 'build-1', transport: 'ssh', state: 'up', rttMs: 0, facts: expect.anything() },
      { machine: 'noauth-1', transport: 'ssh', state: 'down', reason: down!.reason, facts: expect.anything() },
    ]);

    expect(rh.probeContext('build-2')).toBeUndefined();
    expect(rh.progressOf('build-2')).toBeUndefined();
    expect(rh.progressOf('build-1')!.pidCheckedAt(live.pid)).toBeDefined();
    const ctx = rh.probeContext('build-1')!;
    expect(ctx.hostFacts(facts[0]!.facts)).toEqual({ machine: 'build-1', transport: 'ssh', state: 'up', rttMs: 0, facts: facts[0]!.facts });
    expect(ctx.isOn('build-1.lab')).toBe(true);
    expect(ctx.isOn('noauth-1')).toBe(false);
    expect(ctx.isOn(HERE)).toBe(false);
    // An eviction re-probe's fresh facts reach the host's facts; for no host, nothing happens.
    const gone = { pid: live.pid, kill: 'ESRCH' as const, checkedAt: clock.now() + 1 };
    rh.applyFresh('build-2', { pids: new Map([[live.pid, gone]]), ports: new Map() });
    expect(rh.facts()[0]!.facts.pids.get(live.pid)).toMatchObject({ kill: 'ok' });
    rh.applyFresh('build-1', { pids: new Map([[live.pid, gone]]), ports: new Map() });
    expect(rh.facts()[0]!.facts.pids.get(live.pid)).toMatchObject({ kill: 'ESRCH' });
  });

  it('the R key probes every up host (a full and a port round), never a down one; the counters count them and the bytes sent', async () => {
    const { rh } = remoteHosts([
      { machine: 'build-1', dest: 'build-1' },
      { machine: 'noauth-1', dest: 'noauth-1' },
    ]);
    rh.setView(view(entry('build-1', { pid: 4_242 }), entry('build-1', { port: 39_012 }), entry('noauth-1', { pid: 4_343 }), entry('noauth-1', { port: 39_013 })));
    rh.start();
    await settled(rh);
    const host = rh.probeContext('build-1')!.provider;
    const [up, down] = rh.counters();
    expect(up).toEqual({ machine: 'build-1', connections: 1, bytesSent: host.bytesSent, rounds: expect.any(Number), linesPushed: host.linesPushed, linesDropped: 0 });
    expect(up!.bytesSent).toBeGreaterThan(0);
    rh.refresh();
    await until(() => (rh.counters()[0]!.rounds === up!.rounds + 2 ? true : undefined), 5_000, 'a full and a port round');
    expect(rh.counters()[0]!.bytesSent).toBeGreaterThan(up!.bytesSent);
    expect(rh.counters()[1]).toEqual(down);
  });

  it('--ssh-all: a host for each plain machine name the registry gives (not this host, not a configured one), its tracker running only while the hosts run; remote polls are slow', async () => {
    const { rh, clock, ssh } = remoteHosts([{ machine: 'build-1', dest: 'build-1' }], { all: true });
    expect(rh.enabled).toBe(true);
    const names = ['build-1', 'BUILD-1.lab', 'build-2', 'build-2', '-oProxyCommand=x', 'me@build-7', 'a b', HERE, undefined, 'build-3'];
    rh.setView(view(...names.map((m, i) => entry(m, { pid: 5_000 + i }))));
    expect(rh.statuses().map((s) => s.machine)).toEqual(['build-1', 'build-2', 'build-3']);
    expect(clock.intervals()).toEqual([]);
    rh.start();
    // Each host's full and port probes every 2 × PUSHED_POLL_FACTOR cadences (the remote pushes), its process table every 2: no kill tick.
    const perHost = [CADENCE.table * 2, CADENCE.full * 2 * PUSHED_POLL_FACTOR, CADENCE.ports * 2 * PUSHED_POLL_FACTOR].sort((a, b) => a - b);
    expect(clock.intervals()).toEqual([...perHost, ...perHost, ...perHost].sort((a, b) => a - b));
    rh.setView(view(entry('build-4', { pid: 5_100 })));
    expect(clock.intervals()).toHaveLength(12);
    await until(() => (rh.statuses().every((s) => s.state === 'up') ? true : undefined), 10_000, 'all up');
    await rh.stop();
    expect(clock.intervals()).toEqual([]);
    expect(rh.statuses().map((s) => s.state)).toEqual(['down', 'down', 'down', 'down']);
    rh.setView(view(entry('build-5', { pid: 5_200 })));
    expect(rh.statuses().map((s) => s.machine)).toEqual(['build-1', 'build-2', 'build-3', 'build-4', 'build-5']);
    expect(clock.intervals()).toEqual([]);
    expect([...ssh.dests()].sort()).toEqual(['build-1', 'build-2', 'build-3', 'build-4']);
  });

  it('at most maxConnecting hosts handshake at once: the next one is dialled when a slot frees', async () => {
    const ssh = fakeSsh();
    const wrapper = join(tempDir(), 'ssh');
    // silent-*: connects and then says nothing, as an sshd hanging after the TCP accept.
    writeFileSync(wrapper, `#!/bin/sh\nfor a; do prev=$last; last=$a; done\ncase $prev in silent*) exec cat >/dev/null;; esac\nexec '${ssh.command}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const { rh, clock } = remoteHosts(
      [
        { machine: 'silent-1', dest: 'silent-1' },
        { machine: 'build-1', dest: 'build-1' },
      ],
      { maxConnecting: 1, command: wrapper },
    );
    rh.start();
    await new Promise((r) => setTimeout(r, 400));
    expect(ssh.dests()).toEqual([]);
    expect(rh.statuses().map((s) => s.state)).toEqual(['connecting', 'connecting']);
    await clock.advance(DEFAULT_CONNECT_TIMEOUT_MS);
    await until(() => (rh.statuses()[1]!.state === 'up' ? true : undefined), 5_000, 'build-1 up');
    expect(rh.statuses()[0]).toMatchObject({ state: 'down', kind: 'timeout' });
    expect(ssh.dests()).toEqual(['build-1']);
  });
});

function sshEngine(url: string, ssh: Omit<SshSettings, 'options'>, command: string, more: Parameters<typeof engineFor>[1] = {}): LiveEngine {
  return engineFor([source(url)], {
    intervalScale: 0.4,
    ssh: { ...ssh, options: { sshCommand: command, backoff: { initialMs: 60_000, maxMs: 60_000 } } },
    ...more,
  });
}

const hostOf = (snap: EngineSnapshot, machine: string) => snap.hosts?.find((h) => h.machine === machine);
const auditLines = (path: string): Record<string, unknown>[] =>
  readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

describe('ssh hosts in the engine (a fake ssh running the real loop)', () => {
  it('--probe-remote-ports never connects to a machine verified over ssh (the engine’s own wiring); another machine it does', async () => {
    const reg = await serve();
    const verified = await countingServer('127.0.0.2');
    const other = await countingServer('127.0.0.4');
    onCleanup(() => verified.close());
    onCleanup(() => other.close());
    const live = sleeper();
    await agent(reg.url, 'over-ssh', { machine: '127.0.0.2', port: verified.port, pid: live.pid });
    await agent(reg.url, 'by-port', { machine: '127.0.0.4', port: other.port });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [{ machine: '127.0.0.2', dest: '127.0.0.2' }] }, ssh.command, {
      probeRemotePorts: true,
      remotePortCheck: new RemotePortChecker({ timeoutMs: 300, cacheMs: 0 }),
    });
    const snap = await engine.settled(15_000);
    expect(snap.settled).toBe(true);
    expect(finding(snap, 'over-ssh')).toMatchObject({ verdict: 'live', evidence: { host: { ssh: { host: '127.0.0.2', state: 'up' } } } });
    expect(finding(snap, 'by-port')!.reason).toMatch(/accepts from this host/);
    // More rounds: the R key, then one more after it.
    await engine.refresh();
    const seen = other.accepts;
    await engine.refresh();
    await until(() => (other.accepts > seen ? true : undefined), 10_000, 'another round of port checks');
    expect(verified.accepts).toBe(0);
    expect(ssh.dests()).toEqual(['127.0.0.2']);
  });

  it('an ssh-verified agent shows what it costs as a local one does: a CPU burner over half a core over an interval, and its memory; a stopped one is suspended since its stop', async () => {
    const reg = await serve();
    const hot = burner();
    const idle = sleeper();
    await agent(reg.url, 'hot', { machine: 'build-1', pid: hot.pid });
    await agent(reg.url, 'idle', { machine: 'build-1', pid: idle.pid });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [{ machine: 'build-1', dest: 'build-1' }] }, ssh.command);
    const snap = await engine.settled(15_000);
    expect(finding(snap, 'hot')).toMatchObject({ verdict: 'live', evidence: { host: { local: false, ssh: { host: 'build-1', state: 'up' } } } });
    const usage = () => finding(engine.getSnapshot(), 'hot')?.evidence.usage;
    // Read with its first full probe: CPU over its life so far, and its memory.
    await until(() => usage()?.rssBytes !== undefined || undefined, 10_000, () => `a first reading, not ${JSON.stringify(usage())}`);
    // The host pushes only what reconcile can see and is polled slowly: the R key reads every pid
    // again. On a shared, loaded machine one interval may be slow: any interval over half a core will do.
    const hotUsage = await until(
      async () => {
        await engine.refresh();
        await sleepMs(1_000);
        const u = usage();
        return u?.cpuOver === 'interval' && (u.cpuPct ?? 0) > 50 ? u : undefined;
      },
      30_000,
      () => `over 50 % of a core over an interval, not ${JSON.stringify(usage())}`,
    );
    expect(hotUsage.rssBytes).toBeGreaterThan(0);
    expect(finding(engine.getSnapshot(), 'idle')?.evidence.usage?.rssBytes).toBeGreaterThan(0);

    // Ctrl-Z in its pane: the host's watcher pushes the stop; the row says since when, as a local one does.
    process.kill(idle.pid, 'SIGSTOP');
    const stopped = await until(() => {
      const f = finding(engine.getSnapshot(), 'idle');
      return f?.verdict === 'suspended' ? f : undefined;
    }, 15_000, () => `idle suspended, not ${finding(engine.getSnapshot(), 'idle')?.verdict}`);
    expect(stopped.reason).toMatch(/^pid \d+ is stopped \(state T, Ctrl-Z or SIGSTOP\) since \S+: it cannot answer until continued/);
    expect(stopped.evidence.stoppedSince).toBeTypeOf('number');
    expect(stopped.evidence.host.ssh).toMatchObject({ host: 'build-1', state: 'up' });
    process.kill(idle.pid, 'SIGCONT');
  }, 60_000);

  it('before any host is tried, each is connecting, not down: the first frame never says "ssh: 3 down" (issue 27)', async () => {
    const reg = await serve();
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: ['build-1', 'build-2', 'build-3'].map((m) => ({ machine: m, dest: m })) }, ssh.command);
    // The snapshot the UI draws first, before start(): nothing has been tried.
    expect(engine.getSnapshot().hosts?.map((h) => [h.machine, h.state, h.reason])).toEqual([
      ['build-1', 'connecting', undefined],
      ['build-2', 'connecting', undefined],
      ['build-3', 'connecting', undefined],
    ]);
  });

  it('a host answering under another name: its entries are unverified with the mismatch as evidence, and not evicted without force', async () => {
    const reg = await serve();
    const gone = await deadPid();
    await agent(reg.url, 'on-99', { machine: 'build-99', pid: gone });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [{ machine: 'build-99', dest: 'build-42' }] }, ssh.command);
    const f = await until(() => {
      const x = finding(engine.getSnapshot(), 'on-99');
      return x?.reason.includes('answers as') ? x : undefined;
    }, 15_000, 'the mismatch');
    expect(f).toMatchObject({
      verdict: 'unverified',
      problem: false,
      evictable: false,
      reason: 'ssh build-99 down: answers as "build-42", not "build-99"',
      evidence: { host: { machine: 'build-99', local: false, ssh: { host: 'build-99', state: 'down', reason: 'answers as "build-42", not "build-99"' } } },
    });
    expect(hostOf(engine.getSnapshot(), 'build-99')).toMatchObject({ state: 'down', kind: 'mismatch', remoteName: 'build-42', dest: 'build-42' });
    const summary = await engine.evict({ selection: [f], force: false });
    expect(summary.results).toEqual([]);
    expect(summary.needsForce.map((x) => x.id)).toEqual(['on-99']);
    expect((await listNodes(reg.url)).map((n) => n.id)).toContain('on-99');
  });

  it('a host pushing lines nonstop: its entries are unverified with the flood as evidence, said once, nothing more of it read; the other host keeps its verdicts; calm again, it is verified again by itself', async () => {
    const reg = await serve();
    const gone = await deadPid();
    await agent(reg.url, 'calm-live', { machine: 'build-1', pid: sleeper().pid });
    await agent(reg.url, 'calm-ghost', { machine: 'build-1', pid: gone });
    await agent(reg.url, 'flood-live', { machine: 'flood-1', pid: sleeper().pid });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [{ machine: 'build-1', dest: 'build-1' }, { machine: 'flood-1', dest: 'flood-1' }] }, ssh.command);
    const verdicts = (snap: EngineSnapshot) => ['calm-live', 'calm-ghost', 'flood-live'].map((id) => finding(snap, id)?.verdict).join(' ');
    await until(() => (verdicts(engine.getSnapshot()) === 'live ghost live' ? true : undefined), 15_000, () => `the first verdicts (${verdicts(engine.getSnapshot())})`);
    // Every verdict the entries get from here on.
    const seen = new Set<string>();
    engine.subscribe(() => seen.add(verdicts(engine.getSnapshot())));
    const flooded = () => engine.stats().ssh!.find((h) => h.machine === 'flood-1')!;
    const floodNotices = () => (engine.getSnapshot().os.notices ?? []).filter((n) => n.includes('flood-1'));

    // A runaway watcher on flood-1: one true line (nothing listens on port 1), over and over.
    ssh.flood(['+L 1 no']);
    const f = await until(() => {
      const x = finding(engine.getSnapshot(), 'flood-live');
      return x?.verdict === 'unverified' ? x : undefined;
    }, 15_000, 'the flooding host’s entry unverified');
    expect(f.reason).toMatch(/^ssh flood-1 down: sends more than \d+ lines\/s; ignored until it calms down$/);
    expect(f).toMatchObject({ problem: false, evictable: false, evidence: { host: { local: false, ssh: { host: 'flood-1', state: 'down' } } } });
    expect(hostOf(engine.getSnapshot(), 'flood-1')).toMatchObject({ state: 'down', kind: 'flood' });
    // The flood goes on: what it pushes is dropped unread, and it is said once.
    const read = flooded().linesPushed;
    const dropped = flooded().linesDropped;
    await until(() => (flooded().linesDropped > dropped + 3 * FLOOR_LINES ? true : undefined), 20_000, 'more of the flood');
    expect(flooded().linesPushed).toBe(read);
    expect(floodNotices()).toEqual([expect.stringMatching(/^ssh flood-1 sends more than \d+ lines\/s; ignored until it calms down$/)]);

    ssh.calm();
    const back = await until(() => {
      const x = finding(engine.getSnapshot(), 'flood-live');
      return x?.verdict === 'live' ? x : undefined;
    }, 20_000, 'the flooding host’s entry verified again');
    expect(back.reason).toMatch(/\(via ssh flood-1\)$/);
    expect(hostOf(engine.getSnapshot(), 'flood-1')).toMatchObject({ state: 'up', connections: 1 });
    expect([...seen].filter((v) => !v.startsWith('live ghost '))).toEqual([]);
    expect(floodNotices()).toHaveLength(1);
  }, 60_000);

  it('a bulk eviction across two hosts re-probes each over its own connection and audits each host and the transport; a down host’s entry needs force', async () => {
    const reg = await serve();
    const [d41, d42, dn] = [await deadPid(), await deadPid(), await deadPid()];
    await agent(reg.url, 'ghost-41', { machine: 'build-41', pid: d41 });
    await agent(reg.url, 'ghost-42', { machine: 'build-42.lab', pid: d42 });
    await agent(reg.url, 'ghost-noauth', { machine: 'noauth', pid: dn });
    const ssh = fakeSsh();
    const audit = join(tempDir(), 'audit.jsonl');
    const engine = sshEngine(
      reg.url,
      { hosts: [{ machine: 'build-41', dest: 'build-41' }, { machine: 'build-42', dest: 'build-42' }, { machine: 'noauth', dest: 'noauth-dest' }] },
      ssh.command,
      { auditLogPath: audit },
    );
    await until(() => (finding(engine.getSnapshot(), 'ghost-41')?.verdict === 'ghost' && finding(engine.getSnapshot(), 'ghost-42')?.verdict === 'ghost' ? true : undefined), 15_000, 'both ghosts');
    const snap = engine.getSnapshot();
    const noauth = finding(snap, 'ghost-noauth')!;
    expect(noauth).toMatchObject({ verdict: 'unverified', evictable: false });
    expect(noauth.reason).toMatch(/^ssh noauth down: authentication failed: me@noauth-dest: Permission denied/);
    const summary = await engine.evict({ selection: [finding(snap, 'ghost-41')!, finding(snap, 'ghost-42')!, noauth], force: false });
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([
      ['ghost-41', 'evicted'],
      ['ghost-42', 'evicted'],
    ]);
    expect(summary.needsForce.map((f) => f.id)).toEqual(['ghost-noauth']);
    const intents = auditLines(audit).filter((l) => l.kind === 'intent');
    expect(intents.map((l) => [(l.action as { id: string }).id, l.remoteHost, l.transport, l.via])).toEqual([
      ['ghost-41', 'build-41', 'ssh', 'ssh build-41'],
      ['ghost-42', 'build-42', 'ssh', 'ssh build-42'],
    ]);
    expect(intents[0]!.reason).toMatch(/\(via ssh build-41\)$/);
    // Re-probed over the connections already open: one each, never a new one for the eviction.
    expect(engine.getSnapshot().hosts?.map((h) => [h.machine, h.connections])).toEqual([
      ['build-41', 1],
      ['build-42', 1],
      ['noauth', 1],
    ]);
    expect((await listNodes(reg.url)).map((n) => n.id)).toEqual(['ghost-noauth']);
  });

  it('--ssh-all dials only names that read as host names, each host once, never this host, at most MAX_SSH_ALL_HOSTS', async () => {
    const reg = await serve();
    const live = sleeper();
    const hostile = ['-oProxyCommand=touch /tmp/gw-pwned', '-oProxyCommand=x', 'me@build-7', 'a b', 'x%h', 'ünï', '../etc', 'a;id', '$(id)', 'line\nbreak', '\u001b]0;title\u0007'];
    await agent(reg.url, 'on-41', { machine: 'build-41', pid: live.pid });
    await agent(reg.url, 'on-41-fqdn', { machine: 'BUILD-41.lab', pid: sleeper().pid, port: 39_001 });
    await agent(reg.url, 'here', { machine: HOST, pid: live.pid, port: 39_002 });
    for (const [i, m] of hostile.entries()) await agent(reg.url, `hostile-${i}`, { machine: m, pid: 7 });
    const caps = Array.from({ length: MAX_SSH_ALL_HOSTS + 6 }, (_, i) => `cap-${i}`);
    for (const m of caps) await agent(reg.url, `s-${m}`, { machine: m, pid: 7 });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [], all: true }, ssh.command);
    const bothLive = () => ['on-41', 'on-41-fqdn'].every((id) => finding(engine.getSnapshot(), id)?.verdict === 'live');
    await until(() => (ssh.dests().length >= MAX_SSH_ALL_HOSTS && bothLive() ? true : undefined), 20_000, 'the hosts dialled');
    // A moment more: nothing further is dialled (the backoff is a minute).
    await new Promise((r) => setTimeout(r, 300));
    const dests = ssh.dests();
    // Dialled concurrently (8 at a time): in no set order.
    expect([...dests].sort()).toEqual(['build-41', ...caps.slice(0, MAX_SSH_ALL_HOSTS - 1)].sort());
    const snap = engine.getSnapshot();
    expect(finding(snap, 'on-41')!.reason).toMatch(/\(via ssh build-41\)$/);
    expect(finding(snap, 'on-41-fqdn')!.reason).toMatch(/\(via ssh build-41\)$/);
    expect(finding(snap, 'here')!.evidence.host).toMatchObject({ local: true });
    expect(finding(snap, 'hostile-0')).toMatchObject({ verdict: 'remote' });
    expect(finding(snap, `s-cap-${MAX_SSH_ALL_HOSTS}`)).toMatchObject({ verdict: 'remote' });
    expect(finding(snap, 's-cap-0')!.reason).toMatch(/^ssh cap-0 down: unknown host/);
    expect(snap.hosts).toHaveLength(MAX_SSH_ALL_HOSTS);
    expect(existsSync('/tmp/gw-pwned')).toBe(false);
  });

  it('--ssh naming this host is never dialled: its entries are judged here', async () => {
    const reg = await serve();
    const live = sleeper();
    await agent(reg.url, 'mine', { machine: HOST, pid: live.pid });
    const ssh = fakeSsh();
    const engine = sshEngine(reg.url, { hosts: [{ machine: HOST.toUpperCase(), dest: 'elsewhere' }] }, ssh.command);
    const snap = await engine.settled(10_000);
    expect(finding(snap, 'mine')).toMatchObject({ verdict: 'live', evidence: { host: { local: true } } });
    expect(finding(snap, 'mine')!.evidence.host.ssh).toBeUndefined();
    expect(snap.hosts).toBeUndefined();
    expect(ssh.dests()).toEqual([]);
  });
});

describe('the engine’s clock times its ssh hosts', () => {
  it('a host that never answers its handshake is down (timeout) once the engine’s clock passes the connect limit, and not before', async () => {
    const dir = tempDir();
    const silent = join(dir, 'silent-ssh');
    // Connects and then says nothing, as a host whose sshd hangs after the TCP accept.
    writeFileSync(silent, '#!/bin/sh\nexec cat >/dev/null\n');
    chmodSync(silent, 0o755);
    const clock = new FakeClock();
    const engine = engineFor([], { clock, ssh: { hosts: [{ machine: 'build-9', dest: 'build-9' }], options: { sshCommand: silent, backoff: { initialMs: 60_000, maxMs: 60_000 } } } });
    const state = () => hostOf(engine.getSnapshot(), 'build-9');
    // Snapshots are published on the engine's clock too: step it a little while real time passes.
    const step = async (what: string, ok: () => boolean) => {
      const end = Date.now() + 5_000;
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what} (${JSON.stringify(state())})`);
        await clock.advance(50);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    await step('build-9 connecting', () => state()?.state === 'connecting');
    const connectingAt = clock.t;
    await clock.advance(DEFAULT_CONNECT_TIMEOUT_MS - 2_000);
    await step('a publish', () => clock.t > connectingAt);
    expect(state()?.state).toBe('connecting');
    await clock.advance(3_000);
    await step('build-9 down', () => state()?.state === 'down');
    expect(state()).toMatchObject({ state: 'down', kind: 'timeout' });
  });
});

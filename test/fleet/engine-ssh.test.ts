// The engine verifying other hosts over ssh, against real fake hosts (test/support/fake-host.ts:
// own hostname, own pids and /proc, a real sshd on loopback). Agents are real processes inside
// the hosts, registered with a registry (a stock hypivisor stand-in) under their host's name and
// their inside pid. Each host's entries get the same verdicts as local ones, from that host's
// facts; a host that cannot answer (sshd stopped, wrong host key, refused key, another name)
// makes its entries unverified and nothing of it is evicted; an eviction re-probes over ssh.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createEngine, type LiveEngine } from '../../src/engine/index.js';
import type { EngineFinding, EngineSnapshot } from '../../src/engine/types.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { FAKE_HOST_REQUIREMENT, startFakeHost, startPiAgentIn, type FakeHost, type HostAgent, type InHostProcess } from '../support/fake-host.js';
import { describeOn } from '../support/platform.js';
import { writeFleetSshClient, type FleetSshClient } from '../../src/demo/fleet-ssh.js';
import { processesIn } from '../../src/demo/host-processes.js';
import { startStockHypivisor, type StockHypivisor } from '../support/stock-hypivisor.js';
import { inCi } from '../support/summary-reporter.js';
import { runCli } from '../support/cli.js';
import { until } from '../support/wait.js';

const describeLinux = describeOn(['linux'], 'namespaces (unshare, nsenter) are Linux only', FAKE_HOST_REQUIREMENT === undefined || inCi());

/** Entries registered by hand, each on its own registry connection (held open: the entry stays active). */
async function register(url: string, node: Record<string, unknown>): Promise<WebSocket> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const answered = new Promise((resolve) => ws.on('message', (d) => (String(d).includes('"registered"') ? resolve(undefined) : undefined)));
  ws.send(JSON.stringify({ id: 'r', method: 'register', params: { cwd: '/repo', status: 'active', ...node } }));
  await answered;
  return ws;
}

/** Child processes of this test named ssh (the engine's connections). */
function sshChildren(): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'ssh' && ppid === process.pid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * The probe loops running on a fake host and their watcher subshells (outside pids, zombies
 * aside): every `sh -c '<the loop>'` process, split by whether its parent is one too.
 */
function probeShells(host: FakeHost): { loops: number[]; watchers: number[] } {
  const shells = new Map<number, number>();
  for (const pid of processesIn(host.pidNamespace)) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('sh\0-c\0export LC_ALL=C TZ=UTC0')) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const [state = '', ppid = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') shells.set(pid, Number(ppid));
    } catch {
      // gone meanwhile
    }
  }
  const loops = [...shells.keys()].filter((pid) => !shells.has(shells.get(pid)!));
  return { loops, watchers: [...shells.keys()].filter((pid) => shells.has(shells.get(pid)!)) };
}

describeLinux('the engine verifies other hosts over ssh', () => {
  let build: FakeHost;
  let gpu: FakeHost;
  let badKey: FakeHost;
  let noAuth: FakeHost;
  let registry: StockHypivisor;
  let engine: LiveEngine;
  let dir: string;
  let client: FleetSshClient;
  const sockets: WebSocket[] = [];
  const procs: InHostProcess[] = [];
  const agents: Record<string, HostAgent> = {};
  const ids: Record<string, string> = {};

  const snap = (): EngineSnapshot => engine.getSnapshot();
  const find = (id: string): EngineFinding | undefined => snap().findings.find((f) => f.id === id);
  const waitFor = <T>(what: string, fn: () => T | undefined | false, ms = 15_000): Promise<T> =>
    until(fn, ms, () => {
      const rows = snap().findings.map((f) => `${f.id} ${f.verdict}: ${f.reason}`).join('\n');
      return `${what}\nhosts: ${JSON.stringify(snap().hosts)}\n${rows}`;
    });
  const verdictOf = (id: string, verdict: string) => waitFor(`${id} ${verdict}`, () => (find(id)?.verdict === verdict ? find(id) : undefined));
  const audit = (): Record<string, unknown>[] => readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const inHost = async (host: FakeHost): Promise<InHostProcess> => {
    const p = await host.spawnInHost('sleep', ['300']);
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    if (FAKE_HOST_REQUIREMENT !== undefined) throw new Error(`CI=true and fake hosts ${FAKE_HOST_REQUIREMENT}`);
    dir = mkdtempSync(join(tmpdir(), 'gw-fleet-'));
    [build, gpu, badKey, noAuth, registry] = await Promise.all([
      startFakeHost({ hostname: 'build-42' }),
      startFakeHost({ hostname: 'gpu-7' }),
      startFakeHost({ hostname: 'keyhost', hostKey: 'wrong' }),
      startFakeHost({ hostname: 'noauth', authorized: false }),
      startStockHypivisor(),
    ]);
    // One ssh_config for every host (its Host aliases), and a client that reads only it.
    client = writeFleetSshClient([build, gpu, badKey, noAuth], dir);
    engine = createEngine({
      sources: [new HypivisorSource({ url: registry.url, requestTimeoutMs: 3000, backoffInitialMs: 20 })],
      hostName: hostname(),
      auditLogPath: join(dir, 'audit.jsonl'),
      intervalScale: 0.4,
      ssh: {
        hosts: [
          { machine: 'build-42', dest: 'build-42' },
          { machine: 'gpu-7', dest: 'gpu-7' },
          { machine: 'keyhost', dest: 'keyhost' },
          { machine: 'noauth', dest: 'noauth' },
          // build-42's sshd, but the registry's build-99: the host answers with another name.
          { machine: 'build-99', dest: 'build-42' },
        ],
        options: { sshCommand: client.command, backoff: { initialMs: 100, maxMs: 400 } },
      },
    });
    engine.start();
  });

  afterAll(async () => {
    await engine?.stop();
    for (const ws of sockets) ws.terminate();
    await Promise.all([...procs.map((p) => p.kill()), ...Object.values(agents).map((a) => a.kill())]);
    await Promise.all([build?.close(), gpu?.close(), badKey?.close(), noAuth?.close(), registry?.close()]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('judges each host’s entries by that host’s facts: live, ghost, zombie, reused, superseded, pending', async () => {
    // Reused first: its pid must be recycled well after ghostwatch first saw the entry (the start tolerance is 2 s).
    const first = await inHost(build);
    sockets.push(await register(registry.url, { id: 'reused', machine: 'build-42', port: 41001, pid: first.insidePid }));
    await verdictOf('reused', 'live');
    const seenAt = Date.now();

    const [live, dies, twice, gpuLive, gpuDies] = await Promise.all([
      startPiAgentIn(build, registry.url),
      startPiAgentIn(build, registry.url),
      startPiAgentIn(build, registry.url, ['--sessions', '2']),
      startPiAgentIn(gpu, registry.url),
      startPiAgentIn(gpu, registry.url),
    ]);
    Object.assign(agents, { live, twice, gpuLive });
    Object.assign(ids, { live: live.id, ghost: dies.id, older: twice.ids[0]!, newer: twice.ids[1]!, gpuLive: gpuLive.id, gpuGhost: gpuDies.id });
    await Promise.all([dies.kill(), gpuDies.kill()]);
    const zombie = await build.makeZombie();
    procs.push(zombie.parent);
    sockets.push(await register(registry.url, { id: 'zombie', machine: 'build-42', port: 41002, pid: zombie.insidePid }));
    const gone = await build.spawnInHost('sleep', ['300']);
    await gone.kill();
    sockets.push(await register(registry.url, { id: 'pending-1', machine: 'build-42', port: 41003, pid: gone.insidePid }));

    await new Promise((r) => setTimeout(r, Math.max(0, seenAt + 3_500 - Date.now())));
    await first.kill();
    procs.push(await build.spawnWithPid(first.insidePid, 'sleep', ['301']));

    const live42 = await verdictOf(ids.live!, 'live');
    expect(live42.reason).toBe(`pid ${live.insidePid} is alive (via ssh build-42)`);
    expect(live42.evidence.host.ssh).toMatchObject({ host: 'build-42', state: 'up', via: expect.stringMatching(/^via ssh build-42 \(rtt \d+ ms\)$/) });
    expect(live42.evidence.host.local).toBe(false);
    // What it costs, read over ssh with its state (the MEM column of an ssh-verified row).
    const read = await waitFor(`${ids.live} memory`, () => find(ids.live!)?.evidence.usage);
    expect(read.rssBytes).toBeGreaterThan(0);
    expect(['life', 'interval']).toContain(read.cpuOver);
    expect((await verdictOf(ids.ghost!, 'ghost')).reason).toMatch(/^registry: offline since [\d:]+; OS: pid \d+ is gone \(ESRCH\) \(via ssh build-42\)$/);
    expect((await verdictOf('zombie', 'zombie')).reason).toMatch(/zombie/);
    expect((await verdictOf('reused', 'reused')).reason).toMatch(/recycled \(via ssh build-42\)$/);
    expect((await verdictOf(ids.older!, 'superseded')).reason).toMatch(new RegExp(`newer entry ${ids.newer}`));
    await verdictOf(ids.newer!, 'live');
    expect((await verdictOf('pending-1', 'pending')).reason).toMatch(/placeholder whose process is dead/);
    await verdictOf(ids.gpuLive!, 'live');
    await verdictOf(ids.gpuGhost!, 'ghost');
    expect(snap().hosts?.filter((h) => h.state === 'up').map((h) => h.machine)).toEqual(['build-42', 'gpu-7']);
    // One connection per host for the whole run so far.
    expect(engine.stats().ssh?.find((h) => h.machine === 'build-42')?.connections).toBe(1);
  });

  it('a wrong host key, a refused key and a host answering under another name: one clear line each, entries unverified', async () => {
    sockets.push(
      await register(registry.url, { id: 'on-keyhost', machine: 'keyhost', port: 41010, pid: 4321 }),
      await register(registry.url, { id: 'on-noauth', machine: 'noauth', port: 41011, pid: 4321 }),
      await register(registry.url, { id: 'on-99', machine: 'build-99', port: 41012, pid: 4321 }),
    );
    const key = await verdictOf('on-keyhost', 'unverified');
    expect(key.reason).toMatch(/^ssh keyhost down: host key not trusted: /);
    expect((await verdictOf('on-noauth', 'unverified')).reason).toMatch(/^ssh noauth down: authentication failed: .*Permission denied/);
    expect((await verdictOf('on-99', 'unverified')).reason).toBe('ssh build-99 down: answers as "build-42", not "build-99"');
    const hosts = snap().hosts ?? [];
    expect(hosts.find((h) => h.machine === 'keyhost')).toMatchObject({ state: 'down', kind: 'host-key' });
    expect(hosts.find((h) => h.machine === 'noauth')).toMatchObject({ state: 'down', kind: 'auth' });
    expect(hosts.find((h) => h.machine === 'build-99')).toMatchObject({ state: 'down', kind: 'mismatch', remoteName: 'build-42' });
    for (const h of hosts) expect(h.reason ?? '').not.toMatch(/\n|password:|passphrase/i);
    for (const id of ['on-keyhost', 'on-noauth', 'on-99']) expect(find(id)?.problem).toBe(false);
  });

  it('evicts a remote ghost after re-probing it over ssh, and refuses one whose pid lives again', async () => {
    const ghost = await verdictOf(ids.ghost!, 'ghost');
    const done = await engine.evict({ selection: [ghost], force: false });
    expect(done.results.map((r) => r.outcome)).toEqual(['evicted']);
    expect(registry.nodes.has(ids.ghost!)).toBe(false);
    const intent = audit().find((l) => l.kind === 'intent' && (l.action as { id?: string } | undefined)?.id === ids.ghost);
    expect(intent).toMatchObject({ via: 'ssh build-42', transport: 'ssh', remoteHost: 'build-42', verdict: 'ghost' });

    // A ghost whose pid is taken again right before the send: the re-probe over ssh sees it alive.
    const dead = await build.spawnInHost('sleep', ['300']);
    await dead.kill();
    sockets.push(await register(registry.url, { id: 'revives', machine: 'build-42', port: 41004, pid: dead.insidePid }));
    const planned = await verdictOf('revives', 'ghost');
    procs.push(await build.spawnWithPid(dead.insidePid, 'sleep', ['302']));
    const refused = await engine.evict({ selection: [planned], force: false });
    expect(refused.results[0]).toMatchObject({ outcome: 'skipped', detail: expect.stringMatching(/it is now live/) });
    expect(registry.nodes.has('revives')).toBe(true);
    const skip = audit().find((l) => l.kind === 'skip' && (l.action as { id?: string } | undefined)?.id === 'revives');
    expect(skip).toMatchObject({ via: 'ssh build-42', verdict: 'live' });
    expect((skip?.evidence as { kill?: string } | undefined)?.kill).toBe('ok');
  });

  it('a host whose sshd stops mid-run: its entries go unverified with the reason, and nothing of it is evicted', async () => {
    const ghost = await verdictOf(ids.gpuGhost!, 'ghost');
    await gpu.stopSshd();
    const down = await verdictOf(ids.gpuGhost!, 'unverified');
    expect(down.reason).toMatch(/^ssh gpu-7 down: connection (dropped|refused)\b.*; the registry marks it offline$/);
    expect((await verdictOf(ids.gpuLive!, 'unverified')).problem).toBe(false);
    expect(snap().findings.filter((f) => f.evidence.host.ssh?.host === 'gpu-7' && f.problem)).toEqual([]);
    // The ghost chosen while gpu-7 was up: its re-check cannot verify it, so it is not sent.
    const done = await engine.evict({ selection: [ghost], force: false });
    expect(done.results[0]?.outcome).toBe('skipped');
    expect(registry.nodes.has(ids.gpuGhost!)).toBe(true);
    // Chosen now, unverified: it needs force.
    const none = await engine.evict({ selection: [down], force: false });
    expect(none.needsForce).toHaveLength(1);
    expect(registry.nodes.has(ids.gpuGhost!)).toBe(true);
    await gpu.startSshd();
    await verdictOf(ids.gpuGhost!, 'ghost');
  });

  it('a dropped connection is made again and the verdicts come back; the old loop’s watchers end with it', async () => {
    await verdictOf(ids.live!, 'live');
    const before = engine.stats().ssh?.find((h) => h.machine === 'build-42')?.connections ?? 0;
    const oldWatchers = probeShells(build).watchers;
    expect(oldWatchers.length).toBeGreaterThan(0);
    await build.dropConnections();
    await waitFor('build-42 reconnected', () => (engine.stats().ssh?.find((h) => h.machine === 'build-42')?.connections ?? 0) > before && snap().hosts?.find((h) => h.machine === 'build-42')?.state === 'up');
    await verdictOf(ids.live!, 'live');
    await verdictOf('zombie', 'zombie');
    // No orphan on the host: every watcher of the dropped loop is gone, the new loop has its own.
    await waitFor('the dropped loop’s watchers to end', () => probeShells(build).watchers.every((pid) => !oldWatchers.includes(pid)));
    await waitFor('the new loop’s watchers', () => probeShells(build).watchers.length > 0);
  });

  it('an idle host is asked nothing: a kill there is pushed by its watcher, with no request sent', async () => {
    const victim = await inHost(gpu);
    sockets.push(await register(registry.url, { id: 'pushed', machine: 'gpu-7', port: 41004, pid: victim.insidePid }));
    await verdictOf('pushed', 'live');
    await waitFor('gpu-7 settled', () => snap().settled);
    const gpuStats = () => engine.stats().ssh!.find((h) => h.machine === 'gpu-7')!;
    // Longer than several kill ticks of the old polling (every 200 ms at this interval scale). The
    // slow net (a full and a port probe every 24 s here) may fall into one window, not into two.
    const quiet = async () => {
      const start = gpuStats();
      await new Promise((r) => setTimeout(r, 1_500));
      return { start, end: gpuStats() };
    };
    let window = await quiet();
    if (window.end.rounds !== window.start.rounds) window = await quiet();
    expect(window.end.bytesSent).toBe(window.start.bytesSent);
    const before = gpuStats();
    await victim.kill();
    expect((await verdictOf('pushed', 'ghost')).reason).toMatch(/gone \(ESRCH\) \(via ssh gpu-7\)$/);
    const after = gpuStats();
    if (after.rounds === before.rounds) expect(after.bytesSent).toBe(before.bytesSent);
    expect(after.linesPushed).toBeGreaterThan(before.linesPushed);
  });

  it('check --json (the built CLI, the system ssh on PATH) gives each entry its verdict over ssh and each host its state', async () => {
    // `ssh` on PATH reads the fake hosts' config: exactly what a user's ~/.ssh/config does.
    const env = { ...process.env, PATH: `${client.binDir}:${process.env.PATH ?? ''}`, HYPIVISOR_WS: registry.url, XDG_CONFIG_HOME: '/nonexistent', XDG_STATE_HOME: dir, NO_COLOR: '1' };
    const run = await runCli(['check', '--json', '--ssh', 'build-42=build-42', '--ssh', 'noauth=noauth'], env);
    expect(run.code, `check said:\n${run.stdout}\n${run.stderr}`).toBe(1);
    const report = JSON.parse(run.stdout) as { findings: { id: string; verdict: string; reason: string }[]; hosts: { machine: string; state: string; kind?: string }[] };
    const verdicts = Object.fromEntries(report.findings.map((f) => [f.id, f.verdict]));
    // (One snapshot: the two sessions of one process joined together, so neither is superseded here.)
    // gpu-7 is not verified by this run: its entries are what the registry says, as without ssh.
    expect(verdicts).toMatchObject({ [ids.live!]: 'live', zombie: 'zombie', 'pending-1': 'pending', 'on-noauth': 'unverified', [ids.gpuLive!]: 'remote', [ids.gpuGhost!]: 'offline' });
    expect(report.hosts.map((h) => [h.machine, h.state, h.kind])).toEqual([
      ['build-42', 'up', undefined],
      ['noauth', 'down', 'auth'],
    ]);
  });

  it('stop closes every ssh connection, and no probe loop or watcher is left on the hosts', async () => {
    expect(sshChildren().length).toBeGreaterThan(0);
    expect(probeShells(gpu).watchers.length).toBeGreaterThan(0);
    await engine.stop();
    expect(sshChildren()).toEqual([]);
    await waitFor('the hosts’ probe loops and watchers to end', () => [build, gpu].every((h) => probeShells(h).loops.length + probeShells(h).watchers.length === 0));
  });
});

// The engine's ssh hosts against a fake `ssh` client that runs the real probe loop under this
// machine's sh, with a `hostname` on its PATH that answers the destination's name (so a host's
// "remote" pids are this machine's: real, and the loop real). It logs every destination it is
// asked for. What the fleet tests on namespaced hosts do not cover: --ssh-all with hostile machine
// names, --probe-remote-ports beside ssh (no TCP connect to an ssh-verified machine), a host
// answering under another name, a bulk eviction across hosts, and --ssh naming this host.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LiveEngine } from '../../src/engine/index.js';
import type { EngineSnapshot } from '../../src/engine/types.js';
import type { SshSettings } from '../../src/engine/remote-hosts.js';
import { MAX_SSH_ALL_HOSTS } from '../../src/engine/remote-hosts.js';
import { RemotePortChecker } from '../../src/os/remote-port-check.js';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../../src/os/ssh-provider.js';
import { FakeClock } from './fake-clock.js';
import { countingServer } from '../os/remote-ports-support.js';
import { fakeSsh } from '../support/fake-ssh.js';
import { agent, deadPid, engineFor, finding, HOST, listNodes, onCleanup, serve, sleeper, source, tempDir, until } from './helpers.js';

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

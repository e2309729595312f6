// The ssh provider against a fake `ssh` on PATH that runs the remote command under the local sh
// (the same loop ssh would run, no sshd needed), or fails the way OpenSSH does.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { classifySshExit, sshArgs, type SshHostStatus } from '../../src/os/ssh-command.js';
import { SshFleet } from '../../src/os/ssh-fleet.js';
import { SshHost, type SshClock } from '../../src/os/ssh-provider.js';
import { FLOOR_LINES } from '../../src/os/push-budget.js';
import { fakeSsh } from '../support/fake-ssh.js';
import { killAndReap, spawnSleep } from '../support/processes.js';
import { until } from '../support/wait.js';
import type { ChildProcess } from 'node:child_process';
import type { PidFacts, PortFacts } from '../../src/core/types.js';

let dir = '';
const hosts: SshHost[] = [];
const spawned: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
  await Promise.all(spawned.splice(0).map(killAndReap));
});
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-fake-ssh-'));
  // Runs the last argument (the remote command) as a login shell would; logs each call.
  writeFileSync(join(dir, 'ok-ssh'), `#!/bin/sh\necho "$*" >> "${dir}/calls"\nfor a; do last=$a; done\nexec sh -c "$last"\n`);
  writeFileSync(join(dir, 'gated-ssh'), `#!/bin/sh\nwhile [ ! -e "${dir}/go" ]; do sleep 0.02; done\nfor a; do last=$a; done\nexec sh -c "$last"\n`);
  // A remote that pushes a line of no known shape right after the handshake.
  writeFileSync(join(dir, 'bad-push-ssh'), `#!/bin/sh\necho "ghostwatch-probe 1 ps now=$(date +%s)"\nread l\necho "H $(hostname)"\nsleep 0.2\necho "+K o"\nexec sleep 30\n`);
  // A remote that pushes 5,000 lines between its handshake and its name (a budget's second is 1,000).
  writeFileSync(
    join(dir, 'flood-first-ssh'),
    `#!/bin/sh\necho "ghostwatch-probe 1 ps now=$(date +%s)"\ni=0\nwhile [ $i -lt 5000 ]; do echo "+L 1 no"; i=$((i+1)); done\nread l\necho "H $(hostname)"\nexec sleep 60\n`,
  );
  // A remote that answers every pid as alive, started at tick 999999999999999999 (some 300 million years after boot).
  writeFileSync(
    join(dir, 'far-start-ssh'),
    `#!/bin/sh\nnow=$(date +%s)\necho "ghostwatch-probe 1 proc btime=$((now - 1000)) clk=100 now=$now"\nwhile read v a; do case $v in\nH) echo "H $(hostname)";;\nP) for p in $a; do echo "P $p ok S - - 999999999999999999"; done;;\nW) echo "W ok";;\nV) echo "V ok";;\n*) echo "! refused";;\nesac; done\n`,
  );
  writeFileSync(join(dir, 'auth-ssh'), `#!/bin/sh\necho call >> "${dir}/auth-calls"\necho 'me@build-42.internal: Permission denied (publickey,password).' >&2\nexit 255\n`);
  for (const f of ['ok-ssh', 'gated-ssh', 'auth-ssh', 'bad-push-ssh', 'flood-first-ssh', 'far-start-ssh']) chmodSync(join(dir, f), 0o755);
  return () => rmSync(dir, { recursive: true, force: true });
});

function start(host: SshHost): SshHost {
  hosts.push(host);
  host.start();
  return host;
}

const waitState = (h: SshHost, state: SshHostStatus['state'], timeoutMs = 10_000) => until(() => (h.state.state === state ? h.state : undefined), timeoutMs);

describe('SshHost over a fake ssh running the real loop', () => {
  it('comes up, answers pids and ports over one connection, with rtt in its evidence', async () => {
    const h = start(new SshHost({ machine: hostname(), dest: 'me@here', port: 2222 }, { sshCommand: join(dir, 'ok-ssh') }));
    expect((await waitState(h, 'up'))?.remoteName).toBe(hostname());
    const live = spawnSleep();
    spawned.push(live);
    const dead = spawnSleep();
    await killAndReap(dead);
    const first = await h.probePids([live.pid, dead.pid, 0], { full: true });
    expect(first.get(live.pid)).toMatchObject({ kill: 'ok', state: 'S' });
    expect(first.get(live.pid)?.startedAt).toBeTypeOf('number');
    // What it costs, as read with its state: CPU time so far and resident memory (the engine's meter of this host turns them into CPU %).
    expect(first.get(live.pid)).toMatchObject({ cpuMs: expect.any(Number), rssBytes: expect.any(Number) });
    expect(first.get(live.pid)!.rssBytes).toBeGreaterThan(0);
    expect(first.get(dead.pid)).toMatchObject({ kill: 'ESRCH' });
    expect(first.get(dead.pid)?.cpuMs).toBeUndefined();
    expect(first.has(0)).toBe(false);
    const ports = await h.probePortFacts([1], {});
    expect(ports.get(1)).toMatchObject({ result: 'refused' });
    expect(h.via()).toMatch(/^via ssh .+ \(rtt \d+ ms\)$/);
    expect(h.connections).toBe(1);
    expect(h.bytesSent).toBeGreaterThan(0);
    const calls = readFileSync(join(dir, 'calls'), 'utf8');
    expect(calls).toContain('-o BatchMode=yes');
    expect(calls).toContain('-p 2222 -- me@here exec sh -c');
  });

  it('a kill tick asks every pid in one K line, a full probe and a port probe in one line per 100', async () => {
    const h = start(new SshHost({ machine: hostname(), dest: 'me@here' }, { sshCommand: join(dir, 'ok-ssh') }));
    await waitState(h, 'up');
    const live = spawnSleep();
    spawned.push(live);
    const dead = spawnSleep();
    await killAndReap(dead);
    const before = h.bytesSent;
    const tick = await h.probePids([live.pid, dead.pid], {});
    expect(tick.get(live.pid)).toMatchObject({ kill: 'ok' });
    expect(tick.get(live.pid)?.state).toBeUndefined();
    expect(tick.get(dead.pid)).toMatchObject({ kill: 'ESRCH' });
    expect(h.bytesSent - before).toBe(`K ${live.pid} ${dead.pid}\n`.length);
    // 150 pids (the live one and 149 unused ones): two P lines, 150 answers in order.
    const many = [live.pid, ...Array.from({ length: 149 }, (_, i) => 4_000_000 + i)];
    const sent = h.bytesSent;
    const full = await h.probePids(many, { full: true });
    expect(full.get(live.pid)).toMatchObject({ kill: 'ok', state: 'S' });
    expect(full.size).toBe(150);
    expect(h.bytesSent - sent).toBe(`P ${many.slice(0, 100).join(' ')}\nP ${many.slice(100).join(' ')}\n`.length);
    const ports = await h.probePortFacts([1, 2, 3], {});
    expect([...ports.values()].map((p) => p.result)).toEqual(['refused', 'refused', 'refused']);
    expect(h.state.state).toBe('up');
    expect(h.connections).toBe(1);
  });

  it('watch() arms the remote watchers with one W per 100 pids and one V per 100 ports; their pushes come back as facts', async () => {
    const h = start(new SshHost({ machine: hostname(), dest: 'me@here' }, { sshCommand: join(dir, 'ok-ssh') }));
    await waitState(h, 'up');
    const pids = new Map<number, PidFacts>();
    const ports = new Map<number, PortFacts>();
    h.onPush = (p, q) => {
      for (const [k, v] of p) pids.set(k, v);
      for (const [k, v] of q) ports.set(k, v);
    };
    const live = spawnSleep();
    spawned.push(live);
    const dies = spawnSleep();
    spawned.push(dies);
    const sent = h.bytesSent;
    expect(await h.watch([live.pid, dies.pid, live.pid, 0], [1])).toBe(true);
    expect(h.bytesSent - sent).toBe(`W\nW ${live.pid} ${dies.pid}\nV 1\n`.length);
    expect(await until(() => (pids.size === 2 && ports.size === 1 ? true : undefined), 10_000)).toBe(true);
    // A sleep just spawned may still be running (R) when the watcher first reads it; asleep (S) after.
    expect(pids.get(live.pid)).toMatchObject({ kill: 'ok', state: expect.stringMatching(/^[RS]$/), startedAt: expect.any(Number) });
    expect(ports.get(1)).toMatchObject({ result: 'refused', detail: `nothing listens on ${hostname()}` });
    await killAndReap(dies);
    expect(await until(() => pids.get(dies.pid)?.kill === 'ESRCH' || undefined, 10_000)).toBe(true);
    // Pushed, not asked: nothing more was sent.
    expect(h.bytesSent - sent).toBe(`W\nW ${live.pid} ${dies.pid}\nV 1\n`.length);
    expect(h.state.state).toBe('up');
  });

  it('a start time 999999999999999999 ticks after boot is an invalid time: alive, its start unknown, and said', async () => {
    const h = start(new SshHost({ machine: hostname(), dest: 'me@here' }, { sshCommand: join(dir, 'far-start-ssh') }));
    await waitState(h, 'up');
    const facts = (await h.probePids([4242], { full: true })).get(4242);
    expect(facts).toMatchObject({ kill: 'ok', state: 'S', invalidStart: `tick 999999999999999999 on ${hostname()}` });
    expect(facts?.startedAt).toBeUndefined();
    expect(h.state.state).toBe('up');
  });

  it('a pushed line of no known shape ends the connection as a protocol error', async () => {
    const h = start(new SshHost({ machine: hostname(), dest: 'me@here' }, { sshCommand: join(dir, 'bad-push-ssh') }));
    const down = await until(() => (h.state.kind === 'protocol' ? h.state : undefined), 10_000);
    expect(down?.reason).toBe('a pushed line of no known shape: +K o');
  });

  it('a host answering with another name is down with the mismatch, and its pids are errors, never verdicts', async () => {
    const h = start(new SshHost({ machine: 'build-42', dest: 'build-42' }, { sshCommand: join(dir, 'ok-ssh') }));
    const down = await until(() => (h.state.kind === 'mismatch' ? h.state : undefined), 10_000);
    expect(down?.reason).toBe(`answers as "${hostname()}", not "build-42"`);
    const facts = await h.probePids([process.pid], {});
    expect(facts.get(process.pid)).toMatchObject({ kill: 'error', error: expect.stringContaining('ssh build-42 down: answers as') });
  });

  it('a dropped connection goes down and comes back through the backoff', async () => {
    const seen: SshHostStatus[] = [];
    const h = start(new SshHost({ machine: hostname(), dest: 'x' }, { sshCommand: join(dir, 'ok-ssh'), backoff: { initialMs: 20, maxMs: 40 }, onChange: (s) => seen.push(s) }));
    await waitState(h, 'up');
    process.kill(h.sshPid as number, 'SIGKILL');
    await until(() => (h.connections === 2 && h.state.state === 'up' ? true : undefined), 10_000);
    expect(seen.map((s) => s.state)).toEqual(['connecting', 'up', 'down', 'connecting', 'up']);
    expect(seen[2]).toMatchObject({ kind: 'dropped', reason: 'connection dropped (killed by SIGKILL)' });
    expect(h.connections).toBe(2);
  });
});

describe('a host pushing more than its budget (a flooder beside the real loop)', () => {
  it('is down as flooding, told once; its pushes are dropped unread; once it calms down it is up again on the same connection', async () => {
    const ssh = fakeSsh();
    const seen: SshHostStatus[] = [];
    const h = start(new SshHost({ machine: 'flood-1', dest: 'flood-1' }, { sshCommand: ssh.command, onChange: (s) => seen.push(s) }));
    await waitState(h, 'up');
    const live = spawnSleep();
    spawned.push(live);
    let pushes = 0;
    h.onPush = () => pushes++;
    expect(await h.watch([live.pid], [])).toBe(true);
    await until(() => (pushes > 0 ? true : undefined), 10_000, 'the first reading');
    const before = seen.length;
    // A runaway watcher: the same true line (nothing listens on port 1), over and over.
    ssh.flood(['+L 1 no']);
    const down = await until(() => (h.state.kind === 'flood' ? h.state : undefined), 10_000, 'the flood');
    expect(down).toMatchObject({ state: 'down', remoteName: 'flood-1' });
    expect(down.reason).toMatch(/^sends more than \d+ lines\/s; ignored until it calms down$/);
    // From here nothing it pushes is read, however much: no more facts, and no more state changes.
    const read = h.linesPushed;
    const told = pushes;
    const dropped = h.linesDropped;
    await until(() => (h.linesDropped > dropped + 3 * FLOOR_LINES ? true : undefined), 20_000, 'more flood');
    expect(h.linesPushed).toBe(read);
    expect(pushes).toBe(told);
    expect(seen.slice(before).map((s) => [s.state, s.kind])).toEqual([['down', 'flood']]);
    // Nothing is asked of a flooding host: its entries get no facts.
    const facts = await h.probePids([live.pid], {});
    expect(facts.get(live.pid)).toMatchObject({ kill: 'error', error: expect.stringContaining('ssh flood-1 down: sends more than') });

    ssh.calm();
    // Up again after CALM_SECONDS (5) calm seconds in a row, once what the flood left in the pipe
    // is drained: on a loaded machine that drain alone took seconds (CI, Node 24).
    await waitState(h, 'up', 25_000);
    expect(seen.slice(before).map((s) => [s.state, s.kind])).toEqual([
      ['down', 'flood'],
      ['up', undefined],
    ]);
    expect(h.connections).toBe(1);
    expect((await h.probePids([live.pid], { full: true })).get(live.pid)).toMatchObject({ kill: 'ok' });
  }, 70_000);

  it('a flooding host whose connection drops is down as dropped, and its next connection starts with a fresh budget', async () => {
    const ssh = fakeSsh();
    const seen: SshHostStatus[] = [];
    const h = start(new SshHost({ machine: 'flood-2', dest: 'flood-2' }, { sshCommand: ssh.command, backoff: { initialMs: 20, maxMs: 40 }, onChange: (s) => seen.push(s) }));
    await waitState(h, 'up');
    ssh.flood(['+L 1 no']);
    await until(() => (h.state.kind === 'flood' ? true : undefined), 10_000, 'the flood');
    ssh.calm();
    process.kill(h.sshPid as number, 'SIGKILL');
    await until(() => (h.connections === 2 && h.state.state === 'up' ? true : undefined), 10_000, 'up again on a new connection');
    const states = seen.map((s) => [s.state, s.kind]);
    expect(states.slice(states.findIndex(([, kind]) => kind === 'flood'))).toEqual([
      ['down', 'flood'],
      ['down', 'dropped'],
      ['connecting', undefined],
      ['up', undefined],
    ]);
  });

  it('a host flooding before it says its name is up under that name only once it has calmed down', async () => {
    const seen: SshHostStatus[] = [];
    const h = start(new SshHost({ machine: hostname(), dest: 'x' }, { sshCommand: join(dir, 'flood-first-ssh'), onChange: (s) => seen.push(s) }));
    await waitState(h, 'up');
    expect(seen.map((s) => [s.state, s.kind, s.remoteName])).toEqual([
      ['connecting', undefined, undefined],
      ['down', 'flood', undefined],
      ['up', undefined, hostname()],
    ]);
    // The first second's budget was read (more, if the burst spanned two seconds), the rest dropped.
    expect(h.linesDropped + h.linesPushed).toBe(5_000);
    expect(h.linesPushed).toBeGreaterThanOrEqual(FLOOR_LINES);
    expect(h.linesDropped).toBeGreaterThan(0);
  }, 40_000);
});

describe('SshHost failures on a hand-driven clock', () => {
  it('an auth failure is down with one clear line, and the reconnect waits for the backoff', async () => {
    const timers: { fn: () => void; ms: number; live: boolean }[] = [];
    const clock: SshClock = {
      now: () => 1_000_000,
      monotonic: () => 0,
      setTimeout: (fn, ms) => {
        const t = { fn, ms, live: true };
        timers.push(t);
        return t;
      },
      clearTimeout: (t) => {
        if (t) (t as { live: boolean }).live = false;
      },
    };
    const seen: string[] = [];
    const h = start(
      new SshHost({ machine: 'build-42', dest: 'me@build-42.internal' }, {
        sshCommand: join(dir, 'auth-ssh'),
        clock,
        backoff: { initialMs: 1000, maxMs: 8000, random: () => 0 },
        onChange: (s) => seen.push(s.state),
      }),
    );
    const down = await until(() => (h.state.kind === 'auth' ? h.state : undefined), 10_000);
    expect(down?.reason).toBe('authentication failed: me@build-42.internal: Permission denied (publickey,password).');
    const armed = timers.filter((t) => t.live);
    expect(armed.map((t) => t.ms)).toEqual([500]);
    expect(h.connections).toBe(1);
    armed[0]?.live && ((armed[0].live = false), armed[0].fn());
    await until(() => (h.connections === 2 && h.state.state === 'down' ? true : undefined), 10_000);
    // The second failure waits twice as long.
    expect(timers.filter((t) => t.live).map((t) => t.ms)).toEqual([1000]);
    expect(seen.slice(0, 4)).toEqual(['connecting', 'down', 'connecting', 'down']);
  });
});

describe('the fleet', () => {
  it('lets at most maxConnecting hosts connect at once and finds a host by its machine name', async () => {
    let most = 0;
    const fleet: SshFleet = new SshFleet(
      [1, 2, 3].map((i) => ({ machine: `${hostname()}`, dest: `d${i}` })),
      { sshCommand: join(dir, 'gated-ssh'), onChange: () => (most = Math.max(most, fleet.connecting)) },
      1,
    );
    hosts.push(...fleet.hosts);
    fleet.start();
    await until(() => (fleet.hosts.some((h) => h.connections > 0) ? true : undefined), 5000);
    // Held at the gate: the first host has the only slot, the other two wait for it.
    expect(fleet.hosts.map((h) => h.connections)).toEqual([1, 0, 0]);
    writeFileSync(join(dir, 'go'), '');
    await until(() => (fleet.statuses().every((s) => s.state === 'up') ? true : undefined), 10_000);
    expect(fleet.statuses().map((s) => s.state)).toEqual(['up', 'up', 'up']);
    expect(most).toBe(1);
    expect(fleet.hostFor(hostname().toUpperCase())).toBe(fleet.hosts[0]);
    expect(fleet.hostFor('elsewhere')).toBeUndefined();
  });
});

describe('classifySshExit', () => {
  it.each([
    ['Host key verification failed.', 'host-key'],
    ['ssh: connect to host 10.0.0.1 port 22: Connection refused', 'refused'],
    ['ssh: connect to host 10.0.0.1 port 22: Connection timed out', 'timeout'],
    ['ssh: Could not resolve hostname nowhere: Name or service not known', 'unresolved'],
    ['Timeout, server build-42 not responding.', 'dropped'],
  ])('%s', (stderr, kind) => {
    expect(classifySshExit(stderr, 255, null, false).kind).toBe(kind);
  });

  it('never lets a destination be read as an option', () => {
    expect(sshArgs({ machine: 'm', dest: '-oProxyCommand=x' }).slice(-3, -1)).toEqual(['--', '-oProxyCommand=x']);
  });
});

// The remote probe loop run under the local `sh` over pipes: the very program ssh would start on
// a remote host, asked about real processes and a real listening port, and its parser by table.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseProcStat, probePids } from '../../src/os/liveness.js';
import { MAX_BATCH, parseAnswer, parseHandshake, parsePush, REMOTE_PROBE_PROGRAM, type Handshake } from '../../src/os/remote-probe.js';
import { burner, childrenOf, killAndReap, spawnSleep, zombie as stagedZombie } from '../support/processes.js';
import { until } from '../support/wait.js';
import { itOn } from '../support/platform.js';

const spawned: ChildProcess[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(spawned.splice(0).map(killAndReap));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Run the loop under `cmd` (sh by default), send every request at once, read one line each (plus the handshake). */
async function ask(requests: readonly string[], cmd: readonly string[] = ['sh', '-c'], answerLines = requests.length): Promise<string[]> {
  const [bin = 'sh', ...args] = cmd;
  const child = spawn(bin, [...args, REMOTE_PROBE_PROGRAM], { stdio: ['pipe', 'pipe', 'inherit'] });
  spawned.push(child);
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout });
  const done = new Promise<void>((resolve) => {
    rl.on('line', (l) => {
      lines.push(l);
      if (lines.length === answerLines + 1) resolve();
    });
    child.on('close', () => resolve());
  });
  child.stdin.end(requests.map((r) => `${r}\n`).join(''));
  await done;
  return lines;
}

/** The loop under the local sh, kept open: send lines, wait for lines to appear. */
function openLoop(): { child: ChildProcess & { pid: number }; lines: string[]; send(line: string): void; waitLine(re: RegExp): Promise<string> } {
  const child = spawn('sh', ['-c', REMOTE_PROBE_PROGRAM], { stdio: ['pipe', 'pipe', 'inherit'] }) as ChildProcess & { pid: number };
  spawned.push(child);
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  return {
    child,
    lines,
    send: (line) => child.stdin!.write(`${line}\n`),
    waitLine: async (re) => {
      const found = await until(() => lines.find((l) => re.test(l)), 10_000);
      if (found === undefined) throw new Error(`no line like ${String(re)} within 10 s; got:\n${lines.join('\n')}`);
      return found;
    },
  };
}

/** The state letter of a process from /proc, or undefined once it is gone. */
function stateOf(pid: number): string | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.state;
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie (a killed watcher may wait a while to be reaped by its loop). */
const running = (pid: number): boolean => {
  const state = stateOf(pid);
  return state !== undefined && state !== 'Z';
};

/** A live, a SIGKILLed and a zombie pid; a listening port and one that was just closed. */
async function oneOfEach(): Promise<{ live: ChildProcess & { pid: number }; dead: ChildProcess & { pid: number }; zombie: number; port: number; closedPort: number }> {
  const live = spawnSleep();
  spawned.push(live);
  const dead = spawnSleep();
  await killAndReap(dead);
  const zombie = (await stagedZombie()).pid;
  const server = createServer();
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise((r) => closed.close(r));
  return { live, dead, zombie, port, closedPort };
}

describe('the remote probe loop under the local sh', () => {
  itOn(['linux'], 'the loop reads /proc on Linux')('answers a live, a SIGKILLed and a zombie pid, a listening port and the host name', async () => {
    const { live, dead, zombie, port, closedPort } = await oneOfEach();

    const lines = await ask(['H', `P ${live.pid}`, `P ${dead.pid}`, `P ${zombie}`, `L ${port}`, `L ${closedPort}`]);
    const hs = parseHandshake(lines[0] ?? '');
    expect(hs?.mode).toBe('proc');
    const answers = lines.slice(1).map((l) => parseAnswer(l, hs as Handshake));
    expect(answers[0]).toEqual({ kind: 'host', name: hostname() });
    const local = (await probePids([live.pid], { full: true })).get(live.pid);
    // The same /proc fields through the same arithmetic as the local probe: the same start time.
    expect(answers[1]).toEqual({ kind: 'pid', pid: live.pid, kill: 'ok', state: local?.state, startedAt: local?.startedAt, startText: `tick ${local?.startTicks}`, cpuMs: expect.any(Number), rssBytes: expect.any(Number) });
    // What it costs, from the same line: a sleep has used next to no CPU, and holds some memory (the local probe reads the same).
    const remote = answers[1] as { cpuMs: number; rssBytes: number };
    expect(remote.cpuMs).toBeLessThan(1_000);
    expect(remote.rssBytes).toBeGreaterThan(0);
    expect(Math.abs(remote.rssBytes - (local?.rssBytes ?? 0))).toBeLessThanOrEqual(64 * 1024);
    expect(answers[2]).toEqual({ kind: 'pid', pid: dead.pid, kill: 'ESRCH' });
    expect(answers[3]).toMatchObject({ kind: 'pid', pid: zombie, kill: 'ok', state: 'Z' });
    expect(answers[4]).toEqual({ kind: 'port', port, listening: 'yes' });
    expect(answers[5]).toEqual({ kind: 'port', port: closedPort, listening: 'no' });
  });

  itOn(['linux'], 'the loop reads /proc on Linux')('answers many pids or ports in one request line: K with one letter each, P and L with one line each', async () => {
    const { live, dead, zombie, port, closedPort } = await oneOfEach();

    const lines = await ask([`K ${live.pid} ${dead.pid} ${zombie}`, `P ${live.pid} ${dead.pid}`, `L ${closedPort} ${port}`, `K ${Array.from({ length: 100 }, () => live.pid).join(' ')}`], undefined, 6);
    expect(lines).toHaveLength(7);
    const hs = parseHandshake(lines[0] ?? '') as Handshake;
    const answers = lines.slice(1).map((l) => parseAnswer(l, hs));
    // kill -0 alone, as the local fast tick: a zombie still answers it (the full probe tells Z).
    expect(answers[0]).toEqual({ kind: 'kills', results: ['ok', 'ESRCH', 'ok'] });
    expect(answers[1]).toMatchObject({ kind: 'pid', pid: live.pid, kill: 'ok', state: 'S' });
    expect(answers[2]).toEqual({ kind: 'pid', pid: dead.pid, kill: 'ESRCH' });
    expect(answers[3]).toEqual({ kind: 'port', port: closedPort, listening: 'no' });
    expect(answers[4]).toEqual({ kind: 'port', port, listening: 'yes' });
    expect(answers[5]).toEqual({ kind: 'kills', results: Array.from({ length: 100 }, () => 'ok') });
  });

  it('refuses a batch with one line when any argument is bad, or past MAX_BATCH of them', async () => {
    const bad = ['K 1 0', 'K 1  2', 'K 1 ', 'K  1', 'P 1 2a', 'L 80 70000', 'L 80 012', 'K 1 $(id)', `K ${Array.from({ length: MAX_BATCH + 1 }, (_, i) => i + 1).join(' ')}`];
    const lines = await ask([...bad, 'Q', 'H']);
    expect(lines.slice(1)).toEqual(bad.map(() => '! refused'));
  });

  itOn(['linux'], 'needs root and setpriv to run the loop as another user')('says EPERM for a process another user may not signal', async () => {
    if (process.getuid?.() !== 0) throw new Error('this test runs as root (CI does)');
    const live = spawnSleep();
    spawned.push(live);
    const lines = await ask([`P ${live.pid}`], ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'sh', '-c']);
    expect(parseAnswer(lines[1] ?? '', parseHandshake(lines[0] ?? '') as Handshake)).toMatchObject({ kind: 'pid', pid: live.pid, kill: 'EPERM' });
  });

  itOn(['linux'], 'the loop reads /proc on Linux')('a watcher pushes its first reading, then only changes: a SIGKILLed pid, a port that stops listening', async () => {
    const stays = spawnSleep();
    spawned.push(stays);
    const dies = spawnSleep();
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const loop = openLoop();
    loop.send(`W ${stays.pid} ${dies.pid}`);
    loop.send(`V ${port}`);
    loop.send(`K ${stays.pid}`);
    await loop.waitLine(/^K o$/);
    const hs = parseHandshake(loop.lines[0] ?? '') as Handshake;
    // Answers in order, whatever was pushed between them.
    expect(loop.lines.filter((l) => !l.startsWith('+')).slice(1)).toEqual(['W ok', 'V ok', 'K o']);
    expect(parsePush(await loop.waitLine(new RegExp(`^\\+P ${stays.pid} `)), hs)).toMatchObject({ kind: 'pid', pid: stays.pid, kill: 'ok', state: 'S' });
    await loop.waitLine(new RegExp(`^\\+P ${dies.pid} ok `));
    expect(parsePush(await loop.waitLine(new RegExp(`^\\+L ${port} `)), hs)).toEqual({ kind: 'port', port, listening: 'yes' });
    await killAndReap(dies);
    expect(parsePush(await loop.waitLine(new RegExp(`^\\+P ${dies.pid} ESRCH$`)), hs)).toEqual({ kind: 'pid', pid: dies.pid, kill: 'ESRCH' });
    await new Promise((r) => server.close(r));
    await loop.waitLine(new RegExp(`^\\+L ${port} no$`));
    // The pid that stayed was pushed once: its state and start time never changed.
    expect(loop.lines.filter((l) => l.startsWith(`+P ${stays.pid} `))).toHaveLength(1);
    // A bare W stops every watcher: the loop has no child left running.
    const watchers = childrenOf(loop.child.pid);
    expect(watchers.length).toBe(2);
    loop.send('W');
    await loop.waitLine(/^W ok$/);
    expect(await until(() => (watchers.some(running) ? undefined : true), 10_000)).toBe(true);
  });

  itOn(['linux'], 'the loop reads /proc on Linux')('a watcher pushes a pid that is stopped (SIGSTOP: T) and again once it is continued', async () => {
    const agent = spawnSleep();
    spawned.push(agent);
    const loop = openLoop();
    loop.send(`W ${agent.pid}`);
    await loop.waitLine(new RegExp(`^\\+P ${agent.pid} ok S `));
    const hs = parseHandshake(loop.lines[0] ?? '') as Handshake;
    process.kill(agent.pid, 'SIGSTOP');
    expect(parsePush(await loop.waitLine(new RegExp(`^\\+P ${agent.pid} ok T `)), hs)).toMatchObject({ kind: 'pid', pid: agent.pid, kill: 'ok', state: 'T' });
    process.kill(agent.pid, 'SIGCONT');
    await until(() => loop.lines.filter((l) => l.startsWith(`+P ${agent.pid} ok S `)).length === 2, 15_000, 'a second S push after SIGCONT');
  });

  itOn(['linux'], 'the loop reads /proc on Linux')('CPU time is added in the shell only from fields of at most 9 digits (a 32-bit shell\'s arithmetic holds the sum); past that it is unknown and the line stays valid (root: a stat line bound over /proc in a mount namespace)', async (ctx) => {
    if (process.getuid?.() !== 0 && process.env.CI !== 'true') return ctx.skip('needs root to bind-mount over /proc/<pid>/stat in a mount namespace');
    const live = spawnSleep();
    spawned.push(live);
    const dir = mkdtempSync(join(tmpdir(), 'gw-stat-'));
    try {
      const real = readFileSync(`/proc/${live.pid}/stat`, 'utf8');
      const asked = async (utime: string, stime: string): Promise<string> => {
        // Fields 14 and 15 (utime, stime) of the process's own stat line, as a host whose process has run that long would show.
        const head = real.slice(0, real.lastIndexOf(')') + 2);
        const fields = real.slice(real.lastIndexOf(')') + 2).trim().split(' ');
        fields[11] = utime;
        fields[12] = stime;
        const fake = join(dir, `stat-${utime}-${stime}`);
        writeFileSync(fake, `${head}${fields.join(' ')}\n`);
        const lines = await ask([`P ${live.pid}`], ['unshare', '--mount', 'sh', '-c', `mount --bind '${fake}' /proc/${live.pid}/stat && exec sh -c "$1"`, 'probe']);
        return lines[1]!;
      };
      const hs = parseHandshake((await ask([], ['sh', '-c'], 0))[0] ?? '') as Handshake;
      const nine = parseAnswer(await asked('999999999', '999999999'), hs);
      expect(nine).toMatchObject({ kind: 'pid', pid: live.pid, kill: 'ok', cpuMs: (1_999_999_998 * 1000) / hs.clkTck!, rssBytes: expect.any(Number) });
      const ten = parseAnswer(await asked('1234567890', '0'), hs);
      // The memory is still read: only the CPU time is unknown.
      expect(ten).toMatchObject({ kind: 'pid', pid: live.pid, kill: 'ok', rssBytes: expect.any(Number) });
      expect((ten as { cpuMs?: number }).cpuMs).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  itOn(['linux'], 'the loop reads /proc on Linux')('a CPU burner: two P reads a second apart show more than half a core and its memory; its watcher pushes it once all the same', async () => {
    const hot = burner();
    const loop = openLoop();
    loop.send(`W ${hot.pid}`);
    const first = await loop.waitLine(new RegExp(`^\\+P ${hot.pid} ok `));
    const hs = parseHandshake(loop.lines[0] ?? '') as Handshake;
    const pushedAt = Date.now();
    // Each P answer in order; the wall time of each read taken when its answer arrives.
    const read = async (): Promise<{ cpuMs: number; rssBytes: number; at: number }> => {
      const before = loop.lines.filter((l) => l.startsWith(`P ${hot.pid} `)).length;
      loop.send(`P ${hot.pid}`);
      await until(() => loop.lines.filter((l) => l.startsWith(`P ${hot.pid} `)).length > before || undefined, 10_000, 'a P answer');
      const at = Date.now();
      const answer = parseAnswer(loop.lines.filter((l) => l.startsWith(`P ${hot.pid} `))[before]!, hs);
      expect(answer).toMatchObject({ kind: 'pid', pid: hot.pid, kill: 'ok', cpuMs: expect.any(Number), rssBytes: expect.any(Number) });
      return { ...(answer as { cpuMs: number; rssBytes: number }), at };
    };
    // On a shared, loaded machine one second may be slow: any second over half a core will do.
    let best = 0;
    let a = await read();
    for (let i = 0; i < 8 && best <= 50; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      const b = await read();
      best = Math.max(best, ((b.cpuMs - a.cpuMs) / (b.at - a.at)) * 100);
      expect(b.rssBytes).toBeGreaterThan(0);
      a = b;
    }
    expect(best).toBeGreaterThan(50);
    // The pushed line carried its figures too.
    expect(parsePush(first, hs)).toMatchObject({ kind: 'pid', pid: hot.pid, cpuMs: expect.any(Number), rssBytes: expect.any(Number) });
    // Its CPU time moved at every full read of the watcher (every 4 s): never a push for that alone.
    await new Promise((r) => setTimeout(r, Math.max(0, pushedAt + 9_000 - Date.now())));
    expect(loop.lines.filter((l) => l.startsWith(`+P ${hot.pid} `))).toEqual([first]);
  }, 30_000);

  it.each(['stdin closed', 'Q', 'the loop SIGKILLed'])('watchers end with the loop: %s', async (how) => {
    const live = spawnSleep();
    spawned.push(live);
    const loop = openLoop();
    loop.send(`W ${live.pid}`);
    loop.send('V 1');
    await loop.waitLine(/^V ok$/);
    await loop.waitLine(/^\+L 1 /);
    const watchers = childrenOf(loop.child.pid);
    expect(watchers.length).toBe(2);
    if (how === 'stdin closed') loop.child.stdin!.end();
    else if (how === 'Q') loop.send('Q');
    else loop.child.kill('SIGKILL');
    expect(await until(() => (watchers.some(running) ? undefined : true), 10_000)).toBe(true);
  });

  it('refuses a watch of a bad pid or port with one line, like any batch', async () => {
    const bad = ['W 0', 'W 1 x', 'V 70000', 'V 012', `W ${Array.from({ length: MAX_BATCH + 1 }, (_, i) => i + 1).join(' ')}`, 'W  1'];
    const lines = await ask([...bad, 'Q', 'H']);
    expect(lines.slice(1)).toEqual(bad.map(() => '! refused'));
  });

  it('refuses every request whose argument is not 1 to 10 digits, and stops at Q', async () => {
    const bad = ['P', 'P 0', 'P 012', 'P 12a', 'P 1;reboot', 'P $(id)', 'P 12345678901', 'L 70000', 'X 5', 'H x', '', 'P  5'];
    const lines = await ask([...bad, 'Q', 'H']);
    expect(lines.slice(1)).toEqual(bad.map(() => '! refused'));
  });
});

const PROC: Handshake = { version: 1, mode: 'proc', btimeSec: 1_700_000_000, clkTck: 100, pageBytes: 4096, remoteNowSec: 1_700_000_500 };
const PS: Handshake = { version: 1, mode: 'ps', remoteNowSec: 1_700_000_500 };
/** A proc handshake that did not say its page size: resident memory is unknown, never guessed here. */
const PROC_NO_PAGE: Handshake = { version: 1, mode: 'proc', btimeSec: 1_700_000_000, clkTck: 100, remoteNowSec: 1_700_000_500 };

describe('parseHandshake', () => {
  it.each([
    ['ghostwatch-probe 1 proc btime=1700000000 clk=100 page=4096 now=1700000500', PROC],
    ['ghostwatch-probe 1 proc btime=1700000000 clk=100 now=1700000500', PROC_NO_PAGE],
    ['ghostwatch-probe 1 proc btime=1700000000 clk=100 page= now=1700000500', PROC_NO_PAGE],
    ['ghostwatch-probe 1 proc btime=1700000000 clk=100 page=0 now=1700000500', undefined],
    ['ghostwatch-probe 1 ps now=1700000500', PS],
    ['ghostwatch-probe 1 ps page=4096 now=1700000500', PS],
    ['ghostwatch-probe 2 ps now=1700000500', undefined],
    ['ghostwatch-probe 1 proc btime= clk=100 now=1700000500', undefined],
    ['ghostwatch-probe 1 proc btime=1700000000 clk=0 now=1700000500', undefined],
    ['ghostwatch-probe 1 ps', undefined],
    ['Welcome to build-42! ghostwatch-probe 1 ps now=1', undefined],
    ['ghostwatch-probe 1 ps now=1700000500\u001b[2J', undefined],
  ])('%j', (line, expected) => {
    expect(parseHandshake(line)).toEqual(expected);
  });
});

describe('parseAnswer', () => {
  it.each<[string, Handshake, unknown]>([
    ['P 42 ok S 150 20 12345', PROC, { kind: 'pid', pid: 42, kill: 'ok', state: 'S', startedAt: 1_700_000_000_000 + 123_450, startText: 'tick 12345', cpuMs: 1_500, rssBytes: 20 * 4096 }],
    ['P 42 EPERM Z 0 0 100', PROC, { kind: 'pid', pid: 42, kill: 'EPERM', state: 'Z', startedAt: 1_700_000_001_000, startText: 'tick 100', cpuMs: 0, rssBytes: 0 }],
    ['P 42 ESRCH', PROC, { kind: 'pid', pid: 42, kill: 'ESRCH' }],
    ['P 42 ok - -', PROC, { kind: 'pid', pid: 42, kill: 'ok', detailsHidden: true }],
    ['P 42 error kill: illegal\u001b[31m pid', PROC, { kind: 'pid', pid: 42, kill: 'error', error: 'kill: illegal^[[31m pid' }],
    // macOS / BSD `ps -o stat=,lstart=` read in UTC, spaces collapsed by the loop.
    ['P 42 ok Ss 1:02.50 2048 Mon Jan 1 10:00:00 2024', PS, { kind: 'pid', pid: 42, kill: 'ok', state: 'S', startedAt: Date.UTC(2024, 0, 1, 10, 0, 0), startText: 'Mon Jan 1 10:00:00 2024', cpuMs: 62_500, rssBytes: 2048 * 1024 }],
    ['P 7 ok Z+ 0:00.00 0 Tue Feb 29 23:59:59 2028', PS, { kind: 'pid', pid: 7, kill: 'ok', state: 'Z', startedAt: Date.UTC(2028, 1, 29, 23, 59, 59), startText: 'Tue Feb 29 23:59:59 2028', cpuMs: 0, rssBytes: 0 }],
    ['P 7 ok R+ 0:00.00 0 Tue Foo 29 23:59:59 2028', PS, 'invalid'],
    ['P 7 ok S 1 1 12345', PS, 'invalid'],
    ['P 7 ok S 1 1 Mon Jan 1 10:00:00 2024', PROC, 'invalid'],
    ['P 42 ESRCH S 1', PROC, 'invalid'],
    ['P 42 alive S 1 1 1', PROC, 'invalid'],
    ['P 0 ok S 1 1 1', PROC, 'invalid'],
    ['P -1 ESRCH', PROC, 'invalid'],
    ['P 42 ok S 1 1 1e5', PROC, 'invalid'],
    ['L 8080 yes', PROC, { kind: 'port', port: 8080, listening: 'yes' }],
    ['L 8080 no', PROC, { kind: 'port', port: 8080, listening: 'no' }],
    ['L 8080 unknown', PROC, { kind: 'port', port: 8080, listening: 'unknown' }],
    ['L 80800 yes', PROC, 'invalid'],
    ['L 8080 maybe', PROC, 'invalid'],
    ['H build-42.internal', PROC, { kind: 'host', name: 'build-42.internal' }],
    ['H build 42', PROC, 'invalid'],
    ['H \u001b]0;pwned\u0007', PROC, 'invalid'],
    ['K oospe', PROC, { kind: 'kills', results: ['ok', 'ok', 'ESRCH', 'EPERM', 'error'] }],
    ['K ', PROC, 'invalid'],
    ['K ox', PROC, 'invalid'],
    ['K o s', PROC, 'invalid'],
    [`K ${'o'.repeat(101)}`, PROC, 'invalid'],
    ['! refused', PROC, { kind: 'refused' }],
    ['W ok', PROC, { kind: 'watch', verb: 'W' }],
    ['V ok', PROC, { kind: 'watch', verb: 'V' }],
    ['W 3', PROC, 'invalid'],
    ['V ok ok', PROC, 'invalid'],
    ['x'.repeat(2000), PROC, 'invalid'], // past MAX_ANSWER_LENGTH
  ])('%.60j', (line, hs, expected) => {
    const answer = parseAnswer(line, hs);
    if (expected === 'invalid') {
      expect(answer.kind).toBe('invalid');
      expect(answer.kind === 'invalid' && /[\u0000-\u001f\u007f]/.test(answer.text)).toBe(false);
      expect(answer.kind === 'invalid' && answer.text.length).toBeLessThanOrEqual(121);
    } else expect(answer).toEqual(expected);
  });
});

describe('parseAnswer: what a process costs (CPU time so far, resident memory)', () => {
  const LIVE = { kind: 'pid', pid: 42, kill: 'ok', state: 'S' };
  it.each<[string, string, Handshake, { cpuMs: number | undefined; rssBytes: number | undefined } | 'invalid']>([
    // Linux: utime + stime in clock ticks (100 a second here), rss in pages (4096 bytes here).
    ['ticks and pages', 'P 42 ok S 150 20 12345', PROC, { cpuMs: 1_500, rssBytes: 81_920 }],
    ['a clock of 250 ticks a second', 'P 42 ok S 250 1 12345', { ...PROC, clkTck: 250 }, { cpuMs: 1_000, rssBytes: 4096 }],
    ['16 KiB pages', 'P 42 ok S 0 3 12345', { ...PROC, pageBytes: 16_384 }, { cpuMs: 0, rssBytes: 49_152 }],
    ['both unreadable', 'P 42 ok S - - 12345', PROC, { cpuMs: undefined, rssBytes: undefined }],
    ['the memory unreadable', 'P 42 ok S 150 - 12345', PROC, { cpuMs: 1_500, rssBytes: undefined }],
    ['no page size in the handshake: memory unknown', 'P 42 ok S 150 20 12345', PROC_NO_PAGE, { cpuMs: 1_500, rssBytes: undefined }],
    // Of the right shape but past 2^53: no reading, the rest of the line stands.
    ['a hostile CPU time and memory', 'P 42 ok S 9999999999999999 9999999999999999 12345', PROC, { cpuMs: undefined, rssBytes: undefined }],
    // macOS / BSD: ps's time ("[[dd-]hh:]mm:ss.cc") and rss in KiB.
    ['ps minutes and hundredths', 'P 42 ok S 1:02.50 2048 Mon Jan 1 10:00:00 2024', PS, { cpuMs: 62_500, rssBytes: 2_097_152 }],
    ['ps hours', 'P 42 ok S 123:45.67 1 Mon Jan 1 10:00:00 2024', PS, { cpuMs: 7_425_670, rssBytes: 1024 }],
    ['ps days', 'P 42 ok S 2-03:04:05 0 Mon Jan 1 10:00:00 2024', PS, { cpuMs: 183_845_000, rssBytes: 0 }],
    ['ps unreadable', 'P 42 ok S - - Mon Jan 1 10:00:00 2024', PS, { cpuMs: undefined, rssBytes: undefined }],
    ['a hostile ps time', 'P 42 ok S 99999999999999999999:00 1 Mon Jan 1 10:00:00 2024', PS, { cpuMs: undefined, rssBytes: 1024 }],
    // Malformed: the line is not one of ours.
    ['the line before the figures', 'P 42 ok S 12345', PROC, 'invalid'],
    ['one figure only', 'P 42 ok S 150 12345', PROC, 'invalid'],
    ['a word past the start', 'P 42 ok S 150 20 12345 7', PROC, 'invalid'],
    ['a fraction of a tick', 'P 42 ok S 1.5 20 12345', PROC, 'invalid'],
    ['a ps time on Linux', 'P 42 ok S 1:02.50 20 12345', PROC, 'invalid'],
    ['a negative memory', 'P 42 ok S 150 -20 12345', PROC, 'invalid'],
    ['a leading zero', 'P 42 ok S 0150 20 12345', PROC, 'invalid'],
    ['an exponent', 'P 42 ok S 150 2e3 12345', PROC, 'invalid'],
    ['17 digits', 'P 42 ok S 12345678901234567 20 12345', PROC, 'invalid'],
    ['a hex memory', 'P 42 ok S 150 0x10 12345', PROC, 'invalid'],
    ['an escape in a figure', 'P 42 ok S 150\u001b[2J 20 12345', PROC, 'invalid'],
    ['the ps line before the figures', 'P 42 ok Ss Mon Jan 1 10:00:00 2024', PS, 'invalid'],
    ['ps time of four fields', 'P 42 ok S 1:02:03:04 2048 Mon Jan 1 10:00:00 2024', PS, 'invalid'],
    ['ps time with a letter', 'P 42 ok S 1:02.5x 2048 Mon Jan 1 10:00:00 2024', PS, 'invalid'],
    ['ps time past 24 characters', `P 42 ok S ${'1'.repeat(30)}:00 2048 Mon Jan 1 10:00:00 2024`, PS, 'invalid'],
    ['ps memory with a fraction', 'P 42 ok S 1:02.50 2048.5 Mon Jan 1 10:00:00 2024', PS, 'invalid'],
    ['ps memory with a unit', 'P 42 ok S 1:02.50 2M Mon Jan 1 10:00:00 2024', PS, 'invalid'],
  ])('%s: %j', (_what, line, hs, expected) => {
    const answer = parseAnswer(line, hs);
    if (expected === 'invalid') {
      expect(answer.kind).toBe('invalid');
      expect(answer.kind === 'invalid' && /[\u0000-\u001f\u007f]/.test(answer.text)).toBe(false);
    } else {
      expect(answer).toMatchObject(LIVE);
      expect(answer).toMatchObject({ startedAt: expect.any(Number) });
      const { cpuMs, rssBytes } = answer as { cpuMs?: number; rssBytes?: number };
      expect({ cpuMs, rssBytes }).toEqual(expected);
    }
  });

  it('a pushed line carries the figures too', () => {
    expect(parsePush('+P 42 ok T 150 20 12345', PROC)).toMatchObject({ kind: 'pid', pid: 42, state: 'T', cpuMs: 1_500, rssBytes: 81_920 });
    expect(parsePush('+P 42 ok T 12345', PROC).kind).toBe('invalid');
  });
});

describe('parsePush', () => {
  it.each<[string, unknown]>([
    ['+P 42 ESRCH', { kind: 'pid', pid: 42, kill: 'ESRCH' }],
    ['+P 42 ok Z 0 0 100', { kind: 'pid', pid: 42, kill: 'ok', state: 'Z', startedAt: 1_700_000_001_000, startText: 'tick 100', cpuMs: 0, rssBytes: 0 }],
    ['+P 42 ok R 250 3 100', { kind: 'pid', pid: 42, kill: 'ok', state: 'R', startedAt: 1_700_000_001_000, startText: 'tick 100', cpuMs: 2_500, rssBytes: 3 * 4096 }],
    ['+P 42 ok Z 100', 'invalid'],
    ['+P 42 ok R 250 x 100', 'invalid'],
    ['+L 8080 no', { kind: 'port', port: 8080, listening: 'no' }],
    ['P 42 ESRCH', 'invalid'],
    ['+K o', 'invalid'],
    ['+H build-42', 'invalid'],
    ['+W ok', 'invalid'],
    ['++P 42 ESRCH', 'invalid'],
    ['+P 42 alive', 'invalid'],
    ['+! refused', 'invalid'],
    ['+P 42 error \u001b[2J', { kind: 'pid', pid: 42, kill: 'error', error: '^[[2J' }],
  ])('%j', (line, expected) => {
    const answer = parsePush(line, PROC);
    if (expected === 'invalid') expect(answer.kind).toBe('invalid');
    else expect(answer).toEqual(expected);
  });
});

// macOS and BSD have no /proc: the loop's other branch reads `ps -o stat=,lstart=` and `netstat -an -p
// tcp`. Those commands cannot run here, so a PATH of stand-ins answers as macOS's do (uname says
// Darwin; ps and netstat print macOS's shapes for real pids and a real listening port); the loop
// itself, its kill -0 and its parsing are the real ones.
describe('the loop on a macOS/BSD host (uname, ps and netstat stand-ins)', () => {
  function darwinPath(listening: number): string {
    const dir = mkdtempSync(join(tmpdir(), 'gw-darwin-'));
    const tool = (name: string, body: string) => {
      writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(dir, name), 0o755);
    };
    tool('uname', 'echo Darwin');
    // `ps -o stat=,lstart= -p PID`, `ps -o ppid= -p PID`, `ps -p PID`: answers only for a pid that exists.
    tool('ps', [
      'o=; p=',
      'while [ $# -gt 0 ]; do case $1 in -o) o=$2; shift;; -p) p=$2; shift;; esac; shift; done',
      '[ -d /proc/$p ] || exit 1',
      'case $o in',
      '  stat=,time=,rss=,lstart=) echo "Ss     1:02.50   2048 Mon Jan  1 10:00:00 2024";;',
      '  ppid=) echo " $(cut -d")" -f2- /proc/$p/stat | cut -d" " -f3)";;',
      '  *) echo "  PID TTY TIME CMD"; echo "$p ?? 0:00.01 x";;',
      'esac',
    ].join('\n'));
    tool('netstat', `printf 'Active Internet connections (including servers)\\nProto Recv-Q Send-Q  Local Address          Foreign Address        (state)\\ntcp4       0      0  127.0.0.1.${listening}         *.*                    LISTEN\\ntcp4       0      0  127.0.0.1.50000        127.0.0.1.${listening}   ESTABLISHED\\n'`);
    return dir;
  }

  it('answers P, L and a W watcher in the ps shapes, parsed as macOS start times', async () => {
    const server = createServer();
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const alive = await spawnSleep();
    const gone = await spawnSleep();
    await killAndReap(gone);
    const dir = darwinPath(port);
    try {
      const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` };
      const child = spawn('sh', ['-c', REMOTE_PROBE_PROGRAM], { stdio: ['pipe', 'pipe', 'inherit'], env });
      spawned.push(child);
      const lines: string[] = [];
      createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
      child.stdin.write(`P ${alive.pid} ${gone.pid}\nL ${port} 1\nW ${alive.pid}\n`);
      await until(() => (lines.some((l) => l.startsWith('+P')) ? true : undefined), 10_000);
      child.stdin.end('Q\n');
      const hs = parseHandshake(lines[0]!);
      expect(hs).toEqual({ version: 1, mode: 'ps', remoteNowSec: expect.any(Number) });
      const started = Date.UTC(2024, 0, 1, 10, 0, 0);
      // Its CPU time (1 min 2.5 s) and resident memory (2048 KiB) from the same ps line.
      expect(lines[1]).toBe(`P ${alive.pid} ok Ss 1:02.50 2048 Mon Jan 1 10:00:00 2024`);
      expect(lines.slice(1, 5).map((l) => parseAnswer(l, hs!))).toEqual([
        { kind: 'pid', pid: alive.pid, kill: 'ok', state: 'S', startedAt: started, startText: 'Mon Jan 1 10:00:00 2024', cpuMs: 62_500, rssBytes: 2048 * 1024 },
        { kind: 'pid', pid: gone.pid, kill: 'ESRCH' },
        { kind: 'port', port, listening: 'yes' },
        { kind: 'port', port: 1, listening: 'no' },
      ]);
      const push = lines.find((l) => l.startsWith('+P'))!;
      expect(parsePush(push, hs!)).toEqual({ kind: 'pid', pid: alive.pid, kill: 'ok', state: 'S', startedAt: started, startText: 'Mon Jan 1 10:00:00 2024', cpuMs: 62_500, rssBytes: 2048 * 1024 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

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
import { childrenOf, killAndReap, spawnSleep, zombie as stagedZombie } from '../support/processes.js';
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
    expect(answers[1]).toEqual({ kind: 'pid', pid: live.pid, kill: 'ok', state: local?.state, startedAt: local?.startedAt, startText: `tick ${local?.startTicks}` });
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

const PROC: Handshake = { version: 1, mode: 'proc', btimeSec: 1_700_000_000, clkTck: 100, remoteNowSec: 1_700_000_500 };
const PS: Handshake = { version: 1, mode: 'ps', remoteNowSec: 1_700_000_500 };

describe('parseHandshake', () => {
  it.each([
    ['ghostwatch-probe 1 proc btime=1700000000 clk=100 now=1700000500', PROC],
    ['ghostwatch-probe 1 ps now=1700000500', PS],
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
    ['P 42 ok S 12345', PROC, { kind: 'pid', pid: 42, kill: 'ok', state: 'S', startedAt: 1_700_000_000_000 + 123_450, startText: 'tick 12345' }],
    ['P 42 EPERM Z 100', PROC, { kind: 'pid', pid: 42, kill: 'EPERM', state: 'Z', startedAt: 1_700_000_001_000, startText: 'tick 100' }],
    ['P 42 ESRCH', PROC, { kind: 'pid', pid: 42, kill: 'ESRCH' }],
    ['P 42 ok - -', PROC, { kind: 'pid', pid: 42, kill: 'ok', detailsHidden: true }],
    ['P 42 error kill: illegal\u001b[31m pid', PROC, { kind: 'pid', pid: 42, kill: 'error', error: 'kill: illegal^[[31m pid' }],
    // macOS / BSD `ps -o stat=,lstart=` read in UTC, spaces collapsed by the loop.
    ['P 42 ok Ss Mon Jan 1 10:00:00 2024', PS, { kind: 'pid', pid: 42, kill: 'ok', state: 'S', startedAt: Date.UTC(2024, 0, 1, 10, 0, 0), startText: 'Mon Jan 1 10:00:00 2024' }],
    ['P 7 ok Z+ Tue Feb 29 23:59:59 2028', PS, { kind: 'pid', pid: 7, kill: 'ok', state: 'Z', startedAt: Date.UTC(2028, 1, 29, 23, 59, 59), startText: 'Tue Feb 29 23:59:59 2028' }],
    ['P 7 ok R+ Tue Foo 29 23:59:59 2028', PS, 'invalid'],
    ['P 7 ok S 12345', PS, 'invalid'],
    ['P 7 ok S Mon Jan 1 10:00:00 2024', PROC, 'invalid'],
    ['P 42 ESRCH S 1', PROC, 'invalid'],
    ['P 42 alive S 1', PROC, 'invalid'],
    ['P 0 ok S 1', PROC, 'invalid'],
    ['P -1 ESRCH', PROC, 'invalid'],
    ['P 42 ok S 1e5', PROC, 'invalid'],
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

describe('parsePush', () => {
  it.each<[string, unknown]>([
    ['+P 42 ESRCH', { kind: 'pid', pid: 42, kill: 'ESRCH' }],
    ['+P 42 ok Z 100', { kind: 'pid', pid: 42, kill: 'ok', state: 'Z', startedAt: 1_700_000_001_000, startText: 'tick 100' }],
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
      '  stat=,lstart=) echo "Ss   Mon Jan  1 10:00:00 2024";;',
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
      expect(lines.slice(1, 5).map((l) => parseAnswer(l, hs!))).toEqual([
        { kind: 'pid', pid: alive.pid, kill: 'ok', state: 'S', startedAt: started, startText: 'Mon Jan 1 10:00:00 2024' },
        { kind: 'pid', pid: gone.pid, kill: 'ESRCH' },
        { kind: 'port', port, listening: 'yes' },
        { kind: 'port', port: 1, listening: 'no' },
      ]);
      const push = lines.find((l) => l.startsWith('+P'))!;
      expect(parsePush(push, hs!)).toEqual({ kind: 'pid', pid: alive.pid, kill: 'ok', state: 'S', startedAt: started, startText: 'Mon Jan 1 10:00:00 2024' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

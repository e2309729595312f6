// `npm run test:real-pi`: the real `pi` CLI from npm, in a real terminal (tmux), with our
// registering extension (registering-extension.ts, pi-socket's behaviour per protocols.md §1),
// against a real `ghostwatch serve`; then SIGKILL, SIGTERM, SIGHUP (its tmux window killed), `/new`
// and Ctrl-D, each on its own pi; and `serve --allow-spawn` starting pi itself for Pi-DE's spawn dialog,
// inside tmux (a window of its own) and with no terminal at all (a failure, said so). Every test reads what pi did from the extension's trace, what the
// registry did from an observer's events, and what ghostwatch says from `check --json`. The
// timings and exit codes it saw are printed at the end (and kept in last-run.json beside the pi
// install). Not part of `npm test`: it installs pi from the npm registry on its first run.
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripVTControlCharacters } from 'node:util';
import { WebSocket } from 'ws';
import { createTmux } from '../../src/os/tmux.js';
import { alive } from '../support/processes.js';
import { HAS_TMUX } from '../support/tmux.js';
import {
  check,
  installPi,
  observe,
  PI_VERSION,
  PiInTmux,
  sleep,
  spawnAsPiDe,
  SpawnHome,
  startServe,
  startSpawningServeDetached,
  startSpawningServeInTerminal,
  startSpawningServeInTmux,
  waitFor,
  type Observer,
  type Serve,
} from './harness.js';

const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

let bin = '';
let serve: Serve | undefined;
let observer: Observer | undefined;
const pis: PiInTmux[] = [];
const report: Record<string, unknown> = { piVersion: PI_VERSION };

async function launch(): Promise<PiInTmux> {
  const pi = new PiInTmux(bin, serve!.url);
  pis.push(pi);
  await pi.start();
  // Events follow the replies within one broadcast interval: what a test does next is after this one.
  await observer!.waitEvent('node_joined', pi.nodeId, pi.startedAt);
  return pi;
}

/** The registry events about `id` since `since`, as "event +ms". */
function eventsOf(id: string, since: number): string[] {
  return observer!.events.filter((e) => e.id === id && e.at >= since).map((e) => `${e.event} +${e.at - since}ms`);
}

function exitCodeInTrace(pi: PiInTmux): number | undefined {
  const exit = pi.trace().find((l) => l.step === 'exit');
  return exit ? Number(exit.code) : undefined;
}

async function findingOf(id: string): Promise<{ verdict: string; status: unknown; reason: string } | undefined> {
  const found = (await check(serve!.url)).findings.find((f) => f.id === id);
  return found && { verdict: found.verdict, status: found.entry.status, reason: found.reason };
}

afterAll(() => {
  if (!bin) return;
  const text = JSON.stringify(report, null, 2);
  writeFileSync(join(tmpdir(), `ghostwatch-real-pi-${PI_VERSION}`, 'last-run.json'), `${text}\n`);
  console.log(`what real pi did:\n${text}`);
});

describe.runIf(HAS_TMUX || IN_CI)(`real pi ${PI_VERSION} against ghostwatch serve`, () => {
  beforeAll(async () => {
    if (!HAS_TMUX) throw new Error('the real-pi tests need tmux (CI is set, so they fail instead of skipping)');
    const t0 = Date.now();
    bin = await installPi();
    report.installMs = Date.now() - t0;
    serve = await startServe();
    observer = await observe(serve.url);
  }, 360_000);

  afterAll(async () => {
    for (const pi of pis) pi.stop();
    observer?.close();
    await serve?.stop();
    for (const pi of pis) pi.removeFiles();
  });

  it('(a) registers through our extension and ghostwatch calls it live', async () => {
    const pi = await launch();
    const startup = pi.trace().find((l) => l.step === 'reply')!.at - pi.startedAt;
    expect(pi.nodeId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/); // a UUIDv7 session id
    expect(pi.screen()).toContain(`pi v${PI_VERSION}`);
    // Its own WebSocket server answers on the port it registered.
    const own = new WebSocket(`ws://127.0.0.1:${pi.port}/`);
    await new Promise((resolve, reject) => own.once('open', resolve).once('error', reject));
    own.terminate();
    const { findings, code } = await check(serve!.url);
    const finding = findings.find((f) => f.id === pi.nodeId);
    report.a_live = { startupToRegisteredMs: startup, checkExit: code, verdict: finding?.verdict, entry: finding?.entry };
    expect(finding?.verdict).toBe('live');
    expect(finding?.entry).toMatchObject({ machine: hostname(), cwd: pi.cwd, port: pi.port, pid: pi.pid, status: 'active' });
  });

  it('(b) SIGKILL: no shutdown hook, the registry marks it offline, ghostwatch calls it a ghost', async () => {
    const pi = await launch();
    const t = Date.now();
    process.kill(pi.pid, 'SIGKILL');
    const goneMs = await pi.waitGone(t);
    await observer!.waitEvent('node_offline', pi.nodeId, t);
    const shStatus = await waitFor('sh to write the exit status', () => pi.exitStatus(), 5000);
    const finding = await findingOf(pi.nodeId);
    report.b_sigkill = { goneMs, shExitStatus: shStatus, steps: pi.steps(), registry: eventsOf(pi.nodeId, t), ghostwatch: finding };
    expect(shStatus).toBe(137);
    expect(pi.steps()).not.toContain('session_shutdown:quit');
    expect(finding?.status).toBe('offline');
    // An offline row whose pid is dead is a ghost (issue 12); before that change this said `offline`.
    expect(finding?.verdict).toBe('ghost');
  });

  it('(c) SIGTERM: pi dies of the signal before its shutdown hook, offline, a ghost', async () => {
    // pi 0.73.1 catches SIGTERM (its docs say exit runs session_shutdown), but its handler first
    // removes itself; signal-exit (via proper-lockfile), listening in the same emit, then sees
    // only its own listener left and re-sends SIGTERM to the process, which now dies of it.
    const pi = await launch();
    const t = Date.now();
    process.kill(pi.pid, 'SIGTERM');
    const goneMs = await pi.waitGone(t);
    await observer!.waitEvent('node_offline', pi.nodeId, t);
    const shStatus = await waitFor('sh to write the exit status', () => pi.exitStatus(), 5000);
    const finding = await findingOf(pi.nodeId);
    report.c_sigterm = { goneMs, shExitStatus: shStatus, exitInTrace: exitCodeInTrace(pi) ?? 'none', steps: pi.steps(), registry: eventsOf(pi.nodeId, t), ghostwatch: finding };
    expect(shStatus).toBe(143);
    expect(pi.steps()).not.toContain('session_shutdown:quit');
    expect(finding?.status).toBe('offline');
    // As in (b): a ghost, not `offline`.
    expect(finding?.verdict).toBe('ghost');
  });

  it('(d) SIGHUP (its tmux window killed): emergency exit without the hook, offline, a ghost', async () => {
    const pi = await launch();
    const t = Date.now();
    pi.tmux('kill-window', '-t', 'pi');
    const goneMs = await pi.waitGone(t);
    await observer!.waitEvent('node_offline', pi.nodeId, t);
    const finding = await findingOf(pi.nodeId);
    report.d_sighup = { goneMs, exitInTrace: exitCodeInTrace(pi), steps: pi.steps(), registry: eventsOf(pi.nodeId, t), ghostwatch: finding };
    expect(exitCodeInTrace(pi)).toBe(129);
    expect(pi.steps()).not.toContain('session_shutdown:quit');
    expect(finding?.status).toBe('offline');
    // As in (b): a ghost, not `offline`.
    expect(finding?.verdict).toBe('ghost');
  });

  it('(e) /new: the old id is deregistered and the new one registered, same pid, port and connection', async () => {
    const pi = await launch();
    const oldId = pi.nodeId;
    const t = Date.now();
    pi.tmux('send-keys', '-t', 'pi', '-l', '/new');
    await sleep(300); // the command menu opens on "/"; Enter then runs the typed command
    pi.tmux('send-keys', '-t', 'pi', 'Enter');
    const started = await pi.waitStep('session_start', (l) => l.reason === 'new', 10_000, t);
    const newId = String(started.id);
    const joined = await observer!.waitEvent('node_joined', newId, t);
    const removed = await observer!.waitEvent('node_removed', oldId, t);
    const { findings } = await check(serve!.url);
    const verdicts = Object.fromEntries(findings.filter((f) => f.id === oldId || f.id === newId).map((f) => [f.id, f.verdict]));
    report.e_new = {
      oldId,
      newId,
      msToNewRegistration: joined.at - t,
      steps: pi.steps(),
      registry: [...eventsOf(oldId, t).map((e) => `old ${e}`), ...eventsOf(newId, t).map((e) => `new ${e}`)],
      ghostwatch: verdicts,
    };
    expect(newId).not.toBe(oldId);
    expect(removed.at).toBeLessThanOrEqual(joined.at);
    expect(joined.node).toMatchObject({ pid: pi.pid, port: pi.port, status: 'active' });
    expect(pi.trace().filter((l) => l.step === 'connected')).toHaveLength(1);
    expect(pi.trace().filter((l) => l.step === 'listening')).toHaveLength(1);
    expect(verdicts).toEqual({ [newId]: 'live' });
  });

  it('(f) Ctrl-D: pi quits cleanly, deregisters first, and no row is left', async () => {
    const pi = await launch();
    // The observer's own node_joined can come after launch() returns (it answers on pi's trace), or
    // in the same millisecond: the events counted are those after it.
    const joined = await waitFor('the observer to see it join', () => observer!.events.find((e) => e.id === pi.nodeId && e.event === 'node_joined'), 5000);
    const t = Math.max(Date.now(), joined.at + 1);
    pi.tmux('send-keys', '-t', 'pi', 'C-d');
    const goneMs = await pi.waitGone(t);
    const shStatus = await waitFor('sh to write the exit status', () => pi.exitStatus(), 5000);
    await sleep(300); // a node_offline, had the socket closed before the deregister, would be here by now
    const finding = await findingOf(pi.nodeId);
    report.f_ctrl_d = { goneMs, shExitStatus: shStatus, steps: pi.steps(), registry: eventsOf(pi.nodeId, t), ghostwatch: finding ?? 'no row' };
    expect(shStatus).toBe(0);
    expect(pi.steps()).toEqual(expect.arrayContaining(['session_shutdown:quit', 'deregister-flushed', 'shut-down']));
    expect(eventsOf(pi.nodeId, t).map((e) => e.split(' ')[0])).toEqual(['node_removed']);
    expect(finding).toBeUndefined();
  });
});

describe.runIf(HAS_TMUX || IN_CI)(`real pi ${PI_VERSION} started by serve --allow-spawn (Pi-DE's spawn dialog)`, () => {
  const homes: SpawnHome[] = [];
  const serves: Serve[] = [];

  beforeAll(async () => {
    if (!HAS_TMUX) throw new Error('the real-pi tests need tmux (CI is set, so they fail instead of skipping)');
    bin = await installPi();
  }, 360_000);

  afterAll(async () => {
    for (const s of serves) await s.stop();
    for (const h of homes) h.remove();
  });

  /** A fresh home with one folder, and serve started by `start` on the home's environment; both are cleaned up after the tests. */
  async function homeAndServe<S extends Serve>(folder: string, start: (piBin: string, env: NodeJS.ProcessEnv) => Promise<S>): Promise<{ home: SpawnHome; cwd: string; served: S }> {
    const home = new SpawnHome();
    homes.push(home);
    const cwd = home.folder(folder);
    const served = await start(bin, await home.env());
    serves.push(served);
    return { home, cwd, served };
  }

  it('(g) serve inside tmux: pi gets a window named after its folder, registers before the reply, and its pane is its PANE', async () => {
    const { home, cwd, served } = await homeAndServe('spawned-project', startSpawningServeInTmux);
    const t = Date.now();
    const { reply, replyMs, joined } = await spawnAsPiDe(served.url, cwd);
    const windows = served.tmux('list-windows', '-t', 'serve', '-F', '#{window_name}|#{pane_id}|#{pane_pid}').trim().split('\n');
    const registered = await waitFor('pi to read its registration reply', () => home.trace().find((l) => l.step === 'reply' && String(l.text).includes('"registered"')), 10_000).catch(() => undefined);
    const serveLog = served.tmux('capture-pane', '-p', '-J', '-t', 'serve:0').split('\n').filter((l) => l.startsWith('serve:'));
    report.g_spawn_in_tmux = { replyMs, reply, joinedMs: joined.map((j) => j.at), registeredMs: registered ? registered.at - t : 'never', windows, serveLog, steps: home.trace().map((l) => l.step) };
    // Before: the reply said spawning at once, and pi (stdio ignored) exited 0 without registering.
    expect(reply).toEqual({ result: { status: 'spawning', path: cwd } });
    expect(joined.map((j) => j.node.cwd)).toEqual([cwd]);
    expect(joined[0]!.at).toBeLessThanOrEqual(replyMs);
    const piPid = Number(joined[0]!.node.pid);
    expect(alive(piPid)).toBe(true);
    const window = windows.map((w) => w.split('|')).find(([name]) => name === 'spawned-project');
    expect(window).toBeDefined();
    // The window's process is serve's launcher; pi is its child, with the pane as its terminal.
    expect(readFileSync(`/proc/${piPid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]).toBe(window![2]);
    await waitFor('the pi header in its window', () => (served.tmux('capture-pane', '-p', '-t', window![1]!).includes(`pi v${PI_VERSION}`) ? true : undefined), 15_000);
    const lookup = await createTmux({ serverArgs: ['-L', served.socket] }).findPanes([piPid]);
    expect(lookup.available && lookup.byPid.get(piPid)?.id).toBe(window![1]);
    const finding = (await check(served.url)).findings.find((f) => f.entry.pid === piPid);
    expect(finding?.verdict).toBe('live');
  });

  it("(i) serve in a terminal, outside tmux: pi shares serve's terminal (as hypivisor starts it), registers, and is live", async () => {
    const { home, cwd, served } = await homeAndServe('terminal-project', startSpawningServeInTerminal);
    const { reply, replyMs, joined } = await spawnAsPiDe(served.url, cwd);
    report.i_spawn_in_terminal = { replyMs, reply, joinedMs: joined.map((j) => j.at), steps: home.trace().map((l) => l.step) };
    expect(reply).toEqual({ result: { status: 'spawning', path: cwd } });
    expect(joined.map((j) => j.node.cwd)).toEqual([cwd]);
    const piPid = Number(joined[0]!.node.pid);
    expect(alive(piPid)).toBe(true);
    // Its terminal is serve's own.
    expect(readlinkSync(`/proc/${piPid}/fd/0`)).toBe(served.pty());
    expect(served.pty()).toMatch(/^\/dev\/pts\/\d+$/);
    // pi draws on serve's terminal (what `script` copies out of the pty): its version is on it.
    await waitFor("pi's screen on serve's terminal", () => (stripVTControlCharacters(served.screen()).includes(PI_VERSION) ? true : undefined), 15_000).catch(() => {
      throw new Error(`pi ${PI_VERSION} not on serve's terminal; it shows:\n${stripVTControlCharacters(served.screen()).slice(-2000)}`);
    });
    const finding = (await check(served.url)).findings.find((f) => f.entry.pid === piPid);
    expect(finding?.verdict).toBe('live');
  });

  it('(h) serve with no terminal and no tmux: pi exits 0 before registering, and the reply says so', async () => {
    const { home, cwd, served } = await homeAndServe('headless-project', startSpawningServeDetached);
    const { reply, replyMs, joined } = await spawnAsPiDe(served.url, cwd);
    const exit = home.trace().find((l) => l.step === 'exit');
    report.h_spawn_without_terminal = { replyMs, reply, joined: joined.length, piExit: exit?.code ?? 'none', steps: home.trace().map((l) => l.step), serveLog: served.log().trim().split('\n') };
    // Before: {"status":"spawning"}, and Pi-DE closed its dialog as if it had worked.
    expect(reply.result).toBeUndefined();
    expect(reply.error).toMatch(/^Failed to spawn: .*pi exited with code 0 before it registered \(serve has no terminal and is not inside tmux/);
    expect(joined).toEqual([]);
    expect(exit?.code).toBe(0);
    expect(served.log()).toMatch(/serve: spawn failed: .* exited with code 0 before it registered/);
  });
});

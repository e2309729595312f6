// Numbers that do not lie (issue 27), end to end: the built CLI in a real 80x24 tmux pane. AGE is
// the floor of the true age and turns on its own, with no key pressed (real Claude Code session
// files, their startedAt set); a ghost gone before the monitor started says "≥"; after "evicted ghost <id>"
// a registry going down shows at once and the message goes; the header says "not connected since
// HH:MM" and counts nothing it cannot see; the detail view shows the registry's new last_seen.
// Needs tmux and a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { claudeRecord } from '../support/claude-records.js';
import { fileSleeper, killAndReap, type LiveChild } from '../support/processes.js';
import { BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';
import { until } from '../support/wait.js';

let panes = 0;
let current = tmuxOn(`gw-numbers-${process.pid}-0`);
let socket = '';
const capture = (): string => current.capture();
/** The pane's lines, without the blank ones under the frame (Ink leaves the last row spare). */
const paneLines = (): string[] => capture().replace(/\n+$/, '').split('\n');
/** The status line: the one above the footer. */
const statusLine = (): string => paneLines().at(-2) ?? '';
const children: LiveChild[] = [];
const dirs: string[] = [];
const sockets: WebSocket[] = [];

function killPanes(): void {
  if (!socket) return;
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // no server
  }
}

/** The built CLI in a fresh 80x24 pane, exec'd (its pid is the pane's), UTC. */
function startPane(args: string, env: Record<string, string>): void {
  killPanes();
  socket = `gw-numbers-${process.pid}-${++panes}`;
  current = tmuxOn(socket);
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '80', '-y', '24', `exec node '${BIN}' ${args}`], { env: tuiEnv({ TZ: 'UTC', ...env }) });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-numbers-'));
  dirs.push(dir);
  return dir;
}

/** Field 22 of /proc/<pid>/stat, as Claude Code writes it in procStart. */
function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** `sessions/<pid>.json` as Claude Code writes it, started `ageMs` ago. */
function claudeSession(folder: string, pid: number, id: string, ageMs: number, start: string): void {
  mkdirSync(join(folder, 'sessions'), { recursive: true });
  const now = Date.now();
  writeFileSync(join(folder, 'sessions', `${pid}.json`), JSON.stringify(claudeRecord(pid, id, { startedAt: now - ageMs, procStart: start, updatedAt: now - ageMs, statusUpdatedAt: now - ageMs }, now)));
}

/** The AGE cell of the row of `id` (the column after PID). */
function ageOf(id: string): string | undefined {
  const line = paneLines().find((l) => l.includes(id));
  return line === undefined ? undefined : /\s\d+\s+(<1m|≥\d+[mhd]|\d+[mhd])\s/.exec(line)?.[1];
}

afterEach(() => killPanes());
afterAll(async () => {
  killPanes();
  for (const ws of sockets) ws.terminate();
  await Promise.all(children.map(killAndReap));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(HAS_TMUX && BUILT)('numbers on screen, in a real tmux pane at 80x24', () => {
  it('AGE is the floor of the true age and turns on its own at the moment it changes; a ghost gone before the monitor started reads ≥', { timeout: 90_000 }, async () => {
    // Between 3 s and 30 s into a wall-clock minute: a clock floored to the minute (the old one)
    // shows 61 s as "<1m" here, and would not turn a row before the next minute boundary.
    await until(() => Date.now() % 60_000 >= 3_000 && Date.now() % 60_000 <= 30_000, 65_000, 'the first half of a minute');
    const boundary = Math.ceil(Date.now() / 60_000) * 60_000;
    const home = tempDir();
    const folder = join(home, 'claude');
    const old = fileSleeper();
    const young = fileSleeper();
    const doomed = fileSleeper();
    children.push(old, young, doomed);
    const doomedStart = procStart(doomed.pid);
    await killAndReap(doomed);
    claudeSession(folder, old.pid, 'aaaa0061-age-61s', 61_000, procStart(old.pid));
    claudeSession(folder, doomed.pid, 'dddd0000-ghost-gone', 600_000, doomedStart);
    startPane(`--source claude --claude-dir '${folder}'`, { HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') });
    // Judged (a row still checking shows how long the registry has had it).
    await until(() => / live\s+aaaa0061/.test(capture()) && /!ghost\s+dddd0000/.test(capture()), 15_000, () => `the rows judged:\n${capture()}`);
    expect(ageOf('aaaa0061')).toBe('1m');
    expect(ageOf('dddd0000')).toBe('≥0m');

    // A session that turns a minute old 3 s from now: its AGE changes on screen with no key pressed.
    claudeSession(folder, young.pid, 'bbbb0057-age-57s', 57_000, procStart(young.pid));
    await until(() => / live\s+bbbb0057/.test(capture()), 10_000, () => `the new row:\n${capture()}`);
    await until(() => ageOf('bbbb0057') === '1m', Math.max(1_000, boundary - Date.now() - 1_000), () => `bbbb0057 to read 1m before the wall clock's minute turns; it reads ${ageOf('bbbb0057')}:\n${capture()}`);
    expect(Date.now()).toBeLessThan(boundary);
  });

  it('after "evicted ghost ghost-agent" the registry going down shows at once, the message goes, and the header says "not connected since HH:MM" with no count', { timeout: 60_000 }, async () => {
    const server: RegistryServer = await startRegistryServer({ port: 0, log: () => {} });
    const register = async (id: string, pid: number): Promise<void> => {
      const ws = new WebSocket(server.url);
      sockets.push(ws);
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      const done = new Promise((r) => ws.once('message', r));
      ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/e2e-numbers', port: 9700 + sockets.length, status: 'active', pid } }));
      await done;
    };
    const live = fileSleeper();
    const doomed = fileSleeper();
    children.push(live, doomed);
    await register('live-agent', live.pid);
    await register('ghost-agent', doomed.pid);
    await killAndReap(doomed);
    const home = tempDir();
    startPane(`--registry ${server.url}`, { XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') });
    await until(() => /!ghost\s+ghost-agent/.test(capture()) && /2 sessions\s+\|\s+1 problem\b/.test(capture()), 15_000, () => `the ghost on screen:\n${capture()}`);
    // 80 columns, a ghost under the cursor: the footer offers d evict first.
    expect(paneLines().find((l) => l.startsWith('>'))).toMatch(/!ghost\s+ghost-agent/);
    expect(paneLines().at(-1)).toMatch(/^\s*d\s+evict\b/);
    current.run('send-keys', '-t', 'gw', 'd');
    await until(() => /Evict 1 entr/.test(capture()), 5_000, 'the dialog');
    // The last screen before harm wraps what it says, never cuts it: the pid, the folder and the reason whole.
    const dialog = paneLines().join('\n');
    expect(dialog).toMatch(new RegExp(`ghost session ghost-agent pid ${doomed.pid} in /tmp/e2e-numbers:`));
    expect(dialog.replace(/\s+/g, ' ')).toMatch(new RegExp(`pid ${doomed.pid} is gone \\(ESRCH\\)`));
    expect(dialog).not.toContain('…');
    current.run('send-keys', '-t', 'gw', 'y');
    await until(() => /evicted ghost ghost-agent/.test(statusLine()), 10_000, () => `"evicted ghost ghost-agent":\n${capture()}`);

    // The registry goes away: no key is pressed from here on.
    await server.close();
    await until(() => /hypivisor not connected/.test(statusLine()), 15_000, () => `"not connected" on the status line:\n${capture()}`);
    await until(() => !/evicted ghost/.test(statusLine()), 15_000, () => `the message to expire:\n${capture()}`);
    const header = await until(() => {
      const first = paneLines()[0] ?? '';
      return /: not connected since \d\d:\d\d \(/.test(first) ? first : undefined;
    }, 15_000, () => `the header:\n${capture()}`);
    // 80 columns hold no address and reason both: the state, since when and why come first.
    expect(header).toMatch(/^ghostwatch {2}hypivisor: not connected since \d\d:\d\d \(\w/);
    expect(header).not.toMatch(/\d+ (problems?|live|ghost)\b/);
  });

  it('the detail view shows the registry\'s last_seen as it moves (a heartbeat, then R)', { timeout: 60_000 }, async () => {
    const server: RegistryServer = await startRegistryServer({ port: 0, log: () => {} });
    try {
      const ws = new WebSocket(server.url);
      sockets.push(ws);
      await new Promise((r, j) => ws.once('open', r).once('error', j));
      const live = fileSleeper();
      children.push(live);
      const done = new Promise((r) => ws.once('message', r));
      ws.send(JSON.stringify({ id: 'r-1', method: 'register', params: { id: 'beat-agent', machine: hostname(), cwd: '/tmp/e2e-numbers', port: 9790, status: 'active', pid: live.pid } }));
      await done;
      const lastSeen = (): number => server.registry.listNodes().find((n: { id: string }) => n.id === 'beat-agent')!.last_seen as number;
      const utc = (seconds: number): string => new Date(seconds * 1000).toISOString().slice(11, 19);
      const home = tempDir();
      startPane(`--registry ${server.url}`, { XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') });
      await until(() => /live\s+beat-agent/.test(capture()), 15_000, () => `the row:\n${capture()}`);
      current.run('send-keys', '-t', 'gw', 'Enter');
      const first = lastSeen();
      await until(() => new RegExp(`last_seen\\s+${utc(first)}`).test(capture()), 5_000, () => `last_seen ${utc(first)} in the detail view:\n${capture()}`);
      // A heartbeat (a WebSocket ping) moves last_seen in the registry, a second later at least.
      await until(() => {
        if (lastSeen() !== first) return true;
        ws.ping();
        return false;
      }, 5_000, 'a later last_seen in the registry');
      current.run('send-keys', '-t', 'gw', 'R');
      // What the registry says now (a ping still in flight may have moved it once more).
      await until(() => new RegExp(`last_seen\\s+${utc(lastSeen())}`).test(capture()), 15_000, () => `last_seen ${utc(lastSeen())} in the detail view:\n${capture()}`);
      expect(capture()).not.toMatch(new RegExp(`last_seen\\s+${utc(first)}`));
    } finally {
      await server.close();
    }
  });
});

// spawn_agent starts a real process (a spawn command that execs test/support/spawned-agent.mjs, or
// one that exits at once) where a person can reach it, and answers only once it registered: an
// agent that ends first is a failure in the reply and in serve's log, never a silent success
// (real pi with no terminal exits 0 before registering, protocols.md §1). Outside tmux the agent
// shares serve's stdio; inside tmux ($TMUX) it gets a window named after its folder, whose pane is
// the one ghostwatch's PANE finds for its pid, and no folder name reaches tmux's parser or formats.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTmux } from '../../src/os/tmux.js';
import { tmuxArg, windowName } from '../../src/server/tmux-window.js';
import { alive } from '../support/processes.js';
import { BUILT, HAS_TMUX, ROOT, tmuxOn, tuiEnv } from '../support/tmux.js';
import { until } from '../support/wait.js';
import { cleanup, connectPastInit, expectFrame, roundTrip, serve, type RawClient } from './helpers.js';

const AGENT = join(ROOT, 'test/support/spawned-agent.mjs');
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

interface Record {
  readonly pid: number;
  readonly ppid: number;
  readonly cwd: string;
  readonly tty: boolean;
  readonly tmuxPane: string | null;
  readonly token: boolean;
  readonly mode: string;
  readonly registered?: string | null;
}

let root: string;
let home: string;
let recordFile: string;
/** Spawn commands: a process that registers, one that runs on without registering, one that exits at once. */
const commands = { register: '', linger: '', exit0: '', exit3: '' };

function writeScript(name: string, body: string): string {
  const file = join(root, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function records(): Record[] {
  if (!existsSync(recordFile)) return [];
  return readFileSync(recordFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record);
}

function endAgents(): void {
  for (const r of records()) if (alive(r.pid)) process.kill(r.pid, 'SIGKILL');
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gw-spawn-')));
  home = join(root, 'home');
  recordFile = join(root, 'spawned.jsonl');
  mkdirSync(join(home, 'alpha'), { recursive: true });
  mkdirSync(join(home, 'beta'));
  commands.register = writeScript('agent-register', `exec '${process.execPath}' '${AGENT}' register`);
  commands.linger = writeScript('agent-linger', `exec '${process.execPath}' '${AGENT}' linger`);
  commands.exit0 = writeScript('agent-exit0', 'exit 0');
  commands.exit3 = writeScript('agent-exit3', 'exit 3');
});

afterEach(async () => {
  endAgents();
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

const call = (method: string, params?: unknown): string => JSON.stringify({ id: 'q', method, ...(params === undefined ? {} : { params }) });

/** The environment agents start from here: ours, outside any tmux, with the record file named. */
function outsideTmux(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { TMUX: _tmux, TMUX_PANE: _pane, ...env } = process.env;
  return { ...env, GW_SPAWN_RECORD: recordFile, ...extra };
}

async function spawnClient(opts: Parameters<typeof serve>[0] = {}): Promise<{ a: RawClient; log: string[] }> {
  const log: string[] = [];
  const server = await serve({ homeDir: home, allowSpawn: true, spawnBaseEnv: outsideTmux(), quiet: false, log: (l) => log.push(l), ...opts });
  return { a: await connectPastInit(opts.token ? `${server.url}?token=${opts.token}` : server.url), log };
}

describe('spawn_agent in serve’s own terminal (serve is not inside tmux)', () => {
  it('an agent that exits before it registers is a failure, in the reply and in serve’s log', async () => {
    const { a, log } = await spawnClient({ spawnCommand: commands.exit0 });
    a.send(call('spawn_agent', { path: join(home, 'alpha') }));
    const reply = JSON.parse(await a.reply(10_000)) as { error?: string; result?: unknown };
    // Before: {"status":"spawning"} about 40 ms after the start, whatever the agent did next.
    expect(reply.result).toBeUndefined();
    expect(reply.error).toBe(
      `Failed to spawn: ${commands.exit0} exited with code 0 before it registered ` +
        '(serve has no terminal and is not inside tmux: start serve inside tmux or from a terminal)',
    );
    expect(log.some((l) => l.startsWith('serve: spawn failed:') && l.includes('exited with code 0 before it registered'))).toBe(true);
  });

  it('answers once the agent registered: its registration is in before the reply, and it got the registry’s address and token', async () => {
    const server = await serve({ homeDir: home, allowSpawn: true, spawnCommand: commands.register, spawnBaseEnv: outsideTmux(), token: 's3cret;#x' });
    const a = await connectPastInit(`${server.url}?token=s3cret;%23x`);
    a.send(call('spawn_agent', { path: `${home}/beta/../alpha` }));
    expectFrame(await a.reply(15_000), { id: 'q', result: { status: 'spawning', path: join(home, 'alpha') } });
    // The node_joined of the agent came before the reply on this same connection.
    const joined = JSON.parse(await a.next('event', 0)) as { event: string; node: { cwd: string; pid: number } };
    expect(joined.event).toBe('node_joined');
    expect(joined.node.cwd).toBe(join(home, 'alpha'));
    const [agent] = await until(() => (records().length > 0 ? records() : undefined), 5000, 'the agent’s record');
    expect(agent).toMatchObject({ pid: joined.node.pid, cwd: join(home, 'alpha'), token: true, tmuxPane: null, registered: expect.any(String) });
    expect(server.registry.listNodes().map((n) => n.pid)).toEqual([agent!.pid]);
  });

  it('an agent still running unregistered when the wait ends is a success, and the log says it has not registered', async () => {
    const { a, log } = await spawnClient({ spawnCommand: commands.linger, spawnRegisterTimeoutMs: 300 });
    await roundTrip(a, call('spawn_agent', { path: join(home, 'beta') }), { id: 'q', result: { status: 'spawning', path: join(home, 'beta') } });
    const [agent] = await until(() => (records().length > 0 ? records() : undefined), 5000, 'the agent’s record');
    expect(alive(agent!.pid)).toBe(true);
    expect(log.some((l) => l.includes('has not registered after 0.3 s; it runs on') && l.includes(`serve's terminal`))).toBe(true);
  });

  it('creates the new folder and starts there', async () => {
    const { a } = await spawnClient({ spawnCommand: commands.register });
    await roundTrip(a, call('spawn_agent', { path: home, new_folder: '  new/project ' }), {
      id: 'q',
      result: { status: 'spawning', path: join(home, 'new', 'project') },
    });
    const [agent] = await until(() => (records().length > 0 ? records() : undefined), 5000, 'the agent’s record');
    expect(agent!.cwd).toBe(join(home, 'new', 'project'));
  });

  it('says so when the spawn command cannot be started', async () => {
    const missing = join(root, 'no-such-pi');
    const { a } = await spawnClient({ spawnCommand: missing });
    await roundTrip(a, call('spawn_agent', { path: home }), { id: 'q', error: `Failed to spawn: spawn ${missing} ENOENT` });
  });
});

describe('tmux window names and arguments', () => {
  it('names a window after the folder’s last part, keeping no character tmux would read', () => {
    expect(windowName('/home/u/web-dashboard')).toBe('web-dashboard');
    expect(windowName('/home/u/-t x')).toBe('t-x');
    expect(windowName('/home/u/;kill-server')).toBe('kill-server');
    expect(windowName('/home/u/x;')).toBe('x');
    expect(windowName('/home/u/#{pane_id}')).toBe('pane_id');
    expect(windowName('/home/u/#(touch pwned)')).toBe('touch-pwned');
    expect(windowName('/home/u/my.app:2')).toBe('my-app-2');
    expect(windowName('/home/u/проект_1')).toBe('проект_1');
    expect(windowName('/home/u/a\u001b[31mred\u0007')).toBe('a-31mred');
    expect(windowName('/home/u/#;')).toBe('agent');
    expect(windowName('/')).toBe('agent');
    expect(windowName(`/home/u/${'x'.repeat(40)}`)).toBe('x'.repeat(32));
  });

  it('writes a trailing ";" as "\\;" so tmux takes the argument whole instead of ending the command there', () => {
    expect(tmuxArg('plain')).toBe('plain');
    expect(tmuxArg('x;')).toBe('x\\;');
    expect(tmuxArg(';')).toBe('\\;');
    expect(tmuxArg('a\\;')).toBe('a\\\\;');
    expect(tmuxArg(';kill-server')).toBe(';kill-server');
  });
});

describe.runIf((HAS_TMUX && BUILT) || IN_CI)('spawn_agent inside tmux (serve runs in a tmux pane: $TMUX)', () => {
  const socket = `gw-spawn-${process.pid}`;
  const { run } = tmuxOn(socket);
  let tmuxEnv: NodeJS.ProcessEnv;

  beforeAll(() => {
    if (!HAS_TMUX || !BUILT) throw new Error('these tests need tmux and a build (npm run build); CI is set, so they fail instead of skipping');
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'work', '-x', '100', '-y', '30', 'sh'], { env: tuiEnv({}) });
    // What a process started in that session's first pane has: the server's socket, its pid, the pane.
    const [path, pid] = run('display', '-p', '-t', 'work:0.0', '#{socket_path} #{pid}').trim().split(' ');
    tmuxEnv = { TMUX: `${path},${pid},0`, TMUX_PANE: run('display', '-p', '-t', 'work:0.0', '#{pane_id}').trim() };
  });
  afterAll(() => {
    try {
      run('kill-server');
    } catch {
      // already gone
    }
  });
  afterEach(() => {
    for (const id of run('list-windows', '-t', 'work', '-F', '#{window_id}').trim().split('\n').slice(1)) run('kill-window', '-t', id);
  });

  async function tmuxClient(command: string): Promise<{ a: RawClient; log: string[] }> {
    return spawnClient({ spawnCommand: command, spawnBaseEnv: outsideTmux(tmuxEnv), token: 'tok' });
  }

  function windows(): { id: string; name: string; paneId: string; panePid: number }[] {
    return run('list-windows', '-t', 'work', '-F', '#{window_id}|#{window_name}|#{pane_id}|#{pane_pid}')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => {
        const [id, name, paneId, panePid] = line.split('|');
        return { id: id!, name: name!, paneId: paneId!, panePid: Number(panePid) };
      });
  }

  it('opens a window named after the folder, in the background; its pane is the agent’s PANE and its terminal', async () => {
    mkdirSync(join(home, 'web-dashboard'));
    const { a, log } = await tmuxClient(commands.register);
    await roundTrip(a, call('spawn_agent', { path: join(home, 'web-dashboard') }), { id: 'q', result: { status: 'spawning', path: join(home, 'web-dashboard') } });
    const [agent] = await until(() => (records().length > 0 ? records() : undefined), 5000, 'the agent’s record');
    const [window] = windows();
    expect(window?.name).toBe('web-dashboard');
    // -d: the window serve's person was looking at is still the one shown.
    expect(run('display', '-p', '-t', 'work', '#{window_index}').trim()).toBe('0');
    expect(agent).toMatchObject({ cwd: join(home, 'web-dashboard'), tty: true, tmuxPane: window!.paneId, token: true, registered: expect.any(String) });
    // The window's process is the launcher; the agent is its child.
    expect(agent!.ppid).toBe(window!.panePid);
    expect(readlinkSync(`/proc/${window!.panePid}/cwd`)).toBe(join(home, 'web-dashboard'));
    // ghostwatch's PANE column finds the pane by the agent's pid, as it does for any agent.
    const lookup = await createTmux({ serverArgs: ['-L', socket], env: tuiEnv({}) }).findPanes([agent!.pid]);
    expect(lookup.available && lookup.byPid.get(agent!.pid)?.id).toBe(window!.paneId);
    expect(log.some((l) => l.includes(`tmux window work:1 (${window!.paneId})`))).toBe(true);
  });

  it('an agent that exits in its window before it registers is a failure that says how it ended', async () => {
    const { a, log } = await tmuxClient(commands.exit3);
    a.send(call('spawn_agent', { path: join(home, 'alpha') }));
    const reply = JSON.parse(await a.reply(10_000)) as { error?: string };
    expect(reply.error).toBe(`Failed to spawn: ${commands.exit3} exited with code 3 before it registered`);
    expect(log.some((l) => l.startsWith('serve: spawn failed:') && l.includes('exited with code 3'))).toBe(true);
  });

  it('a spawn command that cannot start in the window is a failure that says why', async () => {
    const missing = join(root, 'no-such-pi');
    const { a } = await tmuxClient(missing);
    a.send(call('spawn_agent', { path: join(home, 'alpha') }));
    const reply = JSON.parse(await a.reply(10_000)) as { error?: string };
    expect(reply.error).toBe(`Failed to spawn: ${missing} could not start: spawn ${missing} ENOENT before it registered`);
  });

  it('folder names reach neither tmux’s command parser nor its formats', async () => {
    const names = ['-t x', ';kill-server', 'x;', '#{pane_id}', '#(touch gw-pwned)', 'a\\;'];
    for (const name of names) mkdirSync(join(home, name));
    const { a } = await tmuxClient(commands.register);
    for (const name of names) {
      await roundTrip(a, call('spawn_agent', { path: join(home, name) }), { id: 'q', result: { status: 'spawning', path: join(home, name) } });
    }
    const agents = await until(() => (records().length === names.length ? records() : undefined), 5000, 'every agent’s record');
    expect(agents.map((r) => r.cwd).sort()).toEqual(names.map((n) => join(home, n)).sort());
    expect(windows().map((w) => w.name)).toEqual(['t-x', 'kill-server', 'x', 'pane_id', 'touch-gw-pwned', 'a']);
    expect(run('has-session', '-t', 'work')).toBe('');
    for (const dir of [home, ...names.map((n) => join(home, n)), root, process.cwd()]) expect(existsSync(join(dir, 'gw-pwned'))).toBe(false);
  });
});

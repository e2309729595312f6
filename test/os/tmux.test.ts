// tmux as this machine's provider reads it: a real tmux server on a private socket, a real agent
// process in a real pane (a child of the pane's shell), one list-panes per lookup; a missing tmux
// or a missing server is a cheap answer that is kept; switching a real attached client to a pane.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTmux, NO_SERVER_RETRY_MS, readParents } from '../../src/os/tmux.js';
import { attachClient, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';
import { until } from '../support/wait.js';
import { childrenOf } from '../support/processes.js';

const socket = `gw-os-${process.pid}`;
const { run } = tmuxOn(socket);
const env = tuiEnv({});
const dir = mkdtempSync(join(tmpdir(), 'gw-tmux-'));
let agentPid = 0;
let agentPane = '';

describe.runIf(HAS_TMUX)('tmux panes on a real server', () => {
  beforeAll(async () => {
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'home', '-x', '80', '-y', '24', 'sh'], { env });
    run('new-session', '-d', '-s', 'work', '-x', '80', '-y', '24', 'sh');
    run('new-window', '-t', 'work:1', 'sh');
    // The agent: a real process under the shell of work:1.1 (sh forks it; `; :` keeps sh from exec'ing it).
    agentPane = run('split-window', '-t', 'work:1', '-P', '-F', '#{pane_id}', "sh -c 'sleep 300; :'").trim();
    const shell = Number(run('display', '-p', '-t', agentPane, '#{pane_pid}').trim());
    agentPid = await until(() => childrenOf(shell)[0], 5000, 'the agent under the pane shell');
  });
  afterAll(() => {
    try {
      run('kill-server');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the agent’s pane from one list-panes, and no pane for a process outside tmux', async () => {
    const tmux = createTmux({ serverArgs: ['-L', socket], env });
    const lookup = await tmux.findPanes([agentPid, process.pid]);
    expect(lookup.available).toBe(true);
    if (!lookup.available) return;
    expect(lookup.byPid.get(agentPid)).toEqual({ pid: expect.any(Number), target: 'work:1.1', id: agentPane });
    expect(lookup.byPid.has(process.pid)).toBe(false);
    expect(lookup.panes.map((p) => p.target).sort()).toEqual(['home:0.0', 'work:0.0', 'work:1.0', 'work:1.1']);
  });

  it('reads the chain from the agent up to its pane’s shell, and no further', async () => {
    const shell = Number(run('display', '-p', '-t', agentPane, '#{pane_pid}').trim());
    const parents = await readParents([agentPid], new Set([shell]));
    expect(parents).toEqual(new Map([[agentPid, shell]]));
  });

  it('no tmux server: says so, and asks tmux again only after a while', async () => {
    // A stand-in tmux that logs each run and answers as tmux does without a server.
    const fake = join(dir, 'tmux-no-server');
    const log = join(dir, 'no-server.log');
    writeFileSync(fake, `#!/bin/sh\necho run >> ${log}\necho "no server running on /tmp/tmux-0/default" >&2\nexit 1\n`);
    chmodSync(fake, 0o755);
    let t = 0;
    const tmux = createTmux({ command: fake, env, monotonic: () => t });
    await expect(tmux.findPanes([agentPid])).resolves.toEqual({ available: false, why: 'no server running on /tmp/tmux-0/default' });
    await expect(tmux.findPanes([agentPid])).resolves.toEqual({ available: false, why: 'no tmux server' });
    expect(readFileSync(log, 'utf8')).toBe('run\n');
    t = NO_SERVER_RETRY_MS + 1;
    await tmux.findPanes([agentPid]);
    expect(readFileSync(log, 'utf8')).toBe('run\nrun\n');
  });

  it('a real server that is not running: one line, no throw', async () => {
    const tmux = createTmux({ serverArgs: ['-L', `${socket}-none`], env });
    const lookup = await tmux.findPanes([agentPid]);
    expect(lookup).toMatchObject({ available: false, why: expect.stringMatching(/no server running|error connecting/) });
  });

  it('tmux not installed: said once and for good (never spawned again)', async () => {
    const path = join(dir, 'later', 'tmux');
    const tmux = createTmux({ command: path, env });
    await expect(tmux.findPanes([agentPid])).resolves.toEqual({ available: false, why: 'tmux is not installed' });
    // Installed afterwards: the answer is kept, the binary is not run.
    mkdirSync(join(dir, 'later'));
    const log = join(dir, 'later.log');
    writeFileSync(path, `#!/bin/sh\necho run >> ${log}\n`);
    chmodSync(path, 0o755);
    await expect(tmux.findPanes([agentPid])).resolves.toEqual({ available: false, why: 'tmux is not installed' });
    expect(() => readFileSync(log)).toThrow();
  });

  it('outside tmux, o says how to attach; inside, it moves the client to the agent’s pane', async () => {
    const pane = { pid: 0, target: 'work:1.1', id: agentPane };
    const outside = createTmux({ serverArgs: ['-L', socket], env: { ...env, TMUX: '' } });
    await expect(outside.jumpToPane(pane)).resolves.toEqual({ ok: false, text: 'not inside tmux: attach to it with  tmux attach -t work:1.1' });

    const client = await attachClient(socket, 'home', env);
    try {
      expect(run('display', '-p', '-c', client.name, '#{session_name} #{pane_id}').trim()).toMatch(/^home %/);
      const socketPath = run('display', '-p', '#{socket_path}').trim();
      const serverPid = run('display', '-p', '#{pid}').trim();
      const inside = createTmux({ env: { ...env, TMUX: `${socketPath},${serverPid},0` } });
      await expect(inside.jumpToPane(pane)).resolves.toEqual({ ok: true, text: 'switched to tmux pane work:1.1' });
      expect(run('display', '-p', '-c', client.name, '#{session_name}:#{window_index}.#{pane_index} #{pane_id}').trim()).toBe(`work:1.1 ${agentPane}`);
      // A pane that is gone: one line, from tmux.
      const gone = await inside.jumpToPane({ pid: 0, target: 'work:9.9', id: '%999' });
      expect(gone.ok).toBe(false);
      expect(gone.text).toMatch(/^cannot switch to tmux pane work:9\.9: .+/);
      expect(gone.text).not.toContain('\n');
    } finally {
      client.stop();
    }
  });
});

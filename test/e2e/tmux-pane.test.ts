// tmux end to end: the built CLI in a real pane of a private tmux server, a real registry, real
// agents (test/support/pi-agent.mjs, registering their own pids) in other panes, and a real
// attached client. The PANE column names each agent's pane (a killed agent's too, while its pane
// lives), `o` lands the client on the agent's pane, and `c` writes OSC 52 with the row's id to the
// terminal (tmux, with set-clipboard on, takes it as a paste buffer); piped, nothing of the kind.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { PI_AGENT_SCRIPT } from '../support/pi-agent.js';
import { until } from '../support/wait.js';
import { attachClient, BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';

const socket = `gw-pane-${process.pid}`;
const { run: tmux, capture } = tmuxOn(socket);
const dir = mkdtempSync(join(tmpdir(), 'gw-pane-'));
const env = tuiEnv({ XDG_STATE_HOME: dir });
let server: RegistryServer;
let client: { name: string; stop: () => void } | undefined;
const agentPanes: Record<string, string> = {};

/** Start a pi-like agent under the shell of a new pane at `where`; its pane id. */
function agentIn(where: string, id: string): string {
  const pane = tmux('split-window', '-t', where, '-P', '-F', '#{pane_id}', 'sh').trim();
  tmux('send-keys', '-t', pane, `node ${PI_AGENT_SCRIPT} ${server.url} --id ${id}`, 'Enter');
  return pane;
}

const registered = (id: string) => server.registry.listNodes().some((n: { id: string }) => n.id === id);
const rowOf = (id: string) => capture('gw').split('\n').find((l) => l.includes(id)) ?? '';
const target = (pane: string) => tmux('display', '-p', '-t', pane, '#{session_name}:#{window_index}.#{pane_index}').trim();

describe.runIf(HAS_TMUX && BUILT)('ghostwatch and tmux panes, end to end', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '180', '-y', '30', 'sh'], { env });
    tmux('set', '-g', 'set-clipboard', 'on');
    tmux('new-session', '-d', '-s', 'work', '-x', '180', '-y', '30', 'sh');
    tmux('new-window', '-t', 'work:2', 'sh');
    agentPanes.live = agentIn('work:2', 'agent-in-pane');
    tmux('new-window', '-t', 'work:3', 'sh');
    agentPanes.ghost = agentIn('work:3', 'ghost-in-pane');
    await until(() => registered('agent-in-pane') && registered('ghost-in-pane'), 10_000, 'both agents registered');
    client = await attachClient(socket, 'gw', env);
    tmux('send-keys', '-t', 'gw', `node ${BIN} --registry ${server.url}`, 'Enter');
  });
  afterAll(async () => {
    client?.stop();
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the PANE column names each agent’s pane, and a killed one’s while its pane lives', async () => {
    expect(target(agentPanes.live!)).toBe('work:2.1');
    await until(() => /work:2\.1/.test(rowOf('agent-in-pane')) && /work:3\.1/.test(rowOf('ghost-in-pane')), 15_000, 'the panes in the table');
    expect(capture('gw')).toMatch(/VERDICTv?\s+SESSION\s+PID\s+PANE/);
    expect(rowOf('agent-in-pane')).toMatch(/^\S*\s+live\s+agent-in-pane\s+\d+ work:2\.1 /);
    // The second agent dies hard (we started it): its row turns ghost, its pane (the shell) lives on.
    const shell = tmux('display', '-p', '-t', agentPanes.ghost!, '#{pane_pid}').trim();
    const node = execFileSync('pgrep', ['-P', shell], { encoding: 'utf8' }).trim().split('\n')[0]!;
    process.kill(Number(node), 'SIGKILL');
    await until(() => /!ghost/.test(rowOf('ghost-in-pane')), 10_000, 'the ghost');
    expect(rowOf('ghost-in-pane')).toMatch(/!ghost\s+ghost-in-pane\s+\d+ work:3\.1 /);
    // Its pane closed: the pane goes from the row at the next lookup.
    tmux('kill-pane', '-t', agentPanes.ghost!);
    await until(() => /!ghost\s+ghost-in-pane\s+\d+ - /.test(rowOf('ghost-in-pane')), 10_000, 'the closed pane gone from the row');
  }, 60_000);

  it('o switches the attached client to the agent’s pane', async () => {
    const clientPane = () => tmux('display', '-p', '-c', client!.name, '#{pane_id}').trim();
    const gwPane = tmux('display', '-p', '-t', 'gw', '#{pane_id}').trim();
    expect(clientPane()).toBe(gwPane);
    // One key a turn: the filter opens, takes the text, is kept.
    tmux('send-keys', '-t', 'gw', '/');
    await until(() => capture('gw').includes('Enter keeps it'), 5000, 'the filter prompt');
    tmux('send-keys', '-t', 'gw', 'agent-in-pane');
    await until(() => capture('gw').includes('/agent-in-pane'), 5000, 'the filter text');
    tmux('send-keys', '-t', 'gw', 'Enter');
    // The filter kept (the status line names it), the agent under the cursor.
    await until(() => capture('gw').includes('filter "agent-in-pane"') && /^> +live\s+agent-in-pane/m.test(capture('gw')), 5000, 'the agent under the cursor');
    tmux('send-keys', '-t', 'gw', 'o');
    await until(() => clientPane() === agentPanes.live, 5000, 'the client on the agent’s pane');
    expect(tmux('display', '-p', '-c', client!.name, '#{session_name}:#{window_index}.#{pane_index}').trim()).toBe('work:2.1');
    await until(() => capture('gw').includes('switched to tmux pane work:2.1'), 3000, 'the status line');
  }, 30_000);

  it('c writes OSC 52 with the row’s id to the terminal, and tmux takes it', async () => {
    const raw = join(dir, 'raw.out');
    tmux('pipe-pane', '-O', '-t', 'gw', `cat > ${raw}`);
    tmux('send-keys', '-t', 'gw', 'c');
    const osc = `\u001b]52;c;${Buffer.from('agent-in-pane').toString('base64')}\u0007`;
    await until(() => existsSync(raw) && readFileSync(raw, 'latin1').includes(osc), 5000, 'OSC 52 in the pane’s output');
    tmux('pipe-pane', '-t', 'gw');
    expect(tmux('show-buffer')).toBe('agent-in-pane');
    await until(() => capture('gw').includes('copied agent-in-pane (OSC 52)'), 3000, 'the status line');
  }, 30_000);

  it('with stdout piped there is no monitor, and no OSC 52 in what it prints', async () => {
    const out = join(dir, 'piped.out');
    const pane = tmux('new-window', '-P', '-F', '#{pane_id}', '-t', 'gw', 'sh').trim();
    tmux('send-keys', '-t', pane, `node ${BIN} --registry ${server.url} | cat > ${out}; echo done-$((40+2))`, 'Enter');
    tmux('send-keys', '-t', pane, 'c');
    await until(() => /^done-42$/m.test(capture(pane)), 15_000, 'the piped run to end');
    const text = readFileSync(out, 'latin1');
    expect(text).toMatch(/agent-in-pane/);
    expect(text).not.toContain('\u001b]52;');
  }, 30_000);
});

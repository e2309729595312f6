// `ghostwatch demo` inside tmux, for real (issue 27): the built CLI runs in a pane of a private
// tmux server; its agents run in panes of a window of its own, gw-demo, so the monitor's PANE
// column names each agent's own pane (not the monitor's), `o` takes an attached client there, and
// the pane shows who the agent is. Quitting (q) closes the window and ends every process; so does
// SIGKILL of the demo (its agents read end of file on its socket). The tmux server carries
// HYPI_TOKEN in its environment, as a person's may: no agent started in a pane gets it.
// Needs tmux and a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoId } from '../../src/demo/identity.js';
import { until } from '../support/wait.js';
import { attachClient, BIN, BUILT, HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';

const socket = `gw-demo-${process.pid}`;
const { run: tmux, capture } = tmuxOn(socket);
const dir = mkdtempSync(join(tmpdir(), 'gw-demo-tmux-'));
const TOKEN = 'tok-5d1e9b-in-tmux-env';
/** The temp folder of every process in this tmux: where the demo makes its sockets' folders. */
const temp = join(dir, 'tmp');
mkdirSync(temp);
const env = tuiEnv({ XDG_STATE_HOME: dir, TMPDIR: temp, HYPI_TOKEN: TOKEN });
const socketFolders = (): string[] => readdirSync(temp).filter((n) => n.startsWith('ghostwatch-demo-'));
let client: { name: string; stop: () => void } | undefined;

const OPENING = [
  'live api-gateway',
  'live web-dashboard',
  'live infra-terraform',
  'reused search-indexer',
  'superseded mobile-app',
  'pending docs-site',
  'offline data-pipeline',
  'supervisor fleet-supervisor',
];
const LIVE = ['api-gateway', 'web-dashboard', 'infra-terraform'];

interface Pane {
  readonly pid: number;
  readonly target: string;
  readonly id: string;
}

/** The panes of `session`'s gw-demo window, or [] while there is none. */
function demoPanes(session: string): Pane[] {
  const windows = tmux('list-windows', '-t', session, '-F', '#{window_name}').split('\n');
  if (!windows.includes('gw-demo')) return [];
  return tmux('list-panes', '-t', `${session}:gw-demo`, '-F', '#{pane_pid} #{session_name}:#{window_index}.#{pane_index} #{pane_id}')
    .trim()
    .split('\n')
    .map((l) => l.split(' '))
    .map(([pid, target, id]) => ({ pid: Number(pid), target: target!, id: id! }));
}

/** How many windows named gw-demo `session` has. */
function windowsNamedGwDemo(session: string): number {
  try {
    return tmux('list-windows', '-a', '-F', '#{session_name} #{window_name}').split('\n').filter((n) => n === `${session} gw-demo`).length;
  } catch {
    return 0; // no server left
  }
}

/** Everything a pane printed, its scrolled-off lines too, with lines tmux wrapped joined again. */
const printed = (pane: string): string => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', pane);

const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** `role name` of an agent process (`node .../agent.js <role> <name> [flags]`). */
const agentOf = (pid: number): string => /agent\.js (\S+) (\S+)/.exec(cmdline(pid))?.slice(1).join(' ') ?? `not an agent: ${cmdline(pid)}`;

/** `root` and every descendant of it, by ppid. */
function treeOf(roots: readonly number[]): Set<number> {
  const parent = new Map<number, number>();
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone mid-scan
    }
  }
  const found = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) if (!found.has(pid) && found.has(ppid)) (found.add(pid), (grew = true));
  }
  return found;
}

/** Still running: a zombie has ended (the staged zombie, handed to init, waits there to be reaped, slowly on some machines). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** The monitor's row of the session `id`: [pid, PANE]. */
function rowOf(id: string): { pid: number; pane: string } | undefined {
  const line = capture('gw:0').split('\n').find((l) => l.includes(id));
  const m = line === undefined ? null : new RegExp(`${id}\\s+(\\d+) (\\S+)`).exec(line);
  return m ? { pid: Number(m[1]), pane: m[2]! } : undefined;
}

/** Starts the built demo as the only process of a new session's first pane; its pid. */
function startDemoIn(session: string): number {
  const pid = tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', '-P', '-F', '#{pane_pid}', '--', process.execPath, BIN, 'demo').trim();
  return Number(pid);
}

/** The headless demo as the process of a new `columns`×`rows` session, its stderr in a file; its pid and that file. */
function startHeadlessIn(session: string, columns: number, rows: number, vars: readonly string[] = []): { pid: number; log: () => string } {
  const file = join(dir, `${session}.err`);
  const script = `exec "$0" "$@" 2>${file}`;
  const pid = tmux('new-session', '-d', '-s', session, '-x', String(columns), '-y', String(rows), '-P', '-F', '#{pane_pid}', '--', 'sh', '-c', script, '/usr/bin/env', ...vars, process.execPath, BIN, 'demo', '--headless').trim();
  const log = (): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return ''; // not written yet
    }
  };
  return { pid: Number(pid), log };
}

const parentOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

describe.runIf(HAS_TMUX && BUILT)('ghostwatch demo inside tmux: every agent in a pane of its own', () => {
  let demoPid = 0;
  beforeAll(() => {
    // A session that outlives the demos, so the server does too.
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'keep', '-x', '80', '-y', '24', 'sh'], { env });
    demoPid = startDemoIn('gw');
  });
  afterAll(() => {
    client?.stop();
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens the window gw-demo beside the monitor, one pane per agent, each pane’s process the agent', async () => {
    const panes = await until(() => demoPanes('gw').length >= OPENING.length && demoPanes('gw'), 30_000, () => `the gw-demo window with ${OPENING.length} panes: ${tmux('list-windows', '-a')}`);
    expect(panes.map((p) => agentOf(p.pid)).sort()).toEqual([...OPENING].sort());
    // The monitor's window is still the one shown.
    expect(tmux('display', '-p', '-t', 'gw:', '#{window_index}').trim()).toBe('0');
    // The pane shows who runs there (its border title, and the first lines it printed).
    const gateway = panes.find((p) => agentOf(p.pid) === 'live api-gateway')!;
    await until(() => printed(gateway.id).includes('live api-gateway: staged'), 20_000, () => `api-gateway's pane: ${printed(gateway.id)}`);
    const text = printed(gateway.id);
    expect(text).toContain(`pid ${gateway.pid}`);
    expect(text).toMatch(/port \d+/);
    expect(tmux('display', '-p', '-t', gateway.id, '#{pane_title}').trim()).toBe(`live api-gateway (${gateway.pid})`);
    // tmux's environment held HYPI_TOKEN: none of the agents nor their children has it.
    const leaks = [...treeOf(panes.map((p) => p.pid))].filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(TOKEN);
      } catch {
        return false;
      }
    });
    expect(leaks.map(cmdline)).toEqual([]);
  }, 60_000);

  it('the PANE column names each live agent’s own pane, not the monitor’s', async () => {
    const monitor = tmux('display', '-p', '-t', 'gw:0', '#{session_name}:#{window_index}.#{pane_index}').trim();
    const ids = LIVE.map((name) => demoId(`live:${name}`));
    const rows = await until(() => {
      const found = ids.map(rowOf);
      return found.every((r) => r !== undefined && r.pane !== '-') && (found as { pid: number; pane: string }[]);
    }, 30_000, () => `a PANE on every live row:\n${capture('gw:0')}`);
    const panes = demoPanes('gw');
    for (const row of rows) {
      expect(row.pane, `the live agent pid ${row.pid}'s PANE`).not.toBe(monitor);
      expect(row.pane).toBe(panes.find((p) => p.pid === row.pid)?.target);
    }
  }, 60_000);

  it('o on a live agent’s row makes its pane the active one of the attached client', async () => {
    client = await attachClient(socket, 'gw', env);
    const clientPane = (): string => tmux('display', '-p', '-c', client!.name, '#{pane_id}').trim();
    const id = demoId('live:web-dashboard');
    const agentPane = demoPanes('gw').find((p) => agentOf(p.pid) === 'live web-dashboard')!;
    tmux('send-keys', '-t', 'gw:0', '/');
    await until(() => capture('gw:0').includes('Enter keeps it'), 10_000, 'the filter prompt');
    tmux('send-keys', '-t', 'gw:0', id);
    await until(() => capture('gw:0').includes(`/${id}`), 10_000, 'the filter text');
    tmux('send-keys', '-t', 'gw:0', 'Enter');
    // The filter kept (the status line names it), the agent under the cursor.
    await until(() => capture('gw:0').includes(`filter "${id}"`) && new RegExp(`^> +live\\s+${id}`, 'm').test(capture('gw:0')), 10_000, () => `the agent under the cursor:\n${capture('gw:0')}`);
    tmux('send-keys', '-t', 'gw:0', 'o');
    await until(() => clientPane() === agentPane.id, 10_000, () => `the client on ${agentPane.id}, not ${clientPane()}:\n${capture('gw:0')}`);
    expect(tmux('display', '-p', '-c', client!.name, '#{window_name}').trim()).toBe('gw-demo');
    await until(() => capture('gw:0').includes(`switched to tmux pane ${agentPane.target}`), 10_000, 'the status line');
  }, 60_000);

  it('q ends the demo, closes gw-demo and ends every process of it', async () => {
    const pids = treeOf([demoPid, ...demoPanes('gw').map((p) => p.pid)]);
    expect(pids.size).toBeGreaterThanOrEqual(OPENING.length + 3); // the agents, the demo, the zombie's parent, …
    tmux('send-keys', '-t', 'gw:0', 'q');
    await until(() => windowsNamedGwDemo('gw') === 0, 20_000, () => `gw-demo gone: ${tmux('list-windows', '-a')}`);
    expect(socketFolders()).toEqual([]);
    await until(() => [...pids].every((p) => !alive(p)), 20_000, () => `every process gone: ${[...pids].filter(alive).map(cmdline).join('; ')}`);
  }, 60_000);

  it('an agent no pane has room for runs as the demo’s child, and the demo says so', async () => {
    const demo = startHeadlessIn('tiny', 30, 6);
    await until(() => /cast ready: 8 agents staged/.test(demo.log()), 30_000, () => `the cast ready:\n${demo.log()}`);
    const inPanes = demoPanes('tiny');
    expect(inPanes.length).toBeGreaterThanOrEqual(1);
    expect(inPanes.length).toBeLessThan(OPENING.length);
    const elsewhere = [...demo.log().matchAll(/\[([a-z]+ [a-z-]+)\] runs in the demo's own terminal, not in a pane of its own: no room/g)].map((m) => m[1]);
    expect(elsewhere.length).toBe(OPENING.length - inPanes.length);
    for (const agent of elsewhere) {
      const pid = Number(new RegExp(`\\[${agent}\\] started, pid (\\d+)\n`).exec(demo.log())?.[1]);
      expect(parentOf(pid), `${agent}, pid ${pid}`).toBe(demo.pid);
    }
    const pids = treeOf([demo.pid, ...inPanes.map((p) => p.pid)]);
    process.kill(demo.pid, 'SIGTERM');
    await until(() => [...pids].every((p) => !alive(p)), 20_000, () => `every process gone: ${[...pids].filter(alive).map(cmdline).join('; ')}`);
    await until(() => windowsNamedGwDemo('tiny') === 0, 20_000, 'gw-demo gone');
  }, 90_000);

  it('a pending agent that resolved leaves its pane, and the next one gets a pane of its own', async () => {
    // The demo's own timings reach the agents in panes: pending agents resolve after 1.5 s.
    const demo = startHeadlessIn('cycle', 160, 40, ['GHOSTWATCH_DEMO_RESOLVE_AFTER_MS=1500']);
    const retired = await until(() => /\[pending docs-site\] pid (\d+) ended its session and exited/.exec(demo.log()) ?? undefined, 30_000, () => `a pending agent retired:\n${demo.log()}`);
    const gone = Number(retired[1]);
    expect(demo.log()).toMatch(new RegExp(`\\[pending docs-site\\] started, pid ${gone}, in tmux pane %\\d+`));
    await until(() => !demoPanes('cycle').some((p) => p.pid === gone), 10_000, 'its pane closed');
    const pending = demoPanes('cycle').filter((p) => agentOf(p.pid) === 'pending docs-site');
    expect(pending.length).toBeGreaterThanOrEqual(1);
    const pids = treeOf([demo.pid, ...demoPanes('cycle').map((p) => p.pid)]);
    process.kill(demo.pid, 'SIGTERM');
    await until(() => [...pids].every((p) => !alive(p)) && windowsNamedGwDemo('cycle') === 0, 20_000, () => `every process and the window gone: ${[...pids].filter(alive).map(cmdline).join('; ')}; ${tmux('list-windows', '-a')}\n${demo.log()}`);
  }, 90_000);

  it('SIGKILL of the demo also ends every agent and closes the window', async () => {
    const pid = startDemoIn('gw2');
    const panes = await until(() => demoPanes('gw2').length >= OPENING.length && demoPanes('gw2'), 30_000, 'the second demo’s window');
    // Every agent up (connected: it reported), the supervisor's children among them.
    await until(() => panes.every((p) => /: staged$/m.test(printed(p.id))), 30_000, 'every agent staged');
    const pids = treeOf([pid, ...panes.map((p) => p.pid)]);
    process.kill(pid, 'SIGKILL');
    await until(() => [...pids].every((p) => !alive(p)), 20_000, () => `every process gone: ${[...pids].filter(alive).map(cmdline).join('; ')}`);
    await until(() => windowsNamedGwDemo('gw2') === 0, 20_000, 'gw-demo gone');
    // Each agent's socket folder went once it connected: nothing is left in the temp folder.
    expect(socketFolders()).toEqual([]);
  }, 90_000);
});

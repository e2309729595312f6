// The demo's tmux window (src/demo/demo-window.ts) on a real, private tmux server: opened in the
// background, one pane per command (the pane's process is the command), tiled; a pane whose
// process ends goes even when a person set remain-on-exit on; no room says so and opens no second
// window; a window that was closed is opened anew; a word ending in ';' reaches the command whole.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DemoWindow, type PaneOpening } from '../../src/demo/demo-window.js';
import { until } from '../support/wait.js';
import { HAS_TMUX, tmuxOn, tuiEnv } from '../support/tmux.js';

let servers = 0;
let socket = '';
const dir = mkdtempSync(join(tmpdir(), 'gw-demo-window-'));

function server(columns: number, rows: number): { tmux: (...args: string[]) => string; window: DemoWindow } {
  socket = `gw-dw-${process.pid}-${++servers}`;
  const env = tuiEnv({});
  delete env.TMUX;
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'main', '-n', 'shell', '-x', String(columns), '-y', String(rows), 'sh'], { env });
  return { tmux: tmuxOn(socket).run, window: new DemoWindow({ env, serverArgs: ['-L', socket] }) };
}

afterEach(() => {
  try {
    execFileSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
  } catch {
    // gone already
  }
});

const SLEEP = ['sleep', '600'];
const windows = (tmux: (...args: string[]) => string): string[] => tmux('list-windows', '-F', '#{window_name}').trim().split('\n');
const pid = (opening: PaneOpening): number => ('pid' in opening ? opening.pid : Number.NaN);

describe.runIf(HAS_TMUX)('the demo’s tmux window', () => {
  it('opens gw-demo in the background, one pane per command, whose process is that command', async () => {
    const { tmux, window } = server(120, 40);
    const first = await window.open(SLEEP);
    const second = await window.open(SLEEP);
    expect(first).toMatchObject({ windowId: expect.stringMatching(/^@\d+$/), paneId: expect.stringMatching(/^%\d+$/) });
    expect(windows(tmux)).toEqual(['shell', 'gw-demo']);
    expect(tmux('display', '-p', '-t', 'main:', '#{window_name}').trim()).toBe('shell'); // still the one shown
    const panes = tmux('list-panes', '-t', 'main:gw-demo', '-F', '#{pane_pid}').trim().split('\n').map(Number);
    expect(panes).toEqual([pid(first), pid(second)]);
    expect(readFileSync(`/proc/${pid(second)}/cmdline`, 'utf8')).toBe('sleep\u0000600\u0000');
    expect(tmux('show-options', '-w', '-v', '-t', 'main:gw-demo', 'pane-border-format').replace(/\n$/, '')).toBe(' #{pane_title} ');
    await window.close();
    expect(windows(tmux)).toEqual(['shell']);
  });

  it('lets a pane go when its process ends, even with remain-on-exit on globally', async () => {
    const { tmux, window } = server(120, 40);
    tmux('set-option', '-g', 'remain-on-exit', 'on');
    await window.open(SLEEP);
    const short = await window.open(['sleep', '0.2']);
    await until(() => !tmux('list-panes', '-t', 'main:gw-demo', '-F', '#{pane_id}').includes('paneId' in short ? short.paneId : '?'), 10_000, 'the ended pane gone');
  });

  it('says there is no room when no pane can be split, and opens no second window', async () => {
    const { tmux, window } = server(24, 5);
    const openings: PaneOpening[] = [];
    for (let i = 0; i < 12; i++) openings.push(await window.open(SLEEP));
    const opened = openings.filter((o) => 'pid' in o).length;
    expect(opened).toBeGreaterThanOrEqual(1);
    expect(opened).toBeLessThan(12);
    expect(openings.find((o) => 'noRoom' in o)).toMatchObject({ noRoom: expect.stringMatching(/split-window/) });
    expect(windows(tmux).filter((n) => n === 'gw-demo')).toHaveLength(1);
    expect(Number(tmux('display', '-p', '-t', 'main:gw-demo', '#{window_panes}').trim())).toBe(opened);
  });

  it('opens a new window once the old one was closed', async () => {
    const { tmux, window } = server(120, 40);
    const first = await window.open(SLEEP);
    tmux('kill-window', '-t', 'main:gw-demo');
    const next = await window.open(SLEEP);
    expect('windowId' in next && 'windowId' in first && next.windowId !== first.windowId).toBe(true);
    expect(windows(tmux)).toEqual(['shell', 'gw-demo']);
  });

  it('hands a word ending in ";" to the command whole, not to tmux as a separator', async () => {
    const { window } = server(120, 40);
    const out = join(dir, 'argv.txt');
    await window.open(['sh', '-c', 'printf %s "$1" > "$2"; sleep 600', 'sh', 'kill-server;', out]);
    await until(() => {
      try {
        return readFileSync(out, 'utf8') === 'kill-server;';
      } catch {
        return false;
      }
    }, 10_000, 'the argument written');
  });

  it('refuses a one-word command (tmux would run it with sh -c)', async () => {
    const { tmux, window } = server(120, 40);
    expect(await window.open(['sleep 600'])).toEqual({ error: expect.stringMatching(/two words/) });
    expect(windows(tmux)).toEqual(['shell']);
  });
});

process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

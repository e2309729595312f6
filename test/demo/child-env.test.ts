// The demo's processes never get the user's registry credentials: its registry asks for no token,
// so no agent, worker or helper process may hold HYPI_TOKEN (or HYPIVISOR_WS, which can carry
// ?token=) in its environment, nor any token in its argv. Checked on the real demo, by reading
// /proc/<pid>/environ and /proc/<pid>/cmdline of every process it started.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../../src/demo/child-env.js';
import { describeOn } from '../support/platform.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/ghostwatch.js');
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
const TOKEN = 'tok-3f9a1c-secret';
const WS_TOKEN = 'tok-77e2b0-in-url';

/** Every live descendant of `root` (not root itself), from the parent links in /proc. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(name), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number): void => {
    for (const [child, ppid] of parent) if (ppid === pid) (out.push(child), walk(child));
  };
  walk(root);
  return out;
}

describe('childEnv', () => {
  it('leaves out HYPI_TOKEN and HYPIVISOR_WS, keeps the rest, adds the extras', () => {
    const env = childEnv({ PATH: '/bin', HYPI_TOKEN: 't', HYPIVISOR_WS: 'ws://h/ws?token=t', LANG: 'C' }, { X: '1', HYPI_TOKEN: 'again' });
    expect(env).toEqual({ PATH: '/bin', LANG: 'C', X: '1' });
  });
});

describeOn(['linux'], 'every process is read through /proc/<pid>/environ', built)('the demo cast', () => {
  it('holds no token in any process it started: not in the environment, not in argv', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HYPI_TOKEN: TOKEN, HYPIVISOR_WS: `ws://127.0.0.1:9/ws?token=${WS_TOKEN}` };
    delete env.CI;
    delete env.TMUX; // the demo's children, as outside tmux (demo-tmux.test.ts checks its panes)
    const demo = spawn(process.execPath, [BIN, 'demo', '--headless', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => demo.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the cast was not ready within 15 s')), 15_000);
        createInterface({ input: demo.stderr! }).on('line', (line) => {
          if (/cast ready/.test(line)) (clearTimeout(timer), resolve());
        });
        demo.once('exit', () => reject(new Error('the demo exited early')));
      });
      const pids = descendants(demo.pid!);
      // 8 agents and their workers, zombie parents, sleeps.
      expect(pids.length).toBeGreaterThanOrEqual(8);
      const leaks: string[] = [];
      let read = 0;
      for (const pid of pids) {
        for (const file of ['environ', 'cmdline']) {
          let text: string;
          try {
            text = readFileSync(`/proc/${pid}/${file}`, 'latin1');
          } catch {
            continue; // exited meanwhile
          }
          read++;
          if (text.includes(TOKEN) || text.includes(WS_TOKEN) || /(^|\0)HYPI_TOKEN=/.test(text)) leaks.push(`${pid} ${file}: ${text.split('\0')[0]}`);
        }
      }
      expect(read).toBeGreaterThan(0);
      expect(leaks).toEqual([]);
    } finally {
      demo.kill('SIGTERM');
      await exited;
    }
  }, 40_000);
});

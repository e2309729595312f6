// A dead agent's leftovers in the real App: the LEFT column ("2 :3000"), the departed row of an
// agent gone from its registry, the detail view's list, and K: a dialog that names each process
// (pid, command, ports, user), y ends them, No is the default, --read-only explains instead.
import { render } from 'ink-testing-library';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { Leftover } from '../../src/core/leftovers.js';
import { withMarks } from '../../src/engine/snapshot.js';
import { App } from '../../src/ui/app.js';
import { detailLines } from '../../src/ui/detail.js';
import { leftoverConfirmLines } from '../../src/ui/leftover-dialog.js';
import { demoFindings, demoLeftovers, FIXED_NOW, leftoverEngine, leftoverSnapshot, StaticEngine } from '../support/ui-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
});

async function app(engine: StaticEngine, opts: { readOnly?: boolean; columns?: number; rows?: number } = {}) {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={{ columns: opts.columns ?? 120, rows: opts.rows ?? 30 }} readOnly={opts.readOnly} killGraceMs={5_000} onQuit={() => {}} />);
  unmounts.push(() => r.unmount());
  await sleep(30);
  const send = async (chunk: string) => {
    r.stdin.write(chunk);
    await sleep(40);
  };
  const frame = () => stripVTControlCharacters(r.lastFrame() ?? '');
  return { r, send, frame };
}

describe('the table', () => {
  it('a LEFT column while some row has leftovers: how many and the first port; none without', async () => {
    const a = await app(leftoverEngine());
    expect(a.frame()).toMatch(/^ {2}VERDICT.* PID +LEFT /m);
    expect(a.frame()).toMatch(/c0ffee00-ghost +40777 +2 :3000 /);
    expect(a.frame()).toMatch(/5e5e5e5e-swept +40900 +1 :9222 /);
    const none = await app(new StaticEngine());
    expect(none.frame()).not.toContain('LEFT');
  });

  it('an agent gone from its registry is a row of its own: a ghost that is no problem, "gone" in STATUS', async () => {
    const a = await app(leftoverEngine());
    const row = a.frame().split('\n').find((l) => l.includes('5e5e5e5e-swept'))!;
    expect(row).toContain('ghost');
    expect(row).not.toContain('!ghost');
    expect(row).toContain('gone');
  });

  it('d on a departed row evicts nothing and says K ends what it left', async () => {
    const engine = leftoverEngine();
    const a = await app(engine);
    await a.send('/');
    await a.send('swept');
    await a.send('\r');
    await a.send('d');
    expect(a.frame()).toContain('nothing to evict: no longer in its registry (K ends what it left running)');
    expect(engine.evictions).toEqual([]);
  });
});

describe('the footer', () => {
  const footer = (frame: string) => frame.split('\n').at(-1)!;

  it('offers K first on a row with leftovers, at 80 columns too, and not on a row without', async () => {
    const a = await app(leftoverEngine(), { columns: 80, rows: 24 });
    expect(footer(a.frame())).toMatch(/^ K  end leftovers d  evict /);
    await a.send('/');
    await a.send('live-agent');
    await a.send('\r');
    expect(a.frame()).toMatch(/^> .*7f3a9c1e-liv/m);
    expect(footer(a.frame())).not.toContain('K ');
    expect(footer(a.frame())).not.toContain('leftovers');
  });

  it('in --read-only it says K is read-only, as d', async () => {
    const a = await app(leftoverEngine(), { readOnly: true, columns: 120 });
    expect(footer(a.frame())).toMatch(/^ K  end leftovers \(read-only\)/);
  });
});

describe('K', () => {
  it('asks first, naming each process: pid, command, ports, user, whose it was; n cancels and nothing is signalled', async () => {
    const engine = leftoverEngine();
    const a = await app(engine);
    await a.send('K');
    const f = a.frame();
    expect(f).toContain('End these 2 processes that a dead agent left running?');
    expect(f).toContain('Each gets SIGTERM; one still running 5s later gets SIGKILL.');
    expect(f).toMatch(/pid 40790 node \/home\/ana\/work\/hyper-pi\/node_modules\/\.bin\/vite --port 3000 +listens on :3000 :24678 +user ana +left by\s+c0ffee00-ghost \(pid 40777\)/);
    expect(f).toMatch(/pid 40791 node --test --watch test\/ +user ana +left by c0ffee00-ghost/);
    expect(f).toContain('y: end them.  n: cancel.');
    await a.send('n');
    expect(a.frame()).toContain('cancelled: no process signalled');
    expect(engine.endings).toEqual([]);
  });

  it('y ends them: the engine gets exactly the processes listed; the outcome is said in one line', async () => {
    const engine = leftoverEngine();
    const a = await app(engine);
    await a.send('K');
    await a.send('y');
    await expect.poll(() => a.frame()).toContain('ended 2 leftovers');
    expect(engine.endings).toHaveLength(1);
    expect(engine.endings[0]!.selection.map((t) => [t.leftover.pid, t.agent.id])).toEqual([
      [40790, 'c0ffee00-ghost'],
      [40791, 'c0ffee00-ghost'],
    ]);
  });

  it('in the detail view it ends that row\'s leftovers; the detail view lists them, each with what it is now', async () => {
    const engine = leftoverEngine();
    const a = await app(engine);
    await a.send('\r');
    const f = a.frame();
    expect(f).toContain('left running');
    expect(f).toContain('2 processes its dead agent started; K ends them (asks first)');
    expect(f).toMatch(/pid 40790 +node \/home\/ana\/work\/hyper-pi\/node_modules\/\.bin\/vite --port 3000/);
    expect(f).toMatch(/up 4h50m, CPU 0\.3%, RSS 85 MB, listens on :3000 :24678, user ana/);
    expect(f).toMatch(/up 4h49m, CPU 98\.7%, RSS 41 MB, user ana/);
    await a.send('K');
    await a.send('y');
    await expect.poll(() => engine.endings.length).toBe(1);
  });

  it('in --read-only it explains itself and opens nothing', async () => {
    const engine = leftoverEngine();
    const a = await app(engine, { readOnly: true });
    await a.send('K');
    expect(a.frame()).toContain('read-only: no process is signalled (started with --read-only)');
    expect(a.frame()).not.toContain('End these');
  });

  it('on a row with none, it says so', async () => {
    const a = await app(new StaticEngine());
    await a.send('K');
    expect(a.frame()).toContain('nothing to end: this row has no leftovers');
  });

  it('a hostile command line is inert in the dialog and the detail view', async () => {
    const evil: Leftover = { ...demoLeftovers()[0]!, cmd: 'node \u001b[2J\u001b]0;pwned\u0007 \u202Eevil' };
    const findings = demoFindings().map((f) => (f.id === 'c0ffee00-ghost' ? withMarks(f, { leftovers: [evil] }) : f));
    const a = await app(new StaticEngine(findings, leftoverSnapshot({ departed: false }).fields));
    await a.send('K');
    const raw = a.r.lastFrame() ?? '';
    expect(raw).not.toMatch(/\u001b\[2J|\u001b\]0;|\u0007|\u202E/);
    expect(a.frame()).toContain('node ^[[2J^[]0;pwned^G');
    const lines = detailLines(findings.find((f) => f.id === 'c0ffee00-ghost')!, FIXED_NOW).map((l) => `${l.label} ${l.value}`).join('\n');
    expect(lines).not.toMatch(/\u001b|\u0007|\u202E/);
  });
});

describe('the dialog when ghostwatch runs as root and a process is another user\'s', () => {
  it('says so in bold, by name, and marks the process', () => {
    const [mine, theirs] = [demoLeftovers()[0]!, { ...demoLeftovers()[1]!, uid: 65534, user: 'nobody', otherUser: true }];
    const agent = { source: 'hypivisor', id: 'c0ffee00-ghost', pid: 40777 };
    const { head, list } = leftoverConfirmLines([{ leftover: mine, agent }, { leftover: theirs, agent }], 2_000, false);
    expect(head).toContainEqual({ text: 'ghostwatch runs as root: one of them belongs to another user (nobody) and will be signalled too.', bold: true, tone: 'warning' });
    expect(head[1]!.text).toContain('2s later gets SIGKILL');
    expect(list[1]).toMatchObject({ text: expect.stringContaining('user nobody (another user)'), tone: 'warning' });
    expect(leftoverConfirmLines([{ leftover: mine, agent }], 2_000, false).head.some((l) => l.text.includes('root'))).toBe(false);
  });
});

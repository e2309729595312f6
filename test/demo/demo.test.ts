// `ghostwatch demo`, for real: the built CLI in headless mode starts its registry and its cast of
// real processes; a real engine connected to it must see every verdict; and every way of ending
// it (SIGTERM, SIGHUP, SIGINT, even SIGKILL) must leave no process of the demo behind.
// Needs a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/core/types.js';
import { createEngine } from '../../src/engine/index.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { startDemo as startDemoProcess, type Demo } from '../support/demo-process.js';
import { BIN, BUILT as built } from '../support/tmux.js';

if (!built) console.warn('test/demo: skipped: dist/src/cli/main.js is missing; run `npm run build` first');

// As a person would run it: not in CI mode; and outside tmux (demo-tmux.test.ts runs it inside).
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_') && k !== 'TMUX' && k !== 'TMUX_PANE'));

const EVERY_VERDICT: readonly Verdict[] = ['live', 'ghost', 'zombie', 'reused', 'superseded', 'pending', 'offline', 'remote', 'held', 'stale-claim'];
/** The kernel reaps at once; an orphaned zombie waits for init, which some containers run slowly. */
const REAP_WAIT_MS = 4_000;

const running: Demo[] = [];
afterEach(async () => {
  for (const demo of running.splice(0)) {
    if (demo.child.exitCode === null && demo.child.signalCode === null) {
      demo.child.kill('SIGKILL');
      await demo.exit;
    }
  }
});

function startDemo(args: readonly string[] = ['--headless']): Demo {
  const demo = startDemoProcess(args, env);
  running.push(demo);
  return demo;
}

interface ProcRow {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
}

function processTable(): ProcRow[] {
  if (process.platform !== 'linux') {
    return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid='], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s+/).map(Number))
      .map(([pid, ppid, pgid]) => ({ pid: pid!, ppid: ppid!, pgid: pgid! }));
  }
  const rows: ProcRow[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      const [, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.push({ pid: Number(e), ppid: Number(ppid), pgid: Number(pgid) });
    } catch {
      // vanished mid-scan
    }
  }
  return rows;
}

/** Every descendant of `root` (by ppid, recursively), and every member of a group one of them leads. */
function descendantsOf(root: number): Set<number> {
  const table = processTable();
  const found = new Set<number>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of table) {
      if (found.has(row.pid)) continue;
      if (row.ppid === root || found.has(row.ppid) || found.has(row.pgid)) {
        found.add(row.pid);
        grew = true;
      }
    }
  }
  return found;
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function survivors(pids: Iterable<number>, withinMs: number): Promise<number[]> {
  const end = Date.now() + withinMs;
  for (;;) {
    const alive = [...pids].filter((p) => !isGone(p));
    if (alive.length === 0 || Date.now() > end) return alive;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function describeProcess(pid: number): string {
  try {
    return `${pid} ${readFileSync(`/proc/${pid}/stat`, 'utf8').trim().slice(0, 80)}`;
  } catch {
    return String(pid);
  }
}

/** Waits for the staged cast, collects its processes, sends `signal`, and checks nothing survives. */
async function endsEveryProcess(signal: NodeJS.Signals): Promise<void> {
  const demo = startDemo();
  await demo.url;
  await demo.line(/cast ready: 8 agents staged/, 10_000);
  const pids = new Set<number>();
  for (const p of descendantsOf(demo.child.pid)) pids.add(p);
  // The supervisor's zombie and its parent are grandchildren: they must be among them.
  expect(pids.size, `processes of the demo: ${[...pids].join(' ')}`).toBeGreaterThanOrEqual(10);
  demo.child.kill(signal);
  const { code, signal: killedBy } = await demo.exit;
  if (signal === 'SIGKILL') expect(killedBy).toBe('SIGKILL');
  else expect({ code, signal: killedBy }, demo.stderr.join('\n')).toEqual({ code: 0, signal: null });
  const left = await survivors(pids, REAP_WAIT_MS + (signal === 'SIGKILL' ? 3_000 : 0));
  expect(left.map(describeProcess), 'demo processes still alive after the demo exited').toEqual([]);
}

describe.runIf(built)('ghostwatch demo', () => {
  it('stages every verdict with real processes, and SIGTERM leaves none of them behind', async () => {
    const demo = startDemo();
    const url = await demo.url;
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);

    const dir = mkdtempSync(join(tmpdir(), 'gw-demo-'));
    const engine = createEngine({ sources: [new HypivisorSource({ url })], hostName: hostname(), auditLogPath: join(dir, 'audit.jsonl') });
    engine.start();
    const pids = new Set<number>();
    try {
      const end = Date.now() + 8_000;
      let snap = engine.getSnapshot();
      const missing = (): string[] => [
        ...EVERY_VERDICT.filter((v) => snap.counts[v] < 1),
        ...(snap.findings.some((f) => f.verdict === 'live' && f.note === 'resolving') ? [] : ['live (resolving)']),
      ];
      while (missing().length > 0 && Date.now() < end) {
        for (const p of descendantsOf(demo.child.pid)) pids.add(p);
        await new Promise((r) => setTimeout(r, 100));
        snap = engine.getSnapshot();
      }
      expect(missing(), `counts: ${JSON.stringify(snap.counts)}\n${demo.stderr.join('\n')}`).toEqual([]);
      const byVerdict = (v: Verdict): string[] => snap.findings.filter((f) => f.verdict === v).map((f) => f.id);
      expect(byVerdict('pending').every((id) => id.startsWith('pending-'))).toBe(true);
      expect(snap.findings.find((f) => f.verdict === 'remote')?.entry.machine).toBe('build-01.example.internal');
      expect(snap.findings.find((f) => f.verdict === 'stale-claim')?.reason).toMatch(/is ghost/);
    } finally {
      await engine.stop();
      rmSync(dir, { recursive: true, force: true });
    }

    await demo.line(/cast ready/, 5_000);
    for (const p of descendantsOf(demo.child.pid)) pids.add(p);
    demo.child.kill('SIGTERM');
    expect(await demo.exit, demo.stderr.join('\n')).toEqual({ code: 0, signal: null });
    expect(demo.stderr.some((l) => /SIGTERM: ending the cast/.test(l))).toBe(true);
    const left = await survivors(pids, REAP_WAIT_MS);
    expect(left.map(describeProcess), 'demo processes still alive after the demo exited').toEqual([]);
  });

  it('ends every demo process on SIGHUP', () => endsEveryProcess('SIGHUP'));

  it('ends every demo process on SIGINT', () => endsEveryProcess('SIGINT'));

  it('leaves nothing behind even when the demo itself is SIGKILLed: the agents see their stdin close', () =>
    endsEveryProcess('SIGKILL'));

  it('--help exits 0 and shows examples', () => {
    const out = execFileSync(process.execPath, [BIN, 'demo', '--help'], { env, encoding: 'utf8' });
    expect(out).toMatch(/^ghostwatch demo/);
    expect(out).toMatch(/--headless/);
    expect(out).toMatch(/Examples:\n {2}ghostwatch demo/);
  });
});

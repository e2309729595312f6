// The processes an agent started, from /proc, with real processes: a child forked from a worker
// thread is found (each thread has its own children list), zombies are not descendants, a root that
// is another process by the time its tree is read gets none, a signal goes only to the same
// process, the ports a process listens on are its own; the memory file is used only when it is ours.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leftoverMemoryFile } from '../../src/os/leftover-memory.js';
import { ancestorsOf, checkSame, listeningPortsOf, ProcessIndex, readProcess, signalIfSame, walkDescendants, type TreeProcess } from '../../src/os/process-tree.js';
import { OTHER_UID, ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';
import { describeOn } from '../support/platform.js';
import { alive, killAndReap, sleeper, zombie } from '../support/processes.js';
import { until } from '../support/wait.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-tree-'));
  chmodSync(dir, 0o755); // a planting as another user goes through it
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const startOf = (pid: number): number => readProcess(pid)!.startTicks!;

describeOn(['linux'], 'the tree and the processes are read from Linux /proc')('an agent\'s descendants', () => {
  it('finds a child forked from a worker thread (its parent is the process; the main thread\'s children list does not name it), and a grandchild', async () => {
    // The worker spawns sh, which starts sleep: sh is the worker thread's child, sleep sh's.
    const code = `
      const { Worker } = require('node:worker_threads');
      new Worker("const c = require('node:child_process').spawn('sh', ['-c', 'sleep 300 & wait'], { stdio: 'ignore' }); require('node:worker_threads').parentPort.postMessage(c.pid); setInterval(() => {}, 1e6);", { eval: true })
        .on('message', (pid) => console.log(pid));
      setInterval(() => {}, 1e6);`;
    const agent = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const sh = Number(await new Promise<string>((r) => createInterface({ input: agent.stdout! }).once('line', r)));
      const walk = await until(async () => {
        const w = await walkDescendants(new Map([[agent.pid!, startOf(agent.pid!)]]));
        return w.ok && (w.trees.get(agent.pid!)?.length ?? 0) >= 2 ? w : undefined;
      }, 5_000, 'sh and its sleep');
      const found = walk.ok ? walk.trees.get(agent.pid!)! : [];
      const shown = found.find((p) => p.pid === sh)!;
      expect(shown).toMatchObject({ ppid: agent.pid, name: 'sh', startTicks: startOf(sh) });
      expect(found.find((p) => p.ppid === sh)).toMatchObject({ name: 'sleep' });
      // Not in the main thread's own list: only the worker's.
      const { readFileSync } = await import('node:fs');
      expect(readFileSync(`/proc/${agent.pid}/task/${agent.pid}/children`, 'utf8').split(' ')).not.toContain(String(sh));
      for (const p of found) process.kill(p.pid, 'SIGKILL');
    } finally {
      await killAndReap(agent);
    }
  }, 20_000);

  it('a process reparented since it was first seen (its parent ended) is found under its new parent, a subreaper, by the same index', async () => {
    // python3 as a subreaper (prctl PR_SET_CHILD_SUBREAPER = 36) starts sh, which starts sleep and waits.
    const reaper = [
      'import ctypes, os, subprocess, time',
      'assert ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0',
      "sh = subprocess.Popen(['sh', '-c', 'sleep 300 & echo $!; wait'], stdout=subprocess.PIPE, text=True)",
      'print(sh.pid, sh.stdout.readline().strip(), flush=True)',
      'while True:',
      '    try: os.wait()',
      '    except ChildProcessError: time.sleep(0.05)',
    ].join('\n');
    const subreaper = spawn('python3', ['-c', reaper], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [sh, sleep] = (await new Promise<string>((r) => createInterface({ input: subreaper.stdout! }).once('line', r))).split(' ').map(Number) as [number, number];
    try {
      const index = new ProcessIndex();
      const roots = new Map([[subreaper.pid!, startOf(subreaper.pid!)]]);
      const sleepIn = async (): Promise<TreeProcess | undefined> => {
        const w = await walkDescendants(roots, { index });
        return w.ok ? w.trees.get(subreaper.pid!)?.find((p) => p.pid === sleep) : undefined;
      };
      // (Its name is whatever the first walk saw: sh's, when that was between the fork and the exec of sleep.)
      expect(await until(sleepIn, 5_000, 'sleep under sh')).toMatchObject({ ppid: sh });
      process.kill(sh, 'SIGKILL');
      await until(() => !alive(sh), 5_000, 'sh reaped by the subreaper');
      // The index knew sleep under sh: the walk after sh ended finds it under the subreaper.
      expect(await until(async () => ((await sleepIn())?.ppid === subreaper.pid ? sleepIn() : undefined), 5_000, 'sleep under the subreaper')).toMatchObject({ ppid: subreaper.pid, startTicks: startOf(sleep) });
    } finally {
      try {
        process.kill(sleep, 'SIGKILL');
      } catch {
        // gone already
      }
      await killAndReap(subreaper);
    }
  }, 20_000);

  it('leaves zombies out; a root that is another process now (its start is not the one given) gets no tree', async () => {
    const z = await zombie();
    const walk = await walkDescendants(new Map([[z.parent.pid!, startOf(z.parent.pid!)]]));
    expect(walk.ok && walk.trees.get(z.parent.pid!)).toEqual([]);
    const parent = spawn('sh', ['-c', 'sleep 300 & wait'], { stdio: 'ignore' });
    try {
      await until(async () => {
        const w = await walkDescendants(new Map([[parent.pid!, startOf(parent.pid!)]]));
        return w.ok && w.trees.get(parent.pid!)?.length === 1;
      }, 5_000, 'its sleep');
      const wrong = await walkDescendants(new Map([[parent.pid!, startOf(parent.pid!) + 1]]));
      expect(wrong.ok && wrong.trees.has(parent.pid!)).toBe(false);
    } finally {
      const w = await walkDescendants(new Map([[parent.pid!, startOf(parent.pid!)]]));
      if (w.ok) for (const p of w.trees.get(parent.pid!) ?? []) process.kill(p.pid, 'SIGKILL');
      await killAndReap(parent);
    }
  });

  it('reads a process as it is now: owner, command line, RSS, CPU time; a gone pid is null; its parents up to init', async () => {
    const s = sleeper();
    // Read once it has exec'd sleep and sleeps (before, it is a copy of this process).
    const p = await until(() => {
      const now = readProcess(s.pid);
      return now?.cmd === 'sleep 30' && now.state === 'S' ? now : undefined;
    }, 5_000, 'sleep asleep');
    expect(p).toMatchObject({ pid: s.pid, ppid: process.pid, name: 'sleep', uid: process.getuid!() });
    expect(p.rssBytes).toBeGreaterThan(0);
    expect(p.cpuMs).toBeGreaterThanOrEqual(0);
    expect(ancestorsOf(s.pid)[0]).toBe(process.pid);
    expect(ancestorsOf(s.pid).at(-1)).toBe(1);
    await killAndReap(s);
    expect(readProcess(s.pid)).toBeNull();
  });

  it('the ports a process listens on are its own, IPv4 and IPv6', async () => {
    const server = createServer();
    const server6 = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => server6.listen(0, '::1', r));
    try {
      const ports = await listeningPortsOf([process.pid, sleeper().pid]);
      expect(ports.get(process.pid)).toEqual(expect.arrayContaining([(server.address() as AddressInfo).port, (server6.address() as AddressInfo).port]));
      expect([...ports.values()][1]).toEqual([]);
    } finally {
      server.close();
      server6.close();
    }
  });

  it('a signal goes only to the same process: never pid 1, never without a start, not to another process on the pid; a zombie is gone', async () => {
    expect(signalIfSame({ pid: 1, startTicks: 1 }, 'SIGTERM')).toMatchObject({ sent: false, why: 'error' });
    const s = sleeper();
    expect(signalIfSame({ pid: s.pid }, 'SIGTERM')).toMatchObject({ sent: false, detail: expect.stringContaining('no exact start') });
    expect(signalIfSame({ pid: s.pid, startTicks: startOf(s.pid) + 1 }, 'SIGTERM')).toMatchObject({ sent: false, why: 'changed', detail: expect.stringMatching(/is now another process \(sleep, started at tick \d+/) });
    expect(alive(s.pid)).toBe(true);
    expect(checkSame({ pid: s.pid, startTicks: startOf(s.pid) })).toEqual({ same: true });
    const exited = once(s, 'exit');
    expect(signalIfSame({ pid: s.pid, startTicks: startOf(s.pid) }, 'SIGTERM')).toEqual({ sent: true });
    expect((await exited)[1]).toBe('SIGTERM');
    const z = await zombie();
    expect(checkSame({ pid: z.pid, startTicks: 0 })).toMatchObject({ same: false, why: 'gone' });
  });
});

describeOn(['linux'], 'the boot id is Linux\'s')('the memory of what agents started (descendants.json)', () => {
  const agents = [{ agent: { pid: 4242, startTicks: 100 }, refs: [{ source: 'claude', id: 's1' }], descendants: [{ pid: 4243, startTicks: 101, ppid: 4242, name: 'node' }] }];

  it('is written and read back by the same boot; another boot\'s is over; a file that is not ours is not used, with one line', () => {
    const store = leftoverMemoryFile(join(dir, 'state', 'descendants.json'), 'boot-a');
    expect(store.save(agents)).toBeUndefined();
    expect(store.load()).toEqual({ agents });
    expect(leftoverMemoryFile(join(dir, 'state', 'descendants.json'), 'boot-b').load()).toEqual({ agents: [] });
    writeFileSync(join(dir, 'state', 'descendants.json'), '{"version": 1, "boot": "boot-a", "agents": [{"agent": {"pid": 1, "startTicks": 1}, "refs": [], "descendants": []}, {"agent": {"pid": 7, "startTicks": 3}, "refs": [], "descendants": [{"pid": "x"}]}]}');
    expect(store.load()).toEqual({ agents: [{ agent: { pid: 7, startTicks: 3, startedAt: undefined }, refs: [], descendants: [] }] });
    writeFileSync(join(dir, 'state', 'descendants.json'), 'not json');
    expect(store.load().warning).toMatch(/was not used: not valid JSON/);
  });

  const planting = plantingRequirement();
  it.runIf(planting === undefined).each(PLANTINGS)('a memory file $how is not used', ({ plant, why }) => {
    const folder = join(dir, `planted-${Math.random().toString(36).slice(2)}`);
    const path = plant(folder, 'descendants.json', JSON.stringify({ version: 1, boot: 'boot-a', agents }));
    const loaded = leftoverMemoryFile(path, 'boot-a').load();
    expect(loaded.agents).toEqual([]);
    expect(loaded.warning).toMatch(why);
    expect(OTHER_UID).toBe(65534);
    expect(leftoverMemoryFile(ownFile(join(folder, 'ours'), 'descendants.json', JSON.stringify({ version: 1, boot: 'boot-a', agents })), 'boot-a').load().agents).toEqual(agents);
  });
});

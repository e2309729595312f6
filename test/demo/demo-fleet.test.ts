// `ghostwatch demo --fleet`, for real: the built CLI refuses without root (one line, exit 2,
// nothing started); as root it starts three fake hosts (own hostname, pids, sshd on loopback),
// whose agents register under each host's name with the host's own pids; the check command it
// prints reaches every host with the system ssh in batch mode; and SIGTERM, or even SIGKILL of
// the demo, leaves no process of it and no host behind. Needs a built dist/ (CI builds first).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemo as startDemoProcess, type Demo } from '../support/demo-process.js';
import { FAKE_HOST_REQUIREMENT } from '../support/fake-host.js';
import { describeOn } from '../support/platform.js';
import { inCi } from '../support/summary-reporter.js';
import { BIN, BUILT as built } from '../support/tmux.js';

const HOSTS = ['build-41', 'build-42', 'gpu-7'] as const;
/** The kernel empties a PID namespace at once; a host whose demo was SIGKILLed waits for its pid 1 to read EOF. */
const GONE_WAIT_MS = 5_000;

// As a person would run it: not in CI mode; and outside tmux (demo-tmux.test.ts runs it inside).
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'CI' && !k.startsWith('CI_') && k !== 'TMUX' && k !== 'TMUX_PANE'));

const describeLinux = describeOn(['linux'], 'namespaces (unshare, nsenter) are Linux only', built && (FAKE_HOST_REQUIREMENT === undefined || inCi()));

const running: Demo[] = [];
afterEach(async () => {
  for (const demo of running.splice(0)) {
    if (demo.child.exitCode === null && demo.child.signalCode === null) {
      demo.child.kill('SIGTERM');
      await demo.exit;
    }
  }
});

function startDemo(args: readonly string[]): Demo {
  const demo = startDemoProcess(args, env);
  running.push(demo);
  return demo;
}

function nsLink(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number);
}

/** Every descendant of `root`, by ppid. */
function descendantsOf(root: number): number[] {
  const parent = new Map<number, number>();
  for (const pid of allPids()) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone mid-scan
    }
  }
  const found = new Set<number>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parent) {
      if (!found.has(pid) && (ppid === root || found.has(ppid))) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return [...found];
}

function describeProcess(pid: number): string {
  try {
    return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 100)}`;
  } catch {
    return String(pid);
  }
}

/** The state letter of a process, or undefined once it is gone (it can go between two reads). */
function statState(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
  } catch {
    return undefined;
  }
}

async function gone(pids: readonly number[], namespaces: readonly string[], withinMs: number): Promise<{ processes: string[]; inHosts: number }> {
  const end = Date.now() + withinMs;
  for (;;) {
    const processes = pids.filter((p) => { const s = statState(p); return s !== undefined && s !== 'Z'; });
    const inHosts = allPids().filter((p) => namespaces.includes(nsLink(p) ?? '')).length;
    if ((processes.length === 0 && inHosts === 0) || Date.now() > end) return { processes: processes.map(describeProcess), inHosts };
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Finding {
  readonly id: string;
  readonly entry: { readonly machine?: string; readonly pid?: number };
}

/** Starts the fleet demo headless; resolves once it is ready, with what a test needs of it. */
async function readyFleet(): Promise<{ demo: Demo; url: string; pathDir: string; namespaces: string[]; pids: number[]; dirs: string[] }> {
  const demo = startDemo(['--headless', '--fleet']);
  const url = await demo.url;
  await demo.line(/fleet ready: build-41, build-42, gpu-7/, 30_000);
  await demo.line(/cast ready/, 15_000);
  const hint = await demo.line(/fleet: verify the hosts with: PATH=/, 1_000);
  const pathDir = /PATH=([^:]+):\$PATH/.exec(hint)![1]!;
  // "[host NAME] started, pid N in the host (M here)": M is in the host's PID namespace.
  const dirs = HOSTS.map((h) => /fleet host \S+: sshd on 127\.0\.0\.1 port \d+, files in (\S+)/.exec(demo.stderr.find((l) => l.includes(`fleet host ${h}:`)) ?? '')?.[1] ?? '');
  expect(dirs.every((d) => d !== '' && existsSync(d)), demo.stderr.join('\n')).toBe(true);
  const namespaces = HOSTS.map((h) => {
    const m = new RegExp(`\\[host ${h}\\] started, pid \\d+ in the host \\((\\d+) here\\)`).exec(demo.stderr.join('\n'));
    return nsLink(Number(m?.[1]))!;
  });
  expect(namespaces.every((ns) => ns !== undefined && ns !== nsLink(process.pid))).toBe(true);
  const pids = [...descendantsOf(demo.child.pid), ...allPids().filter((p) => namespaces.includes(nsLink(p) ?? ''))];
  return { demo, url, pathDir, namespaces, pids, dirs };
}

describe.runIf(built)('ghostwatch demo --fleet without root', () => {
  it('says in one line what is missing and how to get it, exits 2, starts nothing', () => {
    // As root, the check runs as nobody (uid 65534); as anyone else, as that user.
    const asNobody = process.getuid?.() === 0;
    const cmd = asNobody ? 'setpriv' : process.execPath;
    const args = [...(asNobody ? ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath] : []), BIN, 'demo', '--fleet'];
    const before = new Set(readdirSync('/tmp').filter((e) => e.startsWith('gw-fleet-')));
    const r = spawnSync(cmd, args, { env: { ...env, HOME: '/nonexistent' }, encoding: 'utf8', timeout: 20_000 });
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^ghostwatch demo: --fleet needs root \(unshare --pid --uts --mount, nsenter\): run it as root, e\.g\. with sudo; nothing was started/);
    expect(r.status).toBe(2);
    expect(readdirSync('/tmp').filter((e) => e.startsWith('gw-fleet-') && !before.has(e))).toEqual([]);
  });
});

describeLinux('ghostwatch demo --fleet as root', () => {
  it('starts three hosts whose agents register under each host’s name, reachable by the ssh it prints; SIGTERM leaves nothing', async () => {
    const { demo, url, pathDir, namespaces, pids, dirs } = await readyFleet();

    const r = spawnSync(process.execPath, [BIN, 'check', '--registry', url, '--json'], { env, encoding: 'utf8', timeout: 30_000 });
    const findings = (JSON.parse(r.stdout) as { findings: Finding[] }).findings;
    const sshEnv = { ...env, PATH: `${pathDir}:${env.PATH ?? ''}` };
    for (const [i, host] of HOSTS.entries()) {
      const mine = findings.filter((f) => f.entry.machine === host);
      // live, ghost, pending straggler, zombie: all with the host's own (small) pids.
      expect(mine.length, `${host}: ${JSON.stringify(mine.map((f) => f.id))}`).toBe(4);
      expect(mine.filter((f) => f.id.startsWith('pending-'))).toHaveLength(1);
      // The printed way in: the system ssh, batch mode, no prompt, the host's own name and pids.
      const livePid = Number(/live on \S+: \S+ pid (\d+)/.exec(demo.stderr.find((l) => l.includes(`live on ${host}:`)) ?? '')?.[1]);
      const ghostPid = Number(/ghost on \S+: \S+ pid (\d+)/.exec(demo.stderr.find((l) => l.includes(`ghost on ${host}:`)) ?? '')?.[1]);
      expect(mine.map((f) => f.entry.pid)).toContain(livePid);
      const seen = spawnSync('ssh', ['-T', '-o', 'BatchMode=yes', host, `hostname; readlink /proc/self/ns/pid; kill -0 ${livePid} && echo live; kill -0 ${ghostPid} 2>&1`], {
        env: sshEnv,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 15_000,
      });
      expect(seen.stdout.split('\n').slice(0, 4), seen.stderr).toEqual([host, namespaces[i], 'live', expect.stringMatching(/No such process/)]);
    }

    demo.child.kill('SIGTERM');
    expect(await demo.exit, demo.stderr.join('\n')).toEqual({ code: 0, signal: null });
    expect(await gone(pids, namespaces, GONE_WAIT_MS)).toEqual({ processes: [], inHosts: 0 });
    expect([pathDir, ...dirs].filter((d) => existsSync(d)), 'temp dirs left').toEqual([]);
  }, 90_000);

  it('SIGKILLed, the demo still takes its hosts and their temp dirs with it: their pid 1 sees its stdin close', async () => {
    const { demo, namespaces, pids, dirs, pathDir } = await readyFleet();
    demo.child.kill('SIGKILL');
    expect((await demo.exit).signal).toBe('SIGKILL');
    expect(await gone(pids, namespaces, GONE_WAIT_MS + 3_000)).toEqual({ processes: [], inHosts: 0 });
    // Each host's pid 1 removes the host's temp dir (and the first, the fleet's files) on its way out.
    expect([pathDir, ...dirs].filter((d) => existsSync(d)), 'temp dirs left').toEqual([]);
  }, 90_000);
});

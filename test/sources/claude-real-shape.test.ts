// Claude Code's session records as real Claude Code 2.1.332 writes them (protocols.md §4), for
// real processes: one in a real pid namespace of its own (unshare --pid, as a container does),
// a recycled pid caught by procStart to the tick, one session open in two processes, and what the
// session is doing. Read by the built CLI (`check --json`), as a user runs it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { describeOn } from '../support/platform.js';
import { deadPid, exited, inPidNamespace, pidNamespaceOf, sleeper, tempDir } from '../engine/helpers.js';
import { claudeRecord } from '../support/claude-records.js';

const MACHINE_ID = (() => {
  try {
    return readFileSync('/etc/machine-id', 'utf8').trim();
  } catch {
    return '';
  }
})();

/** Field 22 of /proc/<pid>/stat, as Claude Code records it (a string). */
function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}


/** A record as 2.1.332 writes it: its pid, in the pid namespace `ns` (default: that of the process at `hostPid`). */
function record(fields: { pid: number; sessionId: string; procStart?: string; ns?: string; status?: string | undefined; entrypoint?: string }): string {
  const now = Date.now();
  const body = claudeRecord(
    fields.pid,
    fields.sessionId,
    {
      procStart: fields.procStart,
      version: '2.1.332',
      entrypoint: fields.entrypoint ?? 'cli',
      // A -p run writes no status and no times.
      ...(fields.status !== undefined ? { status: fields.status, updatedAt: now - 5_000, statusUpdatedAt: now - 5_000 } : { status: undefined, updatedAt: undefined, statusUpdatedAt: undefined }),
      pidDomain: fields.ns !== undefined ? `linux:${MACHINE_ID}:pid:[${fields.ns}]` : undefined,
      tmux: 'work:@3.%12',
    },
    now,
  );
  return JSON.stringify(body);
}

function claudeHome(): { home: string; sessions: string; env: NodeJS.ProcessEnv } {
  const home = tempDir();
  const sessions = join(home, '.claude', 'sessions');
  mkdirSync(sessions, { recursive: true });
  const env = { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') };
  return { home, sessions, env };
}

interface Checked {
  findings: { id: string; verdict: string; reason: string; note?: string; status?: string; evictable: boolean; entry: { status?: string }; evidence: Record<string, unknown> }[];
}

async function check(h: ReturnType<typeof claudeHome>): Promise<Checked> {
  const run = await runCli(['check', '--json', '--source', 'claude', '--claude-dir', join(h.home, '.claude'), '--claude-sessions-dir', join(h.home, '.claude-sessions')], h.env);
  expect(run.stderr).not.toMatch(/error/i);
  return JSON.parse(run.stdout) as Checked;
}

const byId = (c: Checked, id: string) => c.findings.find((f) => f.id === id);

const describeRoot = describeOn(['linux'], 'pid namespaces, /proc and unshare are Linux');

describeRoot('Claude Code records as 2.1.332 writes them', () => {
  it('judges a session of another pid namespace by its own process, live and then a ghost, never by our pid 2', async () => {
    expect(process.getuid?.(), 'runs as root (CI does): unshare --pid needs it').toBe(0);
    const h = claudeHome();
    const c = await inPidNamespace();
    expect(pidNamespaceOf(process.pid)).not.toBe(c.ns);
    // Inside its namespace the sleep is pid 2: on this host pid 2 is kthreadd, alive.
    writeFileSync(join(h.sessions, '2.json'), record({ pid: 2, sessionId: 'in-container', procStart: procStart(c.sleepHost), ns: c.ns, status: 'busy' }));
    const live = byId(await check(h), 'in-container')!;
    expect(live.verdict).toBe('live');
    expect(live.reason).toBe(`pid 2 of pid namespace ${c.ns} (host pid ${c.sleepHost}) is alive`);
    expect(live.evidence.pidDomain).toEqual({ domain: `linux:${MACHINE_ID}:pid:[${c.ns}]`, machineId: MACHINE_ID, namespace: c.ns, nsPid: 2, hostPid: c.sleepHost, status: 'mapped' });
    expect(live.evidence.startTicks).toEqual({ recorded: Number(procStart(c.sleepHost)), process: Number(procStart(c.sleepHost)) });
    expect(live.status).toBe('busy');

    // Killing its pid 1 ends the namespace: no process is left in it.
    process.kill(c.shHost, 'SIGKILL');
    await exited(c.unshare);
    const ghost = byId(await check(h), 'in-container')!;
    expect(ghost.reason).toBe(`pid 2 of pid namespace ${c.ns} is gone: no process is left in that namespace`);
    expect(ghost.verdict).toBe('ghost');
    expect(ghost.reason).toBe(`pid 2 of pid namespace ${c.ns} is gone: no process is left in that namespace`);
    expect(ghost.evidence.pidDomain).toMatchObject({ status: 'namespace-gone', nsPid: 2 });
    expect(ghost.evidence.kill).toBeUndefined();
  });

  it('catches a recycled pid by its exact start (procStart), with no slack', async () => {
    const h = claudeHome();
    const s = sleeper(60);
    const ticks = Number(procStart(s.pid));
    const ownNs = pidNamespaceOf(process.pid);
    writeFileSync(join(h.sessions, `${s.pid}.json`), record({ pid: s.pid, sessionId: 'same', procStart: String(ticks), ns: ownNs, status: 'idle' }));
    const other = sleeper(60);
    writeFileSync(join(h.sessions, `${other.pid}.json`), record({ pid: other.pid, sessionId: 'recycled', procStart: String(ticks - 1), ns: ownNs, status: 'idle' }));
    const c = await check(h);
    expect(byId(c, 'same')).toMatchObject({ verdict: 'live', evidence: { pidDomain: { status: 'this-namespace' } } });
    const reused = byId(c, 'recycled')!;
    expect(reused.verdict).toBe('reused');
    expect(reused.reason).toBe(`pid ${other.pid} belongs to a process that started at tick ${procStart(other.pid)} after boot, not ${ticks - 1} as recorded: the pid was recycled`);
  });

  it('marks one session open in two live processes (--resume of an open session), in the table and the JSON', async () => {
    const h = claudeHome();
    const [a, b] = [sleeper(60), sleeper(60)];
    const dead = await deadPid();
    for (const p of [a.pid, b.pid]) writeFileSync(join(h.sessions, `${p}.json`), record({ pid: p, sessionId: 'resumed', procStart: procStart(p), status: 'idle' }));
    writeFileSync(join(h.sessions, `${dead}.json`), record({ pid: dead, sessionId: 'resumed', status: 'idle' }));
    const c = await check(h);
    const rows = c.findings.filter((f) => f.id.startsWith('resumed'));
    expect(rows.map((f) => f.verdict).sort()).toEqual(['ghost', 'live', 'live']);
    const open = rows.filter((f) => f.verdict === 'live');
    for (const f of open) {
      const other = f.evidence.alsoOpenIn as number[];
      expect(other).toHaveLength(1);
      expect([a.pid, b.pid]).toContain(other[0]);
      expect(f.note).toBe(`also open in pid ${other[0]}`);
      expect(f.evictable).toBe(false);
    }
    const text = await runCli(['check', '--source', 'claude', '--claude-dir', join(h.home, '.claude')], h.env);
    expect(text.stdout).toMatch(/also open in pid/);
  });

  it('reads a startedAt of 1e300 as an invalid time: said in the JSON, never the reference of the start check', async () => {
    const h = claudeHome();
    const s = sleeper(60);
    // No procStart: the start check falls to the record's times, where startedAt would be the reference.
    const body = { ...JSON.parse(record({ pid: s.pid, sessionId: 'far-future', status: 'idle' })), startedAt: 1e300, procStart: undefined };
    writeFileSync(join(h.sessions, `${s.pid}.json`), JSON.stringify(body));
    const f = byId(await check(h), 'far-future')!;
    expect(f.verdict).toBe('live');
    expect(f.evidence.invalidTimes).toEqual([{ field: 'startedAt', value: '1e+300' }]);
    // Checked against when ghostwatch first saw it instead, a time that is one.
    expect(f.evidence.start).toMatchObject({ reference: 'first_observed' });
  });

  it("shows what the session is doing: its status, and `print` for a -p run", async () => {
    const h = claudeHome();
    const [a, b] = [sleeper(60), sleeper(60)];
    writeFileSync(join(h.sessions, `${a.pid}.json`), record({ pid: a.pid, sessionId: 'waiting-one', procStart: procStart(a.pid), status: 'waiting' }));
    writeFileSync(join(h.sessions, `${b.pid}.json`), record({ pid: b.pid, sessionId: 'print-run', procStart: procStart(b.pid), status: undefined, entrypoint: 'sdk-cli' }));
    const c = await check(h);
    expect(byId(c, 'waiting-one')?.status).toBe('waiting');
    expect(byId(c, 'print-run')?.status).toBe('print');
  });
});

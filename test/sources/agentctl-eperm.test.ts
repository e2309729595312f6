// agentctl's own liveness checks count EPERM as dead (every process.kill(pid, 0) in its source
// sits in a catch-all), so it marks another user's live agent stopped. ghostwatch never follows
// it there: kill says EPERM, the process is alive, and the finding carries a warning, never a
// problem. Real: the built CLI runs as nobody against a stand-in daemon, a root-owned agent.
// The daemon never lists a record it marked stopped again (protocols.md §3), so while it runs
// ghostwatch sees neither; with the daemon down it reads them from state.json as agentctl left them.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { cliCopyForAnyUser, otherUserRequirement, runCommand as run } from '../support/cli.js';
import { isLinux, killAndReap, spawnSleep } from '../support/processes.js';

const requirement = otherUserRequirement('to run the CLI as another user');
const maybe = requirement === undefined || process.env.CI === 'true' ? describe : describe.skip;

maybe('agentctl calls a live process of another user dead (EPERM)', () => {
  let dir: string;
  let daemon: TestAgentctlDaemon;
  const agent = isLinux ? spawnSleep(120) : undefined;
  let deadPid = 0;

  beforeAll(async () => {
    if (requirement !== undefined) throw new Error(`CI=true and this test ${requirement}`);
    dir = cliCopyForAnyUser('gw-eperm-');
    const dead = spawnSleep(30);
    await killAndReap(dead);
    deadPid = dead.pid!;
    const agentctlDir = join(dir, 'agentctl');
    mkdirSync(agentctlDir, { mode: 0o755 });
    daemon = new TestAgentctlDaemon({ dir: agentctlDir });
    const old = new Date(Date.now() - 60_000).toISOString();
    // As agentctl leaves them: the root-owned agent marked stopped (its check got EPERM), and a really dead one.
    daemon.addSession({ id: 'other-user', pid: agent!.pid, status: 'stopped', startedAt: new Date().toISOString(), stoppedAt: new Date().toISOString(), cwd: '/srv/a' });
    daemon.addSession({ id: 'really-dead', pid: deadPid, status: 'stopped', startedAt: old, stoppedAt: new Date().toISOString(), cwd: '/srv/b' });
    await daemon.start();
    chmodSync(daemon.socketPath, 0o777);
  });
  afterAll(async () => {
    if (agent) await killAndReap(agent);
    await daemon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('`check` as nobody, the daemon down: the stopped record whose pid answers EPERM is offline with a warning, not a problem', async () => {
    const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, 'none'), XDG_STATE_HOME: join(dir, 'state'), NO_COLOR: '1' };
    type Report = { sources: { status: string }[]; findings: { id: string; verdict: string; problem: boolean; note?: string; reason: string; evidence: { kill?: string } }[] };
    const check = () => run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, join(dir, 'bin/ghostwatch.js'), 'check', '--source', 'agentctl', '--agentctl-socket', daemon.socketPath, '--json'], env);
    const up = await check();
    expect(up.stderr).toBe('');
    const upReport = JSON.parse(up.stdout) as Report;
    expect(upReport.sources[0]?.status).toBe('connected');
    expect(upReport.findings).toEqual([]); // records agentctl marked stopped are never listed again

    await daemon.stop();
    const r = await check();
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout) as Report;
    expect(report.sources[0]?.status).toBe('files-only');
    const other = report.findings.find((f) => f.id === 'other-user');
    expect(other).toMatchObject({ verdict: 'offline', problem: false, note: 'alive (EPERM)', evidence: { kill: 'EPERM' } });
    expect(other?.reason).toMatch(new RegExp(`; but pid ${agent!.pid} is alive \\(EPERM: another user owns it\\), and the registry counts EPERM as dead$`));
    const dead = report.findings.find((f) => f.id === 'really-dead');
    expect(dead).toMatchObject({ verdict: 'offline', problem: false, evidence: { kill: 'ESRCH' } });
    expect(dead?.note).toBeUndefined();
    expect(dead?.reason).not.toMatch(/EPERM/);
    expect(r.code).toBe(0); // no problem: a warning is not a verdict
  });
});

// agentctl's records and locks against the identity rule, as the real daemon gives them
// (protocols.md §3), through the real engine with real child processes: a session the claude
// adapter discovered (resumed days after its transcript was made) is not "reused", an auto-lock
// whose pid was recycled is stale, and ended records say what agentctl really does with them.
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import type { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { agentctlDaemon, agentctlSource } from './agentctl-support.js';
import { deadPid, engineFor, sleeper, until } from '../engine/helpers.js';

const source = (socketPath: string) => agentctlSource(socketPath, 2_000);

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const find = (findings: readonly Finding[], id: string) => findings.find((f) => f.id === id);

async function findings(d: TestAgentctlDaemon, count: number): Promise<readonly Finding[]> {
  const engine = engineFor([source(d.socketPath)]);
  return until(() => {
    const s = engine.getSnapshot();
    return s.settled && s.findings.length === count && s.findings.every((f) => f.note !== 'checking…') ? s.findings : undefined;
  }, 8000, `${count} findings`);
}

describe('agentctl: resumed sessions (issue 17, 4)', () => {
  it('a session discovered from a days-old transcript (claude --resume) is live, judged from when ghostwatch first saw it', async () => {
    const d = await agentctlDaemon();
    const agent = sleeper();
    const transcriptBorn = Date.now() - 3 * DAY;
    // What the claude adapter reports: startedAt = the transcript's birth time, meta.projectDir.
    d.addSession({ id: 'resumed', pid: agent.pid, status: 'running', startedAt: iso(transcriptBorn), cwd: '/work/a', meta: { projectDir: '/work/a' } });
    // A record agentctl launched itself keeps its startedAt as the registration time: this one is recycled.
    d.addSession({ id: 'launched', pid: agent.pid, status: 'running', startedAt: iso(transcriptBorn), cwd: '/work/b', meta: {} });
    const all = await findings(d, 2);
    const resumed = find(all, 'resumed')!;
    expect(resumed).toMatchObject({ verdict: 'live', problem: false });
    expect(resumed.evidence.start?.reference).toBe('first_observed');
    expect(resumed.kind === 'session' && resumed.entry.registeredAt).toBeUndefined();
    expect(find(all, 'launched')).toMatchObject({ verdict: 'reused', evidence: { start: { reference: 'registered_at' } } });
  });
});

describe('agentctl: locks get the recycled-pid check (issue 17, 5)', () => {
  it('an auto-lock whose pid belongs to a process started after lockedAt is stale; one taken after the start is held', async () => {
    const d = await agentctlDaemon();
    const agent = sleeper();
    d.addLock({ directory: '/work/old', type: 'auto', pid: agent.pid, lockedAt: iso(Date.now() - 3_600_000) });
    d.addLock({ directory: '/work/new', type: 'auto', pid: agent.pid, lockedAt: iso(Date.now() + 1_000) });
    const all = await findings(d, 2);
    expect(find(all, '/work/old')).toMatchObject({
      verdict: 'stale-claim',
      problem: true,
      reason: expect.stringMatching(new RegExp(`^its pid ${agent.pid} belongs to a process started (59m5\\ds|1h00m0\\ds) after the claim was taken: the pid was recycled$`)),
      evidence: { start: { reference: 'acquired_at' } },
    });
    expect(find(all, '/work/new')).toMatchObject({ verdict: 'held', reason: `held by pid ${agent.pid}, which is alive` });
  });
});

describe('agentctl: reasons say what agentctl really does (issue 17, 7)', () => {
  it('a stopped record from a transcript: "last active", and agentctl never removes it; never "it will sweep it"', async () => {
    const d = await agentctlDaemon();
    // What the claude adapter reports for a finished transcript, on every session.list: stopped, no pid.
    d.addSession({ id: 'transcript', status: 'stopped', startedAt: iso(Date.now() - DAY), stoppedAt: iso(Date.now() - 6 * 60_000), meta: { projectDir: '/work/a' } });
    const all = await findings(d, 1);
    const transcript = find(all, 'transcript')!;
    expect(transcript).toMatchObject({ verdict: 'offline', problem: false });
    expect(transcript.reason).toMatch(/^the registry marked it stopped \(last active 6m0\ds ago\); agentctl never removes it: it lists it from its transcript, which neither its sweep nor session\.prune touches$/);
    expect(transcript.reason).not.toMatch(/will sweep|offline for/);
  });

  it('a stopped record agentctl launched: never listed by the daemon again; read from state.json with the daemon down, agentctl never deletes it', async () => {
    const d = await agentctlDaemon();
    const gone = await deadPid();
    const agent = sleeper();
    d.addSession({ id: 'launched', pid: gone, status: 'stopped', startedAt: iso(Date.now() - DAY), stoppedAt: iso(Date.now() - 60_000), meta: {} });
    d.addSession({ id: 'running', pid: agent.pid, status: 'running', meta: {} });
    const engine = engineFor([source(d.socketPath)]);
    const up = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && s.sources[0]?.status === 'connected' && s.findings.length === 1 ? s : undefined;
    }, 8000, 'the daemon lists the running record only');
    expect(up.findings[0]!.id).toBe('running');

    await d.stop();
    const down = await until(() => {
      const s = engine.getSnapshot();
      return s.settled && s.sources[0]?.status === 'files-only' && s.findings.length === 2 && s.findings.every((f) => f.note !== 'checking…') ? s : undefined;
    }, 8000, 'files-only with both records');
    const launched = find(down.findings, 'launched')!;
    expect(launched).toMatchObject({ verdict: 'offline', problem: false });
    expect(launched.reason).toMatch(/^the registry marked it stopped 1m0\ds ago; agentctl never deletes it: its sweep and session\.prune only mark records stopped \(state\.json only grows\)$/);
    for (const f of down.findings) expect(f.reason).not.toMatch(/will sweep|offline for/);
  });
});

// agentctl's poll pace on a hand-driven clock (the source's timers only; the engine, its probes,
// the stand-in daemon's socket and the agents are real): every 2 s while something changes or a
// problem is shown, every 10 s once three reads in a row found nothing new. Each session.list
// costs the real daemon ~37 ms of CPU (it asks every adapter and marks dead sessions stopped).
import { describe, expect, it } from 'vitest';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { FakeClock } from '../engine/fake-clock.js';
import { engineFor, HOST, killAndReap, onCleanup, sleeper, tempDir, until } from '../engine/helpers.js';

async function setup() {
  const d = new TestAgentctlDaemon({ dir: tempDir() });
  await d.start();
  onCleanup(() => d.stop());
  const clock = new FakeClock(Date.now());
  const src = new AgentctlSource({ socketPath: d.socketPath, host: HOST, timers: clock, requestTimeoutMs: 2000 });
  const reads = () => d.calls.filter((m) => m === 'session.list').length;
  /** Advance to `t`, where a read is due: it happens (over the real socket), and the next one is armed for `next`. */
  const readAt = async (t: number, next: number) => {
    expect(clock.timeouts()).toEqual([t]);
    const before = reads();
    await clock.advanceTo(t - 1);
    expect(reads()).toBe(before); // not a millisecond early
    await clock.advanceTo(t);
    await until(() => reads() === before + 1 && clock.timeouts().length === 1, 5000, `the read at ${t}`);
    expect(clock.timeouts()).toEqual([next]);
  };
  return { d, clock, src, reads, readAt };
}

describe('agentctl poll pace (issue 17, 7)', () => {
  it('2 s while the lists change, 10 s once steady for three reads, 2 s again when a record comes', async () => {
    const { d, src, reads, readAt, clock } = await setup();
    d.addLock({ directory: '/work/d', type: 'manual', lockedBy: 'alice' });
    const engine = engineFor([src]);
    await until(() => reads() === 1 && clock.timeouts().length === 1, 5000, 'the first read');
    expect(clock.timeouts()).toEqual([2_000]);
    await readAt(2_000, 4_000);
    await readAt(4_000, 6_000);
    await readAt(6_000, 16_000); // three reads found nothing new: slow
    await readAt(16_000, 26_000);
    // Tokens and costs move on every read of a working agent: not a change.
    d.addSession({ id: 'busy', status: 'running', tokens: 1 });
    await readAt(26_000, 28_000);
    d.sessions.get('busy')!.tokens = 2;
    await readAt(28_000, 30_000);
    await readAt(30_000, 32_000);
    await readAt(32_000, 42_000);
    d.sessions.get('busy')!.tokens = 3;
    await readAt(42_000, 52_000);
    await until(() => engine.getSnapshot().findings.length === 2, 5000, 'both rows shown');
  });

  it('a problem shown makes it fast at once (2 s after the last read), and it stays fast while shown', async () => {
    const { d, src, reads, readAt, clock } = await setup();
    const agent = sleeper();
    d.addSession({ id: 'a', pid: agent.pid, status: 'running' });
    const engine = engineFor([src]);
    await until(() => reads() === 1 && clock.timeouts().length === 1, 5000, 'the first read');
    await until(() => engine.getSnapshot().findings[0]?.verdict === 'live', 5000, 'live');
    await readAt(2_000, 4_000);
    await readAt(4_000, 6_000);
    await readAt(6_000, 16_000);
    await clock.advanceTo(7_000);
    await killAndReap(agent); // the agent dies; agentctl still lists it running (until it marks it), so its lists say nothing new
    await until(() => engine.getSnapshot().findings[0]?.verdict === 'ghost', 5000, 'ghost');
    await until(() => clock.timeouts()[0] === 8_000, 5000, 'the next read moved up');
    await readAt(8_000, 10_000);
    await readAt(10_000, 12_000);
    await readAt(12_000, 14_000);
    await readAt(14_000, 16_000); // steady, but the ghost is shown
    // agentctl marks it stopped and never lists it again: no problem left; the change keeps it fast three more reads.
    d.sessions.get('a')!.status = 'stopped';
    await readAt(16_000, 18_000);
    await until(() => engine.getSnapshot().findings.length === 0, 5000, 'the marked record gone from the table');
    await readAt(18_000, 20_000);
    await readAt(20_000, 22_000);
    await readAt(22_000, 32_000);
  });
});

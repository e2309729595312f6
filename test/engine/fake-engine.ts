// An engine on a hand-driven clock: one FakeSource, FakeProbes, an audit log in a temp folder,
// stopped after the test. Not started: the test starts it when its scene is set.
import { join } from 'node:path';
import { createEngine } from '../../src/engine/index.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

/** The host name the fake engine calls its own. */
export const FAKE_HOST = 'fakehost';

export function fakeEngine() {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const source = new FakeSource(clock);
  const engine = createEngine({ sources: [source], hostName: FAKE_HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes, clock });
  onCleanup(() => engine.stop());
  return { clock, probes, source, engine };
}

// The agentctl tests' stand-in daemon (test/support/agentctl-daemon.ts) in a temp dir, stopped at
// the end of the test, and the source that reads it with quick test timings.
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { HOST, onCleanup, tempDir } from '../engine/helpers.js';

export async function agentctlDaemon(opts: { wrappedList?: boolean } = {}): Promise<TestAgentctlDaemon> {
  const d = new TestAgentctlDaemon({ dir: tempDir(), ...opts });
  await d.start();
  onCleanup(() => d.stop());
  return d;
}

/** A source polling every 100 ms and backing off 20–100 ms; each file says how long a request may take. */
export function agentctlSource(socketPath: string, requestTimeoutMs: number): AgentctlSource {
  return new AgentctlSource({ socketPath, host: HOST, pollIntervalMs: 100, requestTimeoutMs, backoffInitialMs: 20, backoffMaxMs: 100 });
}

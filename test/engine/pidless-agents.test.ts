// Agents from before pi-socket's 2026-02-23 change register no pid and send no pings
// (protocols.md §1). The process listening on the entry's port stands in for the pid: its pid and
// command are the evidence, and it is judged like a registered pid from then on.
import { describe, expect, it } from 'vitest';
import { startPiAgent } from '../support/pi-agent.js';
import { startStockHypivisor } from '../support/stock-hypivisor.js';
import { engineFor, finding, killAndReap, onCleanup, serve, source, until } from './helpers.js';
import { describeOn } from '../support/platform.js';

async function stock(): Promise<{ url: string }> {
  const s = await startStockHypivisor();
  onCleanup(() => s.close());
  return s;
}

describeOn(['linux'], 'the port owner is read from /proc/net and /proc/<pid>/fd').each([
  { name: 'ghostwatch serve', registry: serve },
  { name: 'a stock hypivisor', registry: stock },
])('pid-less agents, on $name', ({ registry }) => {
  it('names the process that serves the port, and calls the entry a ghost once that process is killed', async () => {
    const s = await registry();
    const agent = await startPiAgent(s.url, ['--no-pid']);
    onCleanup(() => killAndReap(agent.child));
    const engine = engineFor([source(s.url)]);
    const f = await until(() => {
      const x = finding(engine.getSnapshot(), agent.id);
      return x?.evidence.port?.owner !== undefined && x.evidence.process !== undefined && x.verdict === 'live' ? x : undefined;
    }, 8000, 'live, served by the agent');
    expect(f.reason).toMatch(new RegExp(`^no pid; port ${agent.port} is served by pid ${agent.pid} \\([^)]+\\), which is alive$`));
    expect(f.evidence.port).toMatchObject({ port: agent.port, result: 'open', owner: agent.pid, listeners: ['127.0.0.1'] });
    expect(f.evidence.process).toMatchObject({ pid: agent.pid });
    expect(engine.processInfo(agent.pid)?.cmd).toContain('pi-agent.mjs');

    await killAndReap(agent.child);
    await until(() => finding(engine.getSnapshot(), agent.id)?.verdict === 'ghost', 8000, 'ghost after SIGKILL');
  });

  it('of two sessions one process serves, the older registration is superseded', async () => {
    const s = await registry();
    const agent = await startPiAgent(s.url, ['--no-pid', '--sessions', '2']);
    onCleanup(() => killAndReap(agent.child));
    const [older, newer] = agent.ids as [string, string];
    const engine = engineFor([source(s.url)]);
    await until(() => finding(engine.getSnapshot(), older)?.verdict === 'superseded', 8000, 'older superseded');
    const f = finding(engine.getSnapshot(), older)!;
    expect(f.reason).toContain(`pid ${agent.pid} serves its port and also the newer entry ${newer}`);
    expect(f.evidence).toMatchObject({ sharedBy: 'port-owner', siblings: [newer] });
    expect(finding(engine.getSnapshot(), newer)?.verdict).toBe('live');
  });
});

// The most common real ghost (protocols.md §1): a pi agent is SIGKILLed, its socket closes, the
// registry marks it offline at once and sweeps it ~40 s later. The process is gone all that time,
// so ghostwatch calls it a ghost as soon as the OS says so — not "offline, 0 problems".
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startPiAgent } from '../support/pi-agent.js';
import { startStockHypivisor } from '../support/stock-hypivisor.js';
import { engineFor, finding, killAndReap, onCleanup, serve, source, until } from './helpers.js';

async function stock(): Promise<{ url: string }> {
  const s = await startStockHypivisor();
  onCleanup(() => s.close());
  return s;
}

describe.each([
  ['ghostwatch serve', serve],
  ['a stock hypivisor', stock],
] as const)('an agent killed without deregistering, on %s', (_name, registry) => {
  it('is a ghost as soon as the registry marks it offline and the OS says its pid is gone', async () => {
    const s = await registry();
    const agent = await startPiAgent(s.url);
    onCleanup(() => killAndReap(agent.child));
    const engine = engineFor([source(s.url)]);
    await until(() => finding(engine.getSnapshot(), agent.id)?.verdict === 'live', 5000, 'live first');

    await killAndReap(agent.child); // SIGKILL: no deregister, the kernel closes its socket
    await until(() => finding(engine.getSnapshot(), agent.id)?.verdict === 'ghost', 5000, 'ghost after SIGKILL');
    const f = finding(engine.getSnapshot(), agent.id)!;
    expect(f).toMatchObject({ problem: true, evictable: true });
    expect(f.kind === 'session' && f.entry.offline).toBe(true); // the registry's own word is offline
    expect(f.reason).toMatch(new RegExp(`^registry: offline since \\d\\d:\\d\\d:\\d\\d; OS: pid ${agent.pid} is gone \\(ESRCH\\)$`));
    expect(f.evidence).toMatchObject({ kill: 'ESRCH', underlying: 'ghost', registry: { status: 'offline' } });
    expect(engine.getSnapshot().problems).toBe(1);
  });

  it('stays offline, not a problem, while its process lives (it may reconnect)', async () => {
    const s = await registry();
    const agent = await startPiAgent(s.url);
    onCleanup(() => killAndReap(agent.child));
    const engine = engineFor([source(s.url)]);
    await until(() => finding(engine.getSnapshot(), agent.id)?.verdict === 'live', 5000, 'live first');
    agent.child.kill('SIGUSR1'); // it drops its registry connection and lives on
    await until(() => finding(engine.getSnapshot(), agent.id)?.verdict === 'offline', 5000, 'offline');
    expect(finding(engine.getSnapshot(), agent.id)).toMatchObject({ problem: false, evidence: { underlying: 'live' } });
  });

  it('`check` reports it as a ghost and exits 1', async () => {
    const s = await registry();
    const agent = await startPiAgent(s.url);
    onCleanup(() => killAndReap(agent.child));
    await killAndReap(agent.child);
    const env = { ...process.env, HOME: '/nonexistent', HYPIVISOR_WS: s.url, XDG_CONFIG_HOME: '/nonexistent', NO_COLOR: '1' };
    const run = await runCli(['check', '--json'], env);
    expect(run.code, `check said:\n${run.stdout}\n${run.stderr}`).toBe(1);
    const report = JSON.parse(run.stdout) as { findings: { id: string; verdict: string; reason: string }[] };
    expect(report.findings.find((x) => x.id === agent.id)).toMatchObject({ verdict: 'ghost', reason: expect.stringMatching(/^registry: offline since .*ESRCH/) });
  });
});

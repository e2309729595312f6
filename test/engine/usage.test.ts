// What each agent costs, from the /proc reads the full probe makes anyway: a real CPU burner shows
// more than half a core over the last interval, a real allocation shows in resident memory, a
// sleeping process shows 0.0 % and little memory; the figures are evidence, so check --json and
// the detail view carry them.
import { expect, it } from 'vitest';
import { cpuText } from '../../src/core/usage.js';
import { allocator, burner } from '../support/processes.js';
import { describeOn } from '../support/platform.js';
import { agent, engineFor, finding, serve, sleeper, source, until } from './helpers.js';

const MIB = 1024 * 1024;

describeOn(['linux'], 'CPU time and rss are read from /proc/<pid>/stat')('what an agent costs', () => {
  it('a CPU burner shows more than 50 % of a core over an interval, a sleeper 0.0 %', async () => {
    const s = await serve();
    const hot = burner();
    const idle = sleeper();
    await agent(s.url, 'hot', { pid: hot.pid });
    await agent(s.url, 'idle', { pid: idle.pid });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    // On a shared, loaded machine one interval may be slow: any interval over half a core will do.
    const usage = await until(() => {
      const u = finding(engine.getSnapshot(), 'hot')?.evidence.usage;
      return u?.cpuOver === 'interval' && (u.cpuPct ?? 0) > 50 ? u : undefined;
    }, 15_000, () => `over 50 % of a core, not ${JSON.stringify(finding(engine.getSnapshot(), 'hot')?.evidence.usage)}`);
    expect(usage.rssBytes).toBeGreaterThan(0);
    await until(() => finding(engine.getSnapshot(), 'idle')?.evidence.usage?.cpuOver === 'interval', 10_000, 'an interval of the sleeper');
    expect(cpuText(finding(engine.getSnapshot(), 'idle')!.evidence.usage!.cpuPct)).toBe('0.0');
  });

  it('a process holding 64 MiB it wrote shows at least that much resident memory; a sleeper far less', async () => {
    const s = await serve();
    const big = await allocator(64);
    const small = sleeper();
    await agent(s.url, 'big', { pid: big.pid });
    await agent(s.url, 'small', { pid: small.pid });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await engine.settled(10_000);
    const rss = (id: string) => finding(engine.getSnapshot(), id)?.evidence.usage?.rssBytes;
    await until(() => rss('big') !== undefined && rss('small') !== undefined, 10_000, 'both read');
    expect(rss('big')).toBeGreaterThanOrEqual(64 * MIB);
    expect(rss('small')).toBeLessThan(16 * MIB);
    // The first reading is an average over the process's life (there is no interval yet), and says so.
    const first = finding(engine.getSnapshot(), 'small')!.evidence.usage!;
    expect(['life', 'interval']).toContain(first.cpuOver);
  });
});

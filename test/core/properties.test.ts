import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile, type PidFacts, type SessionEntry } from '../../src/core/index.js';
import { HOST, NOW } from './fixtures.js';

// True time is the local clock. The registry's clock may be off by up to an hour either way;
// when it is, the engine passes the offset it measured, as here.
const entryArb = fc.record({
  pid: fc.integer({ min: 2, max: 4_194_304 }),
  startedAt: fc.integer({ min: NOW - 30 * 86_400_000, max: NOW - 1 }),
  registrationDelay: fc.integer({ min: 0, max: 7 * 86_400_000 }),
  observedDelay: fc.integer({ min: 0, max: 86_400_000 }),
  skew: fc.integer({ min: -3_600_000, max: 3_600_000 }),
  kill: fc.constantFrom('ok' as const, 'EPERM' as const),
  state: fc.constantFrom('R', 'S', 'D', 'T', 'I', undefined),
  hasRegisteredAt: fc.boolean(),
  hasPidStartedAt: fc.boolean(),
  hasObserved: fc.boolean(),
  port: fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined }),
  id: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.startsWith('pending-')),
  machine: fc.constantFrom(HOST, 'DEVBOX', 'devbox.example.com', 'devbox.'),
  cwd: fc.string(),
});

describe('reconcile properties', () => {
  it('never gives a problem verdict to a local, alive, non-zombie process that started before it was registered (stopped: suspended)', () => {
    fc.assert(
      fc.property(entryArb, (a) => {
        const registeredTrue = Math.min(a.startedAt + a.registrationDelay, NOW);
        const observed = Math.min(registeredTrue + a.observedDelay, NOW);
        const entry: SessionEntry = {
          source: 'hypivisor',
          id: a.id,
          machine: a.machine,
          cwd: a.cwd,
          pid: a.pid,
          port: a.port,
          status: 'active',
          ...(a.hasRegisteredAt ? { registeredAt: registeredTrue + a.skew } : {}),
          ...(a.hasPidStartedAt ? { pidStartedAt: a.startedAt } : {}),
          ...(a.hasObserved ? { firstObservedAt: observed } : {}),
        };
        const facts: PidFacts = { pid: a.pid, kill: a.kill, state: a.state, startedAt: a.startedAt, checkedAt: NOW };
        const policy = defaultPolicy(HOST, { registryClockOffsetMs: { hypivisor: a.skew } });
        const [f] = reconcile({ sessions: [entry], claims: [] }, { pids: new Map([[a.pid, facts]]), ports: new Map() }, NOW, policy);
        expect(f!.problem).toBe(false);
        expect(f!.verdict).toBe(a.state === 'T' ? 'suspended' : 'live');
      }),
      { numRuns: 2_000 },
    );
  });

  it('never calls an entry a ghost unless the OS said ESRCH or its port refused', () => {
    const killArb = fc.constantFrom('ok' as const, 'EPERM' as const, 'ESRCH' as const, 'error' as const);
    fc.assert(
      fc.property(
        fc.anything(),
        fc.option(killArb, { nil: undefined }),
        fc.option(fc.constantFrom('open' as const, 'refused' as const, 'timeout' as const, 'error' as const), { nil: undefined }),
        (pid, kill, portResult) => {
          const entry: SessionEntry = { source: 's', id: 'x', machine: HOST, pid, port: 8080 };
          const pids = new Map<number, PidFacts>();
          if (kill && typeof pid === 'number') pids.set(pid, { pid, kill, checkedAt: NOW });
          const ports = new Map(portResult ? [[8080, { port: 8080, result: portResult, checkedAt: NOW }]] : []);
          const [f] = reconcile({ sessions: [entry], claims: [] }, { pids, ports }, NOW, defaultPolicy(HOST));
          if (f!.verdict === 'ghost') {
            expect(f!.evidence.kill === 'ESRCH' || f!.evidence.port?.result === 'refused').toBe(true);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

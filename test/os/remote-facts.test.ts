// The remote probe's answers as facts of that host (remote-facts.ts): a start time that is no time
// on this host's clock is unknown, named, and never decides which process it is.
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/core/reconcile.js';
import { defaultPolicy } from '../../src/core/types.js';
import { pidFacts, type AnswerReading } from '../../src/os/remote-facts.js';
import { parseAnswer, parseHandshake, type Handshake } from '../../src/os/remote-probe.js';
import { detailLines } from '../../src/ui/detail.js';

const NOW = Date.UTC(2026, 10, 22, 9, 30, 0);
const HS = parseHandshake(`ghostwatch-probe 1 proc btime=${NOW / 1000 - 86_400} clk=100 now=${NOW / 1000}`) as Handshake;
const PS = parseHandshake(`ghostwatch-probe 1 ps now=${NOW / 1000}`) as Handshake;
const reading = (offsetMs = 0): AnswerReading => ({ host: 'build-42', offsetMs, noFacts: () => 'no answer' });

describe('pidFacts', () => {
  it("takes a start within a hundred years of now, on this host's clock", () => {
    const f = pidFacts(42, parseAnswer('P 42 ok S 0 0 360000', HS), NOW, reading(-5_000));
    expect(f).toMatchObject({ kill: 'ok', state: 'S', startedAt: NOW - 86_400_000 + 3_600_000 - 5_000 });
    expect(f.invalidStart).toBeUndefined();
  });

  it.each([
    ['a start tick of 999999999999999999', 'P 42 ok S 0 0 999999999999999999', HS, 'tick 999999999999999999 on build-42'],
    ['a start in the year 9999', 'P 42 ok S 0:00.00 0 Fri Dec 31 23:59:59 9999', PS, 'Fri Dec 31 23:59:59 9999 on build-42'],
    ['a start in the year 1900', 'P 42 EPERM S 0:00.00 0 Mon Jan 1 00:00:00 1900', PS, 'Mon Jan 1 00:00:00 1900 on build-42'],
  ])('reads %s as alive with its start unknown, and names it', (_what, line, hs, named) => {
    const f = pidFacts(42, parseAnswer(line, hs), NOW, reading());
    expect(f.kill).toMatch(/^(ok|EPERM)$/);
    expect(f.startedAt).toBeUndefined();
    expect(f.invalidStart).toBe(named);
  });

  it('judges such a process live with its identity unchecked, and the detail view says "invalid time"', () => {
    const facts = pidFacts(42, parseAnswer('P 42 ok S 0 0 999999999999999999', HS), NOW, reading());
    const view = { sessions: [{ source: 'hypivisor', id: 'far', machine: 'build-42', pid: 42, registeredAt: NOW - 60_000 }], claims: [] };
    const remote = { machine: 'build-42', transport: 'ssh' as const, state: 'up' as const, facts: { pids: new Map([[42, facts]]), ports: new Map() } };
    const [f] = reconcile(view, { pids: new Map(), ports: new Map(), remotes: [remote] }, NOW, defaultPolicy('devbox'));
    expect(f).toMatchObject({ verdict: 'live', reason: expect.stringContaining('its start time is an invalid time: identity unchecked') });
    expect(f!.evidence.invalidTimes).toEqual([{ field: 'process start', value: 'tick 999999999999999999 on build-42' }]);
    expect(f!.evidence.start).toBeUndefined();
    const lines = detailLines(f!, NOW);
    expect(lines).toContainEqual({ label: 'invalid time', value: 'process start tick 999999999999999999 on build-42: no time within 100 years of now, not used (unknown)' });
  });
});

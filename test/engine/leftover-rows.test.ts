// Which row a dead agent's leftovers go under, the departed row of an agent gone from its registry,
// and the agents the rows name: pure functions, a table of rows each.
import { describe, expect, it } from 'vitest';
import type { Leftover, LeftoverGroup } from '../../src/core/leftovers.js';
import type { Evidence, SessionEntry } from '../../src/core/types.js';
import { agentsOf, departedRow, leftoverTargets, placeLeftovers } from '../../src/engine/leftover-rows.js';
import { departedOf, type EngineFinding } from '../../src/engine/types.js';
import { EventLog } from '../../src/engine/event-log.js';
import type { WatchEvent } from '../../src/core/events.js';

const HOST = 'devbox';

function row(id: string, pid: number, over: { evidence?: Partial<Evidence>; entry?: Partial<SessionEntry>; verdict?: 'live' | 'ghost' | 'reused'; source?: string } = {}): EngineFinding {
  const source = over.source ?? 'hypivisor';
  return {
    kind: 'session',
    source,
    id,
    verdict: over.verdict ?? 'live',
    problem: false,
    evictable: false,
    reason: 'its process runs',
    evidence: { host: { machine: HOST, local: true, matchedAs: 'exact' }, kill: 'ok', state: 'S', ...over.evidence },
    entry: { source, id, machine: HOST, cwd: `/work/${id}`, pid, status: 'active', ...over.entry },
  } as EngineFinding;
}

function leftover(pid: number, agentPid: number, ports?: number[]): Leftover {
  return { pid, ppid: 1, startTicks: pid * 10, state: 'S', name: `child-${pid}`, cmd: `node child-${pid}.js`, agentPid, otherUser: false, ...(ports ? { ports } : {}) };
}

function group(agentPid: number, refs: LeftoverGroup['refs'], pids: number[]): LeftoverGroup {
  return { agent: { pid: agentPid, startTicks: agentPid * 10 }, refs, leftovers: pids.map((p) => leftover(p, agentPid)) };
}

describe('placeLeftovers', () => {
  it('with no groups: the same rows, nothing departed, nothing carrying', () => {
    const rows = [row('a', 100)];
    const placed = placeLeftovers(rows, [], HOST);
    expect(placed.findings).toBe(rows);
    expect(placed.departed).toEqual([]);
    expect(placed.carrying).toEqual([]);
  });

  it('puts a group under the row that names its agent, in a copy of the rows; that row carries them', () => {
    const rows = [row('a', 100), row('b', 200)];
    const g = group(200, [{ source: 'hypivisor', id: 'b' }], [201, 202]);
    const placed = placeLeftovers(rows, [g], HOST);
    expect(placed.findings).not.toBe(rows);
    expect(rows[1]).not.toHaveProperty('leftovers');
    expect(placed.findings[0]).toBe(rows[0]);
    expect(placed.findings[1]).toMatchObject({ id: 'b', leftovers: g.leftovers });
    expect(placed.carrying).toEqual([placed.findings[1]]);
    expect(placed.departed).toEqual([]);
  });

  it.each([
    ['gone (ESRCH)', { evidence: { kill: 'ESRCH' as const } }],
    ['a zombie', { evidence: { state: 'Z' } }],
    ['reused', { verdict: 'reused' as const }],
  ])('a row of the same pid whose process is %s takes a group named by another registry id', (_what, over) => {
    const rows = [row('new-id', 300, over)];
    const g = group(300, [{ source: 'hypivisor', id: 'old-id' }], [301]);
    const placed = placeLeftovers(rows, [g], HOST);
    expect(placed.findings[0]).toMatchObject({ id: 'new-id', leftovers: g.leftovers });
    expect(placed.departed).toEqual([]);
  });

  it('a group remembered under several names goes under the row of any of them', () => {
    const rows = [row('second', 350)];
    const g = group(350, [{ source: 'hypivisor', id: 'first' }, { source: 'hypivisor', id: 'second' }], [351]);
    expect(placeLeftovers(rows, [g], HOST).findings[0]).toMatchObject({ id: 'second', leftovers: g.leftovers });
  });

  it('a live row of the same pid under another id does not take it: the group gets a departed row', () => {
    const rows = [row('new-id', 300)];
    const g = group(300, [{ source: 'hypivisor', id: 'old-id' }], [301]);
    const placed = placeLeftovers(rows, [g], HOST);
    expect(placed.findings).toBe(rows);
    expect(placed.carrying).toEqual([]);
    expect(placed.departed).toEqual([expect.objectContaining({ id: 'old-id', departed: true, leftovers: g.leftovers })]);
  });

  it('the same id from another registry, a remote row, a claim row or a row with no usable pid take nothing', () => {
    const rows = [
      row('b', 400, { source: 'claude' }),
      row('r', 400, { evidence: { host: { machine: 'elsewhere', local: false } } }),
      row('n', 0, { entry: { pid: undefined } }),
      { kind: 'claim', source: 'hypivisor', id: 'lock', holder: 'b', verdict: 'held', problem: false, evictable: false, reason: '', evidence: { host: { machine: HOST, local: true } } } as unknown as EngineFinding,
    ];
    const g = group(400, [{ source: 'hypivisor', id: 'b' }], [401]);
    const placed = placeLeftovers(rows, [g], HOST);
    expect(placed.findings).toBe(rows);
    expect(placed.departed.map((d) => d.id)).toEqual(['b']);
  });

  it('groups of one pid under one row are all shown; two groups naming the same gone agent make one departed row', () => {
    const rows = [row('a', 500, { evidence: { kill: 'ESRCH' } })];
    const g1 = group(500, [{ source: 'hypivisor', id: 'x' }], [501]);
    const g2 = group(500, [{ source: 'hypivisor', id: 'y' }], [502]);
    const placed = placeLeftovers(rows, [g1, g2], HOST);
    expect((placed.findings[0] as { leftovers?: Leftover[] }).leftovers?.map((l) => l.pid)).toEqual([501, 502]);
    const gone1 = group(600, [{ source: 'claude', id: 'z' }], [601]);
    const gone2 = group(600, [{ source: 'claude', id: 'z' }], [602]);
    expect(placeLeftovers([], [gone1, gone2], HOST).departed.map((d) => d.id)).toEqual(['z']);
    // A departed row never repeats a row the registry shows.
    expect(placeLeftovers([row('z', 700, { source: 'claude' })], [gone1], HOST).departed).toEqual([]);
  });
});

describe('departedRow', () => {
  it('is a ghost that is no problem and nothing to evict, with its pid gone and its leftovers', () => {
    const g = group(800, [{ source: 'claude', id: 'sess-1', machine: 'devbox', cwd: '/work/one' }], [801]);
    expect(departedRow(g, 'host-a')).toEqual({
      kind: 'session',
      source: 'claude',
      id: 'sess-1',
      verdict: 'ghost',
      problem: false,
      evictable: false,
      reason: 'gone from claude; its process (pid 800) is gone too and a process it started still runs',
      note: 'not in the registry',
      evidence: { host: { machine: 'devbox', local: true, matchedAs: 'exact' }, pid: { value: 800, raw: 800 }, kill: 'ESRCH' },
      entry: { source: 'claude', id: 'sess-1', machine: 'devbox', cwd: '/work/one', pid: 800, status: 'gone' },
      stale: undefined,
      checking: undefined,
      deadSince: undefined,
      leftovers: g.leftovers,
      departed: true,
    });
  });

  it('counts several leftovers, and names the agent by its pid on this host when no registry named it', () => {
    const row2 = departedRow(group(900, [], [901, 902]), 'host-a');
    expect(row2).toMatchObject({ source: 'ghostwatch', id: 'pid 900', reason: 'gone from ghostwatch; its process (pid 900) is gone too and 2 processes it started still run' });
    expect(row2.evidence.host.machine).toBe('host-a');
    expect(row2.entry).toMatchObject({ machine: 'host-a', cwd: undefined });
  });

  it("is told apart from a registry's rows by departedOf", () => {
    expect(departedOf(departedRow(group(900, [], [901]), 'host-a'))).toBe(true);
    expect(departedOf(row('a', 700))).toBe(false);
    expect(departedOf({ ...row('a', 700), departed: undefined } as EngineFinding)).toBe(false);
  });
});

describe('agentsOf and leftoverTargets', () => {
  it('names each local session row by its pid, with where it ran; remote rows and rows without a pid are not agents here', () => {
    const claim = { kind: 'claim', source: 'hypivisor', id: 'lock', holder: 'a', verdict: 'held', problem: false, evictable: false, reason: '', evidence: { host: { machine: HOST, local: true } }, entry: { pid: 100 } } as unknown as EngineFinding;
    const rows = [
      row('a', 100),
      claim,
      row('r', 200, { evidence: { host: { machine: 'far', local: false } } }),
      row('n', 0, { entry: { pid: undefined } }),
      row('m', 300, { entry: { machine: undefined, cwd: undefined } }),
      row('c', 400, { entry: { machine: undefined } }),
      row('d', 500, { entry: { cwd: undefined } }),
    ];
    // Strictly: what the entry does not say is left out, not written as undefined.
    expect(agentsOf(rows)).toStrictEqual([
      { pid: 100, refs: [{ source: 'hypivisor', id: 'a', machine: HOST, cwd: '/work/a' }] },
      { pid: 300, refs: [{ source: 'hypivisor', id: 'm' }] },
      { pid: 400, refs: [{ source: 'hypivisor', id: 'c', cwd: '/work/c' }] },
      { pid: 500, refs: [{ source: 'hypivisor', id: 'd', machine: HOST }] },
    ]);
  });

  it('lists every leftover the rows show with the row that shows it', () => {
    const g = group(200, [{ source: 'hypivisor', id: 'b' }], [201, 202]);
    const placed = placeLeftovers([row('a', 100), row('b', 200)], [g], HOST);
    expect(leftoverTargets(placed.findings)).toEqual([
      { leftover: g.leftovers[0], agent: { source: 'hypivisor', id: 'b', pid: 200 } },
      { leftover: g.leftovers[1], agent: { source: 'hypivisor', id: 'b', pid: 200 } },
    ]);
  });
});

describe("the events' leftovers news", () => {
  const noChange = (findings: readonly EngineFinding[]) => ({ findings, changed: [], left: [] });
  const newsOf = (events: readonly WatchEvent[]) => events.filter((e) => e.kind === 'leftovers');

  it('tells each row once when its leftovers are first shown, naming up to four of them with their ports; again only for new ones', () => {
    const log = new EventLog();
    const g = { ...group(200, [{ source: 'hypivisor', id: 'b' }], []), leftovers: [leftover(201, 200, [3000, 3001]), leftover(202, 200)] };
    const first = placeLeftovers([row('b', 200, { evidence: { kill: 'ESRCH' } })], [g], HOST);
    expect(newsOf(log.next(noChange(first.findings), [], 1_000, false, first.carrying))).toEqual([]); // not settled: no events yet
    const told = newsOf(log.next(noChange(first.findings), [], 2_000, true, first.carrying));
    expect(told).toEqual([{ at: 2_000, kind: 'leftovers', source: 'hypivisor', rowKind: 'session', id: 'b', verdict: 'live', rows: 2, detail: 'pid 201 child-201 :3000,:3001, pid 202 child-202' }]);
    expect(newsOf(log.next(noChange(first.findings), [], 3_000, true, first.carrying))).toHaveLength(1); // the same ones: nothing new
    const more = { ...g, leftovers: [...g.leftovers, ...[203, 204, 205, 206, 207].map((p) => leftover(p, 200))] };
    const second = placeLeftovers([row('b', 200, { evidence: { kill: 'ESRCH' } })], [more], HOST);
    const news = newsOf(log.next(noChange(second.findings), [], 4_000, true, second.carrying));
    expect(news.slice(1)).toEqual([expect.objectContaining({ at: 4_000, rows: 5, detail: 'pid 203 child-203, pid 204 child-204, pid 205 child-205, pid 206 child-206, ...' })]);
  });

  it('four new ones are named without "...", a leftover with no ports gets no port list, and a row with an empty list tells nothing', () => {
    const log = new EventLog();
    const four = { ...group(200, [{ source: 'hypivisor', id: 'b' }], []), leftovers: [leftover(201, 200, []), leftover(202, 200), leftover(203, 200), leftover(204, 200)] };
    const placed = placeLeftovers([row('b', 200, { evidence: { kill: 'ESRCH' } })], [four], HOST);
    const empty = { ...row('e', 300), leftovers: [] } as EngineFinding;
    expect(newsOf(log.next(noChange(placed.findings), [], 1_000, true, [empty, ...placed.carrying]))).toEqual([
      expect.objectContaining({ id: 'b', rows: 4, detail: 'pid 201 child-201, pid 202 child-202, pid 203 child-203, pid 204 child-204' }),
    ]);
  });

  it('tells a departed row, and the same leftovers again once they were no longer shown in between', () => {
    const log = new EventLog();
    const placed = placeLeftovers([], [group(900, [], [901])], HOST);
    const rows = [...placed.carrying, ...placed.departed];
    expect(newsOf(log.next(noChange([]), [], 1_000, true, rows))).toEqual([expect.objectContaining({ id: 'pid 900', verdict: 'ghost', rows: 1, detail: 'pid 901 child-901' })]);
    log.next(noChange([]), [], 2_000, true, []);
    expect(newsOf(log.next(noChange([]), [], 3_000, true, rows)).map((e) => e.at)).toEqual([1_000, 3_000]);
  });
});

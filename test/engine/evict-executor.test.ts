// The eviction executor on a hand-driven clock, scripted probes and a scripted registry, with a
// real audit log: every outcome's exact detail, every audit line's exact fields and time, the
// guards that send nothing, what a request removed besides, and a cancel mid-run.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../src/core/reconcile.js';
import { defaultPolicy, type ClaimEntry, type Finding, type OsFacts, type RemoteHostFacts, type SessionEntry } from '../../src/core/types.js';
import { AuditLog } from '../../src/engine/audit-log.js';
import { executeEviction, READ_ONLY_DETAIL, type EvictorContext } from '../../src/engine/evict.js';
import type { Fresh } from '../../src/engine/fresh-finding.js';
import type { EngineFinding, EvictProgress, EvictRequest } from '../../src/engine/types.js';
import type { AlsoRemoved, RegistryAnswer, SourceState } from '../../src/sources/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { tempDir } from './helpers.js';
import { ScriptedSource } from './scripted-source.js';

const HOST = 'devbox';
const ACTOR = 'ana@devbox';

/** An audit log that writes for real until told to fail from its n-th line on. */
class FailingAudit extends AuditLog {
  lines = 0;
  failFrom = Infinity;
  override async append(record: Readonly<Record<string, unknown>>): Promise<void> {
    this.lines++;
    if (this.lines >= this.failFrom) throw new Error('disk full\nat write');
    return super.append(record);
  }
}

function setup(sessions: SessionEntry[], claims: ClaimEntry[] = [], state: Partial<SourceState> = {}) {
  const clock = new FakeClock();
  const probes = new FakeProbes(clock);
  const source = new ScriptedSource('reg', sessions, claims, state);
  const audit = new FailingAudit(join(tempDir(), 'evictions.jsonl'));
  const applied: Fresh[] = [];
  let stopped = false;
  let shown: Finding[] = [];
  const ctx: EvictorContext = {
    sources: [source],
    host: HOST,
    actor: ACTOR,
    readOnly: false,
    audit,
    now: () => clock.now(),
    freshContext: () => ({ policy: defaultPolicy(HOST), now: () => clock.now(), isLocal: (m) => m === HOST, known: { pids: new Map(), ports: new Map() }, probes }),
    applyFresh: (f) => applied.push(f),
    stopped: () => stopped,
    shown: () => shown,
  };
  /** The findings as the engine would show them now (probing as it would; the calls are forgotten). */
  const judge = async (): Promise<Finding[]> => {
    const pids = [...new Set(source.sessions.flatMap((s) => (typeof s.pid === 'number' ? [s.pid] : [])))];
    const facts = await probes.probePids(pids, { full: true, now: () => clock.now() });
    probes.calls.splice(0);
    shown = reconcile({ sessions: source.sessions, claims: source.claims }, { pids: facts, ports: new Map() }, clock.now(), defaultPolicy(HOST));
    return shown;
  };
  const lines = (): Record<string, unknown>[] =>
    existsSync(audit.path) ? readFileSync(audit.path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
  const run = (request: Partial<EvictRequest> & { selection: readonly Finding[] }) => executeEviction(ctx, { force: false, ...request });
  return { clock, probes, source, audit, ctx, applied, judge, lines, run, stop: () => (stopped = true) };
}

const ghost = (id: string, pid: number, fields: Partial<SessionEntry> = {}): SessionEntry => ({ source: 'reg', id, machine: HOST, pid, ...fields });
const iso = (ms: number) => new Date(ms).toISOString();
const byId = (findings: readonly Finding[], id: string) => findings.find((f) => f.id === id)!;
const also = (id: string, fields: Partial<AlsoRemoved> = {}): AlsoRemoved => ({ kind: 'session', id, change: 'removed', raw: { id, pid: 7 }, ...fields });
const json = (x: unknown) => JSON.parse(JSON.stringify(x)) as unknown;

describe('executeEviction: a ghost sent', () => {
  it('audits the intent with the evidence of the re-check (at its time) and the entry as registered, then the outcome under the same id', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200, { raw: { id: 'g2', pid: 200, extra: 'as sent' } })]);
    const shown = await h.judge();
    await h.clock.advance(5_000);
    const progress: EvictProgress[] = [];
    const summary = await h.run({ selection: [byId(shown, 'g1'), byId(shown, 'g2')], onProgress: (p) => progress.push(p) });

    expect(h.source.sent).toEqual([
      { type: 'deregister', source: 'reg', id: 'g1' },
      { type: 'deregister', source: 'reg', id: 'g2' },
    ]);
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail, r.forced])).toEqual([
      ['g1', 'evicted', undefined, false],
      ['g2', 'evicted', undefined, false],
    ]);
    expect(summary.counts).toEqual({ evicted: 2, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 });
    expect(progress.map((p) => [p.index, p.total, p.finding.id, p.phase, p.detail])).toEqual([
      [1, 2, 'g1', 'checking', undefined],
      [1, 2, 'g1', 'sending', undefined],
      [1, 2, 'g1', 'evicted', undefined],
      [2, 2, 'g2', 'checking', undefined],
      [2, 2, 'g2', 'sending', undefined],
      [2, 2, 'g2', 'evicted', undefined],
    ]);
    // Re-probed at send time, and the facts handed to the live view.
    expect(h.probes.of('full').map((c) => [c.t, c.items])).toEqual([
      [5_000, [100]],
      [5_000, [200]],
    ]);
    expect(h.applied.map((f) => [...f.pids.keys()])).toEqual([[100], [200]]);

    const [intent1, outcome1, intent2, outcome2, ...rest] = h.lines();
    expect(rest).toEqual([]);
    const fresh1 = h.applied[0]!.current!;
    expect(intent1).toEqual({
      ts: iso(h.clock.now()),
      kind: 'intent',
      id: expect.any(String),
      actor: ACTOR,
      host: HOST,
      action: { type: 'deregister', source: 'reg', id: 'g1' },
      forced: false,
      verdict: 'ghost',
      reason: fresh1.reason,
      evidence: json(fresh1.evidence),
      entry: { source: 'reg', id: 'g1', machine: HOST, pid: 100 },
    });
    expect((intent1!.evidence as { checkedAt: number }).checkedAt).toBe(h.clock.now());
    expect(outcome1).toEqual({ ts: iso(h.clock.now()), kind: 'outcome', id: intent1!.id, outcome: 'evicted' });
    expect(intent2).toMatchObject({ kind: 'intent', entry: { id: 'g2', pid: 200, extra: 'as sent' } });
    expect(outcome2).toMatchObject({ kind: 'outcome', id: intent2!.id, outcome: 'evicted' });
    expect(intent2!.id).not.toBe(intent1!.id);
  });

  it.each<[string, RegistryAnswer | Error, string, string | undefined]>([
    ['evicted, with where it went', { outcome: 'evicted', detail: 'moved to /trash/g1.json' }, 'evicted', 'moved to /trash/g1.json'],
    ['refused, in its words', { outcome: 'refused', error: 'not yours to remove' }, 'refused', 'not yours to remove'],
    ['failed', { outcome: 'failed', error: 'timed out after 2 s' }, 'failed', 'timed out after 2 s'],
    ['already gone', { outcome: 'already-gone' }, 'already-gone', 'the registry no longer had it'],
    ['a request that throws', new Error('socket closed\n    at send'), 'failed', 'socket closed'],
  ])('the registry answers %s: that outcome and detail, in the result, the progress and the outcome line', async (_, answer, outcome, detail) => {
    const h = setup([ghost('g1', 100)]);
    h.source.answer = answer;
    const progress: EvictProgress[] = [];
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')], onProgress: (p) => progress.push(p) });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([[outcome, detail]]);
    expect(summary.counts[outcome as 'evicted']).toBe(1);
    expect(progress.at(-1)).toMatchObject({ phase: outcome, detail });
    const [, line, ...rest] = h.lines();
    expect(rest).toEqual([]);
    expect(line).toEqual({ ts: iso(h.clock.now()), kind: 'outcome', id: expect.any(String), outcome, ...(detail === undefined ? {} : { detail }) });
  });
});

describe('executeEviction: force', () => {
  it('a live entry without force is not planned (needs force); with force it is sent and audited as forced', async () => {
    const h = setup([ghost('l1', 100), ghost('g1', 200)]);
    h.probes.processes.set(100, { kill: 'ok', startedAt: h.clock.now() - 60_000 });
    const shown = await h.judge();
    const live = byId(shown, 'l1');
    expect(live.verdict).toBe('live');
    const plain = await h.run({ selection: [live, byId(shown, 'g1')] });
    expect(plain.needsForce).toEqual([live]);
    expect(plain.results.map((r) => [r.finding.id, r.outcome, r.forced])).toEqual([['g1', 'evicted', false]]);
    expect(h.source.sent).toEqual([{ type: 'deregister', source: 'reg', id: 'g1' }]);

    const forced = await h.run({ selection: [live], force: true });
    expect(forced.needsForce).toEqual([]);
    expect(forced.results.map((r) => [r.finding.id, r.outcome, r.forced])).toEqual([['l1', 'evicted', true]]);
    expect(h.lines().filter((l) => l.kind === 'intent').map((l) => [(l.action as { id: string }).id, l.forced, l.verdict])).toEqual([
      ['g1', false, 'ghost'],
      ['l1', true, 'live'],
    ]);
  });
});

describe('executeEviction: what a request removed besides', () => {
  it('one more: said in the detail, audited with the verdict it was shown with; one not shown: audited with nulls', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    h.source.answer = { outcome: 'evicted', detail: 'moved to /trash/g1.json', alsoRemoved: [also('g2', { raw: { id: 'g2', pid: 200 } }), also('unseen', { change: 'marked stopped', after: { id: 'unseen', status: 'stopped' } })] };
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['evicted', 'moved to /trash/g1.json; the registry also removed 2 other dead records']]);
    const [intent, , a1, a2, ...rest] = h.lines();
    expect(rest).toEqual([]);
    const g2 = byId(shown, 'g2');
    expect(a1).toEqual({
      ts: iso(h.clock.now()),
      kind: 'also-removed',
      id: intent!.id,
      source: 'reg',
      removed: 'session',
      removedId: 'g2',
      change: 'removed',
      verdict: 'ghost',
      reason: g2.reason,
      evidence: json(g2.evidence),
      entry: { id: 'g2', pid: 200 },
    });
    expect(a2).toEqual({
      ts: iso(h.clock.now()),
      kind: 'also-removed',
      id: intent!.id,
      source: 'reg',
      removed: 'session',
      removedId: 'unseen',
      change: 'marked stopped',
      verdict: null,
      reason: null,
      evidence: null,
      entry: { id: 'unseen', pid: 7 },
      after: { id: 'unseen', status: 'stopped' },
    });
    expect(summary.alsoRemoved).toEqual([
      { source: 'reg', kind: 'session', id: 'g2', pid: 200, change: 'removed', by: byId(shown, 'g1'), selected: false },
      { source: 'reg', kind: 'session', id: 'unseen', pid: 7, change: 'marked stopped', by: byId(shown, 'g1'), selected: false },
    ]);
  });

  it('one: "1 other dead record"; a claim removed besides is audited with its key', async () => {
    const h = setup([ghost('g1', 100)]);
    h.source.answer = { outcome: 'refused', error: 'kept: still registered', alsoRemoved: [also('/repo', { kind: 'claim', key: 'k9' })] };
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['refused', 'kept: still registered; the registry also removed 1 other dead record']]);
    expect(h.lines()[2]).toMatchObject({ kind: 'also-removed', removed: 'claim', removedId: '/repo', claim: 'k9' });
  });

  it('an eviction with no detail of its own that removed others: only that, as the detail', async () => {
    const h = setup([ghost('g1', 100)]);
    h.source.answer = { outcome: 'evicted', alsoRemoved: [also('a'), also('b'), also('c')] };
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results[0]?.detail).toBe('the registry also removed 3 other dead records');
    expect(h.lines().filter((l) => l.kind === 'also-removed').map((l) => l.removedId)).toEqual(['a', 'b', 'c']);
  });

  it('without the shown findings (or a record without its raw form): audited with nulls, no pid in the summary', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    h.source.answer = { outcome: 'evicted', alsoRemoved: [also('g2', { raw: undefined })] };
    const summary = await executeEviction({ ...h.ctx, shown: undefined }, { selection: [byId(shown, 'g1')], force: false });
    expect(h.lines()[2]).toMatchObject({ kind: 'also-removed', removedId: 'g2', verdict: null, reason: null, evidence: null });
    expect(summary.alsoRemoved).toEqual([{ source: 'reg', kind: 'session', id: 'g2', pid: undefined, change: 'removed', by: byId(shown, 'g1'), selected: false }]);
  });

  it('an "already gone" answer removed nothing besides, whatever it lists', async () => {
    const h = setup([ghost('g1', 100)]);
    h.source.answer = { outcome: 'already-gone', alsoRemoved: [also('x')] } as unknown as RegistryAnswer;
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['already-gone', 'the registry no longer had it']]);
    expect(summary.alsoRemoved).toBeUndefined();
    expect(h.lines().map((l) => l.kind)).toEqual(['intent', 'outcome']);
  });

  it('a selected entry an earlier request took with it: nothing sent for it, its result says which request removed it', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    h.source.answer = { outcome: 'evicted', alsoRemoved: [also('g2', { raw: { id: 'g2', pid: 200 } })] };
    const summary = await h.run({ selection: [byId(shown, 'g1'), byId(shown, 'g2')] });
    expect(h.source.sent).toEqual([{ type: 'deregister', source: 'reg', id: 'g1' }]);
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['g1', 'evicted', 'the registry also removed 1 other dead record'],
      ['g2', 'evicted', 'removed by the request sent for g1 (removed; audited there as also-removed)'],
    ]);
    expect(summary.alsoRemoved).toEqual([{ source: 'reg', kind: 'session', id: 'g2', pid: 200, change: 'removed', by: byId(shown, 'g1'), selected: true }]);
    expect(h.lines().map((l) => l.kind)).toEqual(['intent', 'outcome', 'also-removed']);
  });
});

describe('executeEviction: an audit log that cannot be written', () => {
  it('the intent: nothing is sent, the entry failed with why', async () => {
    const h = setup([ghost('g1', 100)]);
    h.audit.failFrom = 1;
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(h.source.sent).toEqual([]);
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', `cannot write the audit log (${h.audit.path}): disk full`]]);
  });

  it('the outcome: the result keeps what the registry did and says the line is missing', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    h.audit.failFrom = 2;
    h.source.answers.set('g2', { outcome: 'evicted', detail: 'moved to /trash/g2.json' });
    const summary = await h.run({ selection: [byId(shown, 'g1'), byId(shown, 'g2')] });
    const missing = `not written to the audit log (${h.audit.path}): disk full`;
    // g1's outcome line failed; g2's intent line fails too, so g2 is not sent.
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([
      ['evicted', missing],
      ['failed', `cannot write the audit log (${h.audit.path}): disk full`],
    ]);
  });

  it('the outcome of a request with a detail: both, the missing line in brackets; the also-removed lines are not tried after it', async () => {
    const h = setup([ghost('g1', 100)]);
    h.audit.failFrom = 2;
    h.source.answer = { outcome: 'evicted', detail: 'moved to /trash/g1.json', alsoRemoved: [also('x')] };
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results[0]?.detail).toBe(`moved to /trash/g1.json; the registry also removed 1 other dead record (not written to the audit log (${h.audit.path}): disk full)`);
    expect(h.audit.lines).toBe(2);
  });

  it('a skip line: the skip stands, its detail says the line is missing', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.source.sessions = [];
    h.audit.failFrom = 1;
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['already-gone', `no longer in the registry (not written to the audit log (${h.audit.path}): disk full)`]]);
  });
});

describe('executeEviction: re-checked and not sent', () => {
  it('an entry that left the registry: already gone, the skip audited with the planned verdict and null for now', async () => {
    const h = setup([ghost('g1', 100, { raw: { id: 'g1', pid: 100 } })]);
    const shown = await h.judge();
    h.source.sessions = [];
    await h.clock.advance(1_000);
    const g1 = byId(shown, 'g1');
    const summary = await h.run({ selection: [g1] });
    expect(h.source.sent).toEqual([]);
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['already-gone', 'no longer in the registry']]);
    expect(h.lines()).toEqual([
      {
        ts: iso(h.clock.now()),
        kind: 'skip',
        id: expect.any(String),
        actor: ACTOR,
        host: HOST,
        action: { type: 'deregister', source: 'reg', id: 'g1' },
        forced: false,
        outcome: 'already-gone',
        detail: 'no longer in the registry',
        planned: { verdict: 'ghost', reason: g1.reason },
        verdict: null,
        reason: null,
        evidence: null,
        entry: { id: 'g1', pid: 100 },
      },
    ]);
  });

  it('an entry that turned live: skipped, said once, the skip audited with what it is now', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.probes.processes.set(100, { kill: 'ok', startedAt: h.clock.now() - 60_000 });
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(h.source.sent).toEqual([]);
    const now = h.applied[0]!.current!;
    expect(now.verdict).toBe('live');
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['skipped', `it is now live (was ghost): ${now.reason}`]]);
    expect(h.lines()[0]).toMatchObject({ kind: 'skip', outcome: 'skipped', verdict: 'live', reason: now.reason, evidence: json(now.evidence), entry: { id: 'g1', pid: 100 } });
  });

  it('a new pid that is live: the identity change, then what it is now', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.source.sessions = [ghost('g1', 200)];
    h.probes.processes.set(200, { kill: 'ok', startedAt: h.clock.now() - 60_000 });
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    const now = h.applied[0]!.current!;
    expect(summary.results[0]?.detail).toBe(`the entry changed: pid 100 is now 200; it is now live (was ghost): ${now.reason}`);
  });

  it('a new pid that is gone too: the identity change alone', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.source.sessions = [ghost('g1', 300)];
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(h.source.sent).toEqual([]);
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['skipped', 'the entry changed: pid 100 is now 300']]);
  });
});

describe('executeEviction: guards that send nothing and write nothing', () => {
  it('read-only: every selected row fails with the reason, its progress said in order', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    const progress: EvictProgress[] = [];
    const summary = await executeEviction({ ...h.ctx, readOnly: true }, { selection: [byId(shown, 'g1'), byId(shown, 'g2')], force: false, onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([
      { index: 1, total: 2, finding: byId(shown, 'g1'), phase: 'failed', detail: READ_ONLY_DETAIL },
      { index: 2, total: 2, finding: byId(shown, 'g2'), phase: 'failed', detail: READ_ONLY_DETAIL },
    ]);
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['g1', 'failed', 'read-only mode: nothing is evicted'],
      ['g2', 'failed', 'read-only mode: nothing is evicted'],
    ]);
    expect(h.source.sent).toEqual([]);
    expect(h.lines()).toEqual([]);
  });

  it('read-only: a row that would need force is told the same, in plan order (claims first), and nothing needs force', async () => {
    const h = setup([ghost('l1', 100), ghost('g1', 200)], [{ source: 'reg', resource: '/repo', holder: 'g1' }]);
    h.probes.processes.set(100, { kill: 'ok', startedAt: h.clock.now() - 60_000 });
    const shown = await h.judge();
    const live = byId(shown, 'l1');
    expect(live.evictable).toBe(false);
    const summary = await executeEviction({ ...h.ctx, readOnly: true }, { selection: [live, byId(shown, 'g1'), byId(shown, '/repo')], force: false });
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail, r.forced])).toEqual([
      ['/repo', 'failed', READ_ONLY_DETAIL, false],
      ['l1', 'failed', READ_ONLY_DETAIL, true],
      ['g1', 'failed', READ_ONLY_DETAIL, false],
    ]);
    expect(summary.needsForce).toEqual([]);
    expect(summary.counts).toEqual({ evicted: 0, 'already-gone': 0, skipped: 0, refused: 0, failed: 3 });
    expect(h.probes.calls).toEqual([]);
    expect(h.lines()).toEqual([]);
  });

  it('ghostwatch stopping: failed, "stopped before it was sent"', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.stop();
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', 'ghostwatch stopped before it was sent']]);
    expect(h.source.sent).toEqual([]);
    expect(h.probes.calls).toEqual([]);
    expect(h.lines()).toEqual([]);
  });

  it('a row of a source the engine does not have: failed, named', async () => {
    const h = setup([ghost('g1', 100)]);
    const row = { ...byId(await h.judge(), 'g1'), source: 'elsewhere' };
    const summary = await h.run({ selection: [row] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', 'no source named elsewhere']]);
    expect(h.source.sent).toEqual([]);
  });

  it.each([
    [{ available: false, why: 'the daemon is busy' }, 'reg cannot evict now: the daemon is busy'],
    [{ available: false }, 'reg cannot evict now: unavailable'],
  ])('a registry that cannot evict now (%o): failed with why, not probed', async (eviction, detail) => {
    const h = setup([ghost('g1', 100)], [], { eviction });
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', detail]]);
    expect(h.probes.calls).toEqual([]);
    expect(h.source.sent).toEqual([]);
    expect(h.lines()).toEqual([]);
  });

  it('a registry that evicts with a note: sent as any other', async () => {
    const h = setup([ghost('g1', 100)], [], { eviction: { available: true, note: 'prunes every dead record' } });
    const summary = await h.run({ selection: [byId(await h.judge(), 'g1')] });
    expect(summary.results.map((r) => r.outcome)).toEqual(['evicted']);
  });

  it('a registry that cannot be re-read: failed, the re-check named, nothing written', async () => {
    const h = setup([ghost('g1', 100)]);
    const shown = await h.judge();
    h.source.rereads = false;
    const summary = await h.run({ selection: [byId(shown, 'g1')] });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', 'the re-check failed, so nothing was sent: could not re-read the registry right before sending']]);
    expect(h.lines()).toEqual([]);
  });
});

describe('executeEviction: cancel', () => {
  it('after the first send: the rest is not sent, one cancel line names it', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200), ghost('g3', 300)]);
    const shown = await h.judge();
    const ctl = new AbortController();
    h.source.onSend = () => ctl.abort();
    const selection = ['g1', 'g2', 'g3'].map((id) => byId(shown, id));
    const summary = await h.run({ selection, signal: ctl.signal });
    expect(h.source.sent).toEqual([{ type: 'deregister', source: 'reg', id: 'g1' }]);
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([['g1', 'evicted']]);
    expect(summary.notSent?.map((f) => f.id)).toEqual(['g2', 'g3']);
    const lines = h.lines();
    expect(lines.map((l) => l.kind)).toEqual(['intent', 'outcome', 'cancel']);
    expect(lines[2]).toEqual({
      ts: iso(h.clock.now()),
      kind: 'cancel',
      id: expect.any(String),
      actor: ACTOR,
      host: HOST,
      detail: 'cancelled after 1 of 3; 2 not sent',
      notSent: [
        { type: 'deregister', source: 'reg', id: 'g2' },
        { type: 'deregister', source: 'reg', id: 'g3' },
      ],
    });
  });

  it("during the second entry's re-check: the first stands, the rest from the second on is not sent; what the first removed besides is marked selected", async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200), ghost('g3', 300)]);
    const shown = await h.judge();
    const ctl = new AbortController();
    let rereads = 0;
    h.source.onResync = () => {
      if (++rereads === 2) ctl.abort();
    };
    h.source.answers.set('g1', { outcome: 'evicted', alsoRemoved: [also('g3', { raw: { id: 'g3', pid: 300 } })] });
    const summary = await h.run({ selection: ['g1', 'g2', 'g3'].map((id) => byId(shown, id)), signal: ctl.signal });
    expect(h.source.sent).toEqual([{ type: 'deregister', source: 'reg', id: 'g1' }]);
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([['g1', 'evicted']]);
    expect(summary.notSent?.map((f) => f.id)).toEqual(['g2', 'g3']);
    expect(summary.alsoRemoved).toEqual([{ source: 'reg', kind: 'session', id: 'g3', pid: 300, change: 'removed', by: byId(shown, 'g1'), selected: true }]);
    expect(h.lines().at(-1)).toMatchObject({ kind: 'cancel', detail: 'cancelled after 1 of 3; 2 not sent' });
  });

  it('during the re-check: that entry is neither audited nor sent', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    const ctl = new AbortController();
    h.source.onResync = () => ctl.abort();
    const summary = await h.run({ selection: [byId(shown, 'g1'), byId(shown, 'g2')], signal: ctl.signal });
    expect(h.source.sent).toEqual([]);
    expect(summary.results).toEqual([]);
    expect(summary.notSent?.map((f) => f.id)).toEqual(['g1', 'g2']);
    expect(h.lines().map((l) => [l.kind, l.detail])).toEqual([['cancel', 'cancelled after 0 of 2; 2 not sent']]);
  });
});

describe('executeEviction: stale rows are never sent', () => {
  it.each<[string, Partial<SourceState>, string]>([
    ['its cause', { status: 'unreachable', cause: 'connection refused', lastError: 'ECONNREFUSED' }, 'reg is not connected (connection refused)'],
    ['else its last error', { status: 'unreachable', lastError: 'ECONNREFUSED' }, 'reg is not connected (ECONNREFUSED)'],
    ['else its status', { status: 'auth-refused' }, 'reg is not connected (auth-refused)'],
  ])('a row of a registry not reading, forced or not: skipped with %s, nothing probed, written or sent', async (_, state, why) => {
    const h = setup([ghost('g1', 100)], [], state);
    const row = byId(await h.judge(), 'g1');
    for (const force of [false, true]) {
      const summary = await h.run({ selection: [row], force });
      expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['skipped', `stale: ${why}; nothing was sent`]]);
      expect(summary.counts.skipped).toBe(1);
    }
    expect(h.probes.calls).toEqual([]);
    expect(h.source.sent).toEqual([]);
    expect(h.lines()).toEqual([]);
  });

  it('a row chosen while stale, its registry reading again: skipped, look at it again', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    const stale = { ...byId(shown, 'g1'), stale: { source: 'reg', since: 0, why: 'connection dropped' } } as EngineFinding;
    const summary = await h.run({ selection: [stale, byId(shown, 'g2')] });
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['g1', 'skipped', 'stale: it was chosen while stale; look at it again; nothing was sent'],
      ['g2', 'evicted', undefined],
    ]);
    expect(h.source.sent).toEqual([{ type: 'deregister', source: 'reg', id: 'g2' }]);
    expect(h.probes.of('full').map((c) => c.items)).toEqual([[200]]);
  });
});

describe('executeEviction: a progress display that throws', () => {
  it('does not stop the run or its audit trail', async () => {
    const h = setup([ghost('g1', 100), ghost('g2', 200)]);
    const shown = await h.judge();
    let calls = 0;
    const summary = await h.run({
      selection: [byId(shown, 'g1'), byId(shown, 'g2')],
      onProgress: () => {
        calls++;
        throw new Error('the screen is gone');
      },
    });
    expect(calls).toBe(6);
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([
      ['g1', 'evicted'],
      ['g2', 'evicted'],
    ]);
    expect(h.lines().map((l) => l.kind)).toEqual(['intent', 'outcome', 'intent', 'outcome']);
  });
});

describe('executeEviction: an entry verified over ssh', () => {
  it('is re-probed over its host and audited with the host its facts came from and how (intent and skip alike)', async () => {
    const FAR = 'build-1';
    const h = setup([ghost('g1', 100, { machine: FAR }), ghost('g2', 200, { machine: FAR })]);
    const far = new FakeProbes(h.clock);
    const hostFacts = (facts: Pick<OsFacts, 'pids' | 'ports'>): RemoteHostFacts => ({ machine: FAR, transport: 'ssh', state: 'up', facts });
    const ctx: EvictorContext = {
      ...h.ctx,
      freshContext: () => ({ ...h.ctx.freshContext(), remote: (m) => (m === FAR ? { provider: far, known: { pids: new Map(), ports: new Map() }, isOn: (x) => x === FAR, hostFacts } : undefined) }),
    };
    const facts = await far.probePids([100, 200], { full: true, now: () => h.clock.now() });
    far.calls.splice(0);
    const shown = reconcile({ sessions: h.source.sessions, claims: [] }, { pids: new Map(), ports: new Map(), remotes: [hostFacts({ pids: facts, ports: new Map() })] }, h.clock.now(), defaultPolicy(HOST));
    expect(shown.map((f) => [f.id, f.verdict, f.evidence.host.ssh?.host])).toEqual([
      ['g1', 'ghost', FAR],
      ['g2', 'ghost', FAR],
    ]);
    // g2's process is back on build-1 by the time it is re-checked.
    far.processes.set(200, { kill: 'ok', startedAt: h.clock.now() });
    const summary = await executeEviction(ctx, { selection: shown, force: false });
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([
      ['g1', 'evicted'],
      ['g2', 'skipped'],
    ]);
    expect(h.probes.calls).toEqual([]);
    expect(far.of('full').map((c) => c.items)).toEqual([[100], [200]]);
    expect(h.applied.map((f) => f.remoteHost)).toEqual([FAR, FAR]);
    const [intent, outcome, skip, ...rest] = h.lines();
    expect(rest).toEqual([]);
    expect(intent).toMatchObject({ kind: 'intent', actor: ACTOR, host: HOST, via: `ssh ${FAR}`, remoteHost: FAR, transport: 'ssh', action: { id: 'g1' }, verdict: 'ghost' });
    expect(outcome).toEqual({ ts: iso(h.clock.now()), kind: 'outcome', id: intent!.id, outcome: 'evicted' });
    expect(skip).toMatchObject({ kind: 'skip', via: `ssh ${FAR}`, remoteHost: FAR, transport: 'ssh', action: { id: 'g2' }, verdict: 'live' });
  });
});

describe('executeEviction: a claim removed besides, by its key', () => {
  it('a selected claim that an earlier release took with it is matched by its key: not sent, and its also-removed line has the verdict it was shown with', async () => {
    const h = setup([ghost('g1', 100)], [
      { source: 'reg', resource: '/repo', key: 'k1', holder: 'g1' },
      { source: 'reg', resource: '/repo', key: 'k2', holder: 'g1' },
    ]);
    const shown = await h.judge();
    const claims = shown.filter((f) => f.kind === 'claim');
    expect(claims.map((c) => [c.entry.key, c.verdict])).toEqual([
      ['k1', 'stale-claim'],
      ['k2', 'stale-claim'],
    ]);
    h.source.answer = { outcome: 'evicted', alsoRemoved: [also('/repo', { kind: 'claim', key: 'k2', raw: { resource: '/repo', key: 'k2' } })] };
    const summary = await h.run({ selection: claims });
    expect(h.source.sent).toHaveLength(1);
    expect(summary.results.map((r) => [(r.finding.entry as ClaimEntry).key, r.outcome, r.detail])).toEqual([
      ['k1', 'evicted', 'the registry also removed 1 other dead record'],
      ['k2', 'evicted', 'removed by the request sent for /repo (removed; audited there as also-removed)'],
    ]);
    expect(summary.alsoRemoved).toEqual([{ source: 'reg', kind: 'claim', id: '/repo', pid: undefined, change: 'removed', by: claims[0], selected: true }]);
    const line = h.lines().find((l) => l.kind === 'also-removed');
    expect(line).toMatchObject({ removed: 'claim', removedId: '/repo', claim: 'k2', verdict: 'stale-claim', reason: claims[1]!.reason });
  });
});

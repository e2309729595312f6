// A row that comes out of a recompute exactly as before keeps its object (so the published rows
// of a quiet registry are not copied anew on every recompute); any difference at all, however
// deep, makes a new one.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Finding, SessionEntry } from '../../src/core/types.js';
import { createEngine } from '../../src/engine/index.js';
import { reuseUnchanged } from '../../src/engine/row-changes.js';
import type { EngineFinding } from '../../src/engine/types.js';
import { FakeClock } from './fake-clock.js';
import { FakeProbes } from './fake-probes.js';
import { FakeSource } from './fake-source.js';
import { onCleanup, tempDir } from './helpers.js';

const HOST = 'fakehost';
const entry = (id: string, pid = 100): SessionEntry => ({ source: 'fake', id, machine: HOST, pid, cwd: '/w' });
/** A new object each call, the same content for the same arguments. */
function row(id: string, over: Partial<EngineFinding> = {}, evidence: Partial<Finding['evidence']> = {}): EngineFinding {
  return {
    kind: 'session',
    source: 'fake',
    id,
    verdict: 'live',
    problem: false,
    evictable: false,
    reason: `pid 100 is alive`,
    note: undefined,
    evidence: { host: { machine: HOST, local: true, matchedAs: 'exact' }, kill: 'ok', checkedAt: 5, siblings: ['x', 'y'], process: { pid: 100, ppid: 1, name: 'pi', cmd: 'pi --x' }, ...evidence },
    entry: entry(id),
    ...over,
  } as EngineFinding;
}

describe('reuseUnchanged', () => {
  it('rows equal in every field keep the previous objects; all equal keeps the previous array', () => {
    const prev = [row('a'), row('b')];
    const next = [row('a'), row('b')];
    expect(reuseUnchanged(prev, next)).toBe(prev);
  });

  it.each<[string, EngineFinding]>([
    ['the verdict', row('b', { verdict: 'ghost' })],
    ['the reason', row('b', { reason: 'pid 100 is alive!' })],
    ['the note', row('b', { note: 'shared pid' })],
    ['evictable', row('b', { evictable: true })],
    ['a checked time', row('b', {}, { checkedAt: 6 })],
    ['a nested field (the process name)', row('b', {}, { process: { pid: 100, ppid: 1, name: 'node', cmd: 'pi --x' } })],
    ['an array item (a sibling)', row('b', {}, { siblings: ['x', 'z'] })],
    ['an array length', row('b', {}, { siblings: ['x'] })],
    ['a field added', row('b', {}, { killError: 'EPERM' })],
    ['a field set to undefined that was absent', row('b', { checking: undefined })],
    ['the checking mark', row('b', { checking: true })],
    ['the dead-since mark', row('b', { deadSince: 3 })],
    ['the stale mark', row('b', { stale: { source: 'fake', since: 1, why: 'closed' } })],
    ['the entry', row('b', { entry: { ...entry('b'), cwd: '/elsewhere' } })],
  ])('a row that differs in %s is the new object; the others stay', (_what, changed) => {
    const prev = [row('a'), row('b'), row('c')];
    const out = reuseUnchanged(prev, [row('a'), changed, row('c')]);
    expect(out[0]).toBe(prev[0]);
    expect(out[1]).toBe(changed);
    expect(out[2]).toBe(prev[2]);
  });

  it('rows that moved are found by key; a new row and a new kind of the same id are new', () => {
    const prev = [row('a'), row('b'), row('c')];
    const claim = row('b', { kind: 'claim' } as Partial<EngineFinding>);
    const next = [row('c'), row('a'), row('d'), claim];
    const out = reuseUnchanged(prev, next);
    expect(out).toEqual(next);
    expect(out[0]).toBe(prev[2]);
    expect(out[1]).toBe(prev[0]);
    expect(out[2]).toBe(next[2]);
    expect(out[3]).toBe(claim);
  });

  it('a row left out makes a new array even when every other row is the same', () => {
    const prev = [row('a'), row('b')];
    const out = reuseUnchanged(prev, [row('a')]);
    expect(out).not.toBe(prev);
    expect(out).toEqual([prev[0]]);
    expect(out[0]).toBe(prev[0]);
  });

  it('rows of the same id that swapped places are matched by source and by kind, not by position', () => {
    const fromA = row('x');
    const fromB = row('x', { source: 'other' });
    const claim = row('x', { kind: 'claim' } as Partial<EngineFinding>);
    for (const prev of [
      [fromA, fromB],
      [fromA, claim],
    ]) {
      const next = [prev[1]!, prev[0]!].map((f) => ({ ...f }));
      const out = reuseUnchanged(prev, next);
      expect(out).toEqual(next);
      expect(out[0]).toBe(prev[1]);
      expect(out[1]).toBe(prev[0]);
    }
  });

  it('a field null or undefined before and an object now, or the other way round, is a change', () => {
    const withNull = () => row('b', {}, { port: null } as never);
    const withUndefined = () => row('b', {}, { port: undefined });
    const withPort = () => row('b', {}, { port: { port: 8000, result: 'open' } });
    for (const [before, now] of [
      [withNull, withPort],
      [withPort, withNull],
      [withUndefined, withPort],
      [withPort, withUndefined],
    ]) {
      const prev = [row('a'), before!()];
      const changed = now!();
      const out = reuseUnchanged(prev, [row('a'), changed]);
      expect(out[0]).toBe(prev[0]);
      expect(out[1]).toBe(changed);
    }
  });

  it('a field set to undefined is a field: one undefined field in place of another, or in another order, is told apart', () => {
    const prev = [row('a', {}, { port: undefined })];
    const renamed = row('a', {}, { state: undefined });
    expect(reuseUnchanged(prev, [renamed])[0]).toBe(renamed);
    // The same fields listed in another order are the same row.
    const { host, ...rest } = prev[0]!.evidence;
    const reordered = { ...prev[0]!, evidence: { ...rest, host } } as EngineFinding;
    expect(reuseUnchanged(prev, [reordered])[0]).toBe(prev[0]);
  });

  it('a list and an object with its indices as keys, or an object of another prototype with the same fields, are changes', () => {
    const prev = [row('a')];
    const asObject = row('a', {}, { siblings: { 0: 'x', 1: 'y' } as never });
    expect(reuseUnchanged(prev, [asObject])[0]).toBe(asObject);
    const noPrototype = row('a', {}, { process: Object.assign(Object.create(null) as object, { pid: 100, ppid: 1, name: 'pi', cmd: 'pi --x' }) as never });
    expect(reuseUnchanged(prev, [noPrototype])[0]).toBe(noPrototype);
    expect(reuseUnchanged(prev, [row('a')])[0]).toBe(prev[0]);
  });

  it('the new array is never changed: a copy of it carries the previous objects', () => {
    const prev = [row('a'), row('b')];
    const next = [row('a'), row('c')];
    const given = [...next];
    const out = reuseUnchanged(prev, next);
    expect(next).toEqual(given);
    expect(next[0]).toBe(given[0]);
    expect(out).not.toBe(next);
    expect(out[0]).toBe(prev[0]);
  });

  it('rows that are the previous objects themselves, or equal to them: the previous array', () => {
    const prev = [row('a'), row('b')];
    expect(reuseUnchanged(prev, [prev[0]!, row('b')])).toBe(prev);
    expect(reuseUnchanged(prev, [...prev])).toBe(prev);
  });

  it('nothing before: the new rows as they are', () => {
    const next = [row('a')];
    expect(reuseUnchanged([], next)).toBe(next);
    expect(reuseUnchanged([row('a')], [])).toEqual([]);
  });
});

describe('the engine publishes the previous object of a row that did not change', () => {
  it('another row turning ghost leaves the live row object as it was; a changed entry makes a new row', async () => {
    const clock = new FakeClock();
    const probes = new FakeProbes(clock);
    const source = new FakeSource(clock);
    const engine = createEngine({ sources: [source], hostName: HOST, auditLogPath: join(tempDir(), 'audit', 'evictions.jsonl'), probes, clock });
    onCleanup(() => engine.stop());
    probes.processes.set(100, { kill: 'ok', startedAt: clock.now() - 5_000 });
    probes.processes.set(200, { kill: 'ok', startedAt: clock.now() - 5_000 });
    engine.start();
    source.set([entry('a1', 100), entry('a2', 200)]);
    await clock.advance(5_000);
    expect(engine.getSnapshot().settled).toBe(true);
    const before = engine.getSnapshot();
    const a1 = before.findings.find((f) => f.id === 'a1')!;
    expect(a1.verdict).toBe('live');

    probes.processes.delete(200);
    await clock.advance(5_000);
    const after = engine.getSnapshot();
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.findings.find((f) => f.id === 'a2')?.verdict).toBe('ghost');
    expect(after.findings.find((f) => f.id === 'a1')).toBe(a1);

    source.set([{ ...entry('a1', 100), cwd: '/moved' }, entry('a2', 200)]);
    await clock.advance(1_000);
    const moved = engine.getSnapshot().findings.find((f) => f.id === 'a1')!;
    expect(moved).not.toBe(a1);
    expect(moved.kind === 'session' && moved.entry.cwd).toBe('/moved');
  });
});

// Fact merging field by field: each difference reconcile can see is a change (a new object),
// each it cannot is not (the previous object kept), and the edges are exact: a result as old as
// what is known still counts, start times agree within 2 s and not a millisecond more.
import { describe, expect, it } from 'vitest';
import type { PidFacts, PortFacts, ProcessInfo } from '../../src/core/types.js';
import { mergeFull, mergeKill, mergePort, mergeProcess, withProcessOf } from '../../src/engine/fact-merge.js';

const facts = (f: Partial<PidFacts> & Pick<PidFacts, 'kill'>): PidFacts => ({ pid: 100, checkedAt: 1000, ...f });
const row: ProcessInfo = { pid: 100, ppid: 1, name: 'pi', cmd: 'pi --serve', startedAt: 500 };

describe('mergeKill, exactly', () => {
  it('a result as old as the known one still counts; only an older one is ignored', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500, checkedAt: 1000 });
    expect(mergeKill(prev, facts({ kill: 'ESRCH', checkedAt: 1000 }))).toMatchObject({ kind: 'store', facts: { kill: 'ESRCH' } });
    expect(mergeKill(prev, facts({ kill: 'ESRCH', checkedAt: 999 }))).toEqual({ kind: 'keep' });
  });

  it('ok -> EPERM (the process changed owner): stored, its state, start time, process and hidden details kept', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500, process: row, detailsHidden: 'hidepid' });
    expect(mergeKill(prev, facts({ kill: 'EPERM', checkedAt: 2000 }))).toEqual({
      kind: 'store',
      facts: { pid: 100, kill: 'EPERM', error: undefined, state: 'S', startedAt: 500, detailsHidden: 'hidepid', checkedAt: 2000, process: row },
    });
    expect(mergeKill(facts({ kill: 'EPERM', state: 'S' }), facts({ kill: 'EPERM', checkedAt: 2000 }))).toEqual({ kind: 'keep' });
  });

  it('a failing probe whose error changed is a change; the same error is not', () => {
    const prev = facts({ kill: 'error', error: 'EINVAL' });
    expect(mergeKill(prev, facts({ kill: 'error', error: 'EINVAL', checkedAt: 2000 }))).toEqual({ kind: 'keep' });
    expect(mergeKill(prev, facts({ kill: 'error', error: 'EIO', checkedAt: 2000 }))).toMatchObject({ kind: 'store', facts: { error: 'EIO' } });
    expect(mergeKill(facts({ kill: 'ESRCH' }), facts({ kill: 'error', error: 'EIO', checkedAt: 2000 }))).toMatchObject({ kind: 'store', facts: { kill: 'error' } });
    expect(mergeKill(undefined, facts({ kill: 'ESRCH', checkedAt: 2000 }))).toMatchObject({ kind: 'store', facts: { kill: 'ESRCH', checkedAt: 2000 } });
  });
});

describe('mergeFull, field by field', () => {
  const prev = facts({ kill: 'ok', state: 'S', startedAt: 500, checkedAt: 1000 });

  it('an older full result is ignored even when it differs; one as old as the known one counts', () => {
    expect(mergeFull(prev, facts({ kill: 'ESRCH', checkedAt: 999 }))).toBeUndefined();
    expect(mergeFull(prev, facts({ kill: 'ESRCH', checkedAt: 1000 }))).toMatchObject({ kill: 'ESRCH' });
  });

  it.each<[string, Partial<PidFacts>]>([
    ['kill', { kill: 'EPERM' }],
    ['error', { error: 'EIO' }],
    ['start time', { startedAt: 501 }],
    ['hidden details', { detailsHidden: 'hidepid=2' }],
    ['state known -> unknown', { state: undefined }],
    ['state -> zombie', { state: 'Z' }],
  ])('a different %s is a change', (_, change) => {
    const next = { ...prev, checkedAt: 2000, ...change };
    expect(mergeFull(prev, next)).toEqual({ ...next, process: undefined, detailsHidden: next.detailsHidden, error: next.error });
  });

  it('a gone pid probed again and still gone (no state either time) is no change', () => {
    const gone = facts({ kill: 'ESRCH', checkedAt: 1000 });
    expect(mergeFull(gone, facts({ kill: 'ESRCH', checkedAt: 2000 }))).toBeUndefined();
    const unknown = facts({ kill: 'EPERM', startedAt: 500, detailsHidden: 'hidepid=2' });
    expect(mergeFull(unknown, { ...unknown, checkedAt: 2000 })).toBeUndefined();
  });

  it('state unknown -> known is a change; D <-> R is not', () => {
    const unknown = facts({ kill: 'ok', startedAt: 500 });
    expect(mergeFull(unknown, { ...unknown, state: 'S', checkedAt: 2000 })).toMatchObject({ state: 'S' });
    const busy = facts({ kill: 'ok', state: 'D', startedAt: 500 });
    expect(mergeFull(busy, { ...busy, state: 'R', checkedAt: 2000 })).toBeUndefined();
    const zombie = facts({ kill: 'ok', state: 'Z', startedAt: 500 });
    expect(mergeFull(zombie, { ...zombie, checkedAt: 2000 })).toBeUndefined();
    expect(mergeFull(zombie, { ...zombie, state: 'S', checkedAt: 2000 })).toMatchObject({ state: 'S' });
  });
});

describe('process rows and start times', () => {
  it('start times agree within 2 s, both ways, and not a millisecond more', () => {
    const prev = facts({ kill: 'ok', startedAt: 10_000 });
    expect(mergeProcess(prev, { ...row, startedAt: 12_000 })?.process?.startedAt).toBe(12_000);
    expect(mergeProcess(prev, { ...row, startedAt: 8_000 })?.process?.startedAt).toBe(8_000);
    expect(mergeProcess(prev, { ...row, startedAt: 12_001 })).toBeUndefined();
    expect(mergeProcess(prev, { ...row, startedAt: 7_999 })).toBeUndefined();
    // Either start time unknown: taken as the same process.
    expect(mergeProcess(facts({ kill: 'ok' }), row)?.process).toBe(row);
    expect(mergeProcess(prev, { ...row, startedAt: undefined })?.process?.name).toBe('pi');
  });

  it('an EPERM pid is alive: its row attaches; a row is dropped once it no longer comes', () => {
    const attached = mergeProcess(facts({ kill: 'EPERM', startedAt: 500 }), row);
    expect(attached?.process).toBe(row);
    expect(mergeProcess(attached!, undefined)).toEqual({ ...attached, process: undefined });
    expect(mergeProcess(facts({ kill: 'ok' }), undefined)).toBeUndefined();
  });

  it.each<[string, Partial<ProcessInfo>]>([
    ['pid', { pid: 101 }],
    ['ppid', { ppid: 2 }],
    ['name', { name: 'node' }],
    ['cmd', { cmd: 'pi --other' }],
    ['start time', { startedAt: 501 }],
  ])('a row differing in %s replaces the attached one', (_, change) => {
    const prev = facts({ kill: 'ok', startedAt: 500, process: row });
    const next = { ...row, ...change };
    expect(mergeProcess(prev, next)?.process).toBe(next);
  });

  it('withProcessOf: the known row is carried to a reading of the same live process only', () => {
    const known = facts({ kill: 'ok', startedAt: 500, process: row });
    expect(withProcessOf(known, facts({ kill: 'ok', startedAt: 500, checkedAt: 2000 })).process).toBe(row);
    expect(withProcessOf(known, facts({ kill: 'ok', startedAt: 9_000, checkedAt: 2000 })).process).toBeUndefined();
    expect(withProcessOf(known, facts({ kill: 'ESRCH', checkedAt: 2000 })).process).toBeUndefined();
    expect(withProcessOf(facts({ kill: 'ESRCH', process: row }), facts({ kill: 'ok', startedAt: 500 })).process).toBeUndefined();
    expect(withProcessOf(undefined, facts({ kill: 'ok', startedAt: 500 })).process).toBeUndefined();
  });
});

describe('mergePort, field by field', () => {
  const prev: PortFacts = { port: 80, result: 'open', detail: 'd', checkedAt: 1000, owners: [1, 2], ownerUnknown: undefined, listeners: ['127.0.0.1'] };

  it('the same facts, even as new arrays, keep the previous object; an older result is ignored even when it differs', () => {
    expect(mergePort(prev, { ...prev, owners: [1, 2], listeners: ['127.0.0.1'], checkedAt: 2000 })).toBeUndefined();
    expect(mergePort(prev, { ...prev, result: 'refused', checkedAt: 999 })).toBeUndefined();
    expect(mergePort(prev, { ...prev, result: 'refused', checkedAt: 1000 })).toMatchObject({ result: 'refused' });
  });

  it.each<[string, Partial<PortFacts>]>([
    ['detail', { detail: 'e' }],
    ['ownerUnknown', { ownerUnknown: 'hidepid' }],
    ['owners (other content)', { owners: [1, 3] }],
    ['owners (other length)', { owners: [1] }],
    ['owners (none now)', { owners: undefined }],
    ['listeners', { listeners: ['::1'] }],
    ['listeners (more)', { listeners: ['127.0.0.1', '::1'] }],
  ])('a different %s is a change, stored as a complete object', (_, change) => {
    const next = { ...prev, checkedAt: 2000, ...change };
    expect(mergePort(prev, next)).toEqual(next);
  });

  it('owners appearing where there were none is a change', () => {
    const none = { ...prev, owners: undefined };
    expect(mergePort(none, { ...none, owners: [5], checkedAt: 2000 })).toMatchObject({ owners: [5] });
  });
});

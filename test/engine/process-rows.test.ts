// "Who is this pid": which pids a process-table scan reads (live tracked ones; between full
// refreshes only those without a row), how a scan folds into the rows and the pids' facts, and
// the table status reported once per change.
import { describe, expect, it } from 'vitest';
import type { PidFacts, ProcessInfo } from '../../src/core/types.js';
import { FactTable } from '../../src/engine/fact-table.js';
import { mergeFull } from '../../src/engine/fact-merge.js';
import { ProcessRows, TABLE_REFRESH_EVERY } from '../../src/engine/process-rows.js';
import type { OsState } from '../../src/engine/types.js';
import type { ProcessTableResult } from '../../src/os/process-table.js';

const info = (pid: number, name = 'pi', startedAt = 500): ProcessInfo => ({ pid, ppid: 1, name, cmd: `${name} --serve`, startedAt });

/** Tracked pids with facts as probed: 'ok' alive, 'ESRCH' gone; a process row when given. */
function tracked(facts: [number, 'ok' | 'ESRCH', ProcessInfo?][]): FactTable<PidFacts> {
  const table = new FactTable<PidFacts>(mergeFull);
  table.watch(new Set(facts.map(([pid]) => pid)));
  for (const [pid, kill, process] of facts) table.facts.set(pid, { pid, kill, startedAt: kill === 'ok' ? 500 : undefined, checkedAt: 0, process });
  return table;
}

const scan = (...rows: ProcessInfo[]): ProcessTableResult => ({ ok: true, strategy: 'proc', processes: new Map(rows.map((r) => [r.pid, r])), scannedAt: 0 });
const OK: OsState = { processTable: 'ok' };

describe('ProcessRows.plan', () => {
  it('the first scan reads every live tracked pid; the next ones only those without a row; every TABLE_REFRESH_EVERY-th reads all again', () => {
    const pids = tracked([
      [100, 'ok', info(100)],
      [200, 'ok'],
      [300, 'ESRCH'],
    ]);
    const rows = new ProcessRows();
    expect(rows.plan(pids, false)).toEqual({ pids: [100, 200], everything: true });
    for (let i = 1; i < TABLE_REFRESH_EVERY; i++) expect(rows.plan(pids, false)).toEqual({ pids: [200], everything: false });
    expect(rows.plan(pids, false)).toEqual({ pids: [100, 200], everything: true });
    expect(rows.plan(pids, false)).toEqual({ pids: [200], everything: false });
  });

  it('a scan asked for even when idle reads everything and does not move the refresh cadence', () => {
    const pids = tracked([
      [100, 'ok', info(100)],
      [200, 'ok'],
    ]);
    const rows = new ProcessRows();
    expect(rows.plan(pids, true)).toEqual({ pids: [100, 200], everything: true });
    expect(rows.plan(pids, false)).toEqual({ pids: [100, 200], everything: true });
    expect(rows.plan(pids, true)).toEqual({ pids: [100, 200], everything: true });
    expect(rows.plan(pids, false)).toEqual({ pids: [200], everything: false });
  });

  it('a tracked pid without facts yet is not read', () => {
    const pids = new FactTable<PidFacts>(mergeFull);
    pids.watch(new Set([100]));
    expect(new ProcessRows().plan(pids, true)).toEqual({ pids: [], everything: true });
  });
});

describe('ProcessRows.apply', () => {
  it('before any scan no pid has a row', () => {
    expect(new ProcessRows().get(100)).toBeUndefined();
  });

  it('a full scan replaces the rows and attaches each live pid its row, when the start times agree', () => {
    const pids = tracked([
      [100, 'ok'],
      [200, 'ok'],
    ]);
    const rows = new ProcessRows();
    const plan = rows.plan(pids, false);
    const result = rows.apply(scan(info(100), info(200, 'other', 60_000), info(400, 'unrelated')), plan, pids, OK);
    expect(result).toEqual({ os: OK, changed: true });
    expect(result.os).toBe(OK);
    expect(rows.get(100)).toEqual(info(100));
    expect(rows.get(400)).toEqual(info(400, 'unrelated'));
    expect(pids.facts.get(100)?.process).toEqual(info(100));
    // Another process on pid 200 (its start time disagrees): not attached.
    expect(pids.facts.get(200)?.process).toBeUndefined();
  });

  it('nothing new in a scan: not changed, the same state', () => {
    const pids = tracked([[100, 'ok', info(100)]]);
    const rows = new ProcessRows();
    expect(rows.apply(scan(info(100)), rows.plan(pids, false), pids, OK)).toEqual({ os: OK, changed: false });
  });

  it('between refreshes the rows are merged: kept, new ones added, those of pids now gone dropped', () => {
    const pids = tracked([
      [100, 'ok'],
      [200, 'ok'],
      [300, 'ok'],
    ]);
    const rows = new ProcessRows();
    rows.apply(scan(info(100), info(300)), rows.plan(pids, false), pids, OK);
    pids.facts.set(300, { pid: 300, kill: 'ESRCH', checkedAt: 1 });
    const plan = rows.plan(pids, false);
    expect(plan).toEqual({ pids: [200], everything: false });
    rows.apply(scan(info(200)), plan, pids, OK);
    expect(rows.get(100)).toEqual(info(100));
    expect(rows.get(200)).toEqual(info(200));
    expect(rows.get(300)).toBeUndefined();
    expect(pids.facts.get(200)?.process).toEqual(info(200));
  });

  it('a merge with a tracked pid not probed yet (no facts): its row, if any, stays', () => {
    const pids = tracked([[100, 'ok']]);
    pids.watch(new Set([100, 999]));
    const rows = new ProcessRows();
    rows.apply(scan(info(100), info(999)), rows.plan(pids, false), pids, OK);
    expect(() => rows.apply(scan(), { pids: [], everything: false }, pids, OK)).not.toThrow();
    expect(rows.get(999)).toEqual(info(999));
    expect(rows.get(100)).toEqual(info(100));
  });

  it('a partial scan as the very first: its rows are the table', () => {
    const pids = tracked([[100, 'ok', info(100)], [200, 'ok']]);
    const rows = new ProcessRows();
    rows.plan(pids, false);
    const plan = rows.plan(pids, false);
    expect(plan.everything).toBe(false);
    rows.apply(scan(info(200)), plan, pids, OK);
    expect(rows.get(200)).toEqual(info(200));
  });

  it('a refresh drops the rows the scan did not return', () => {
    const pids = tracked([[100, 'ok'], [200, 'ok']]);
    const rows = new ProcessRows();
    rows.apply(scan(info(100), info(200)), rows.plan(pids, false), pids, OK);
    rows.apply(scan(info(200)), { pids: [100, 200], everything: true }, pids, OK);
    expect(rows.get(100)).toBeUndefined();
    expect(pids.facts.get(100)?.process).toBeUndefined();
    expect(rows.get(200)).toEqual(info(200));
  });

  it('a table that cannot be read: rows forgotten, the status and its error said once', () => {
    const pids = tracked([[100, 'ok']]);
    const rows = new ProcessRows();
    rows.apply(scan(info(100)), rows.plan(pids, false), pids, OK);
    const down = rows.apply({ ok: false, error: 'no /proc here' }, rows.plan(pids, false), pids, OK);
    expect(down).toEqual({ os: { processTable: 'unavailable', processTableError: 'no /proc here' }, changed: true });
    expect(rows.get(100)).toBeUndefined();
    const again = rows.apply({ ok: false, error: 'still no /proc' }, rows.plan(pids, false), pids, down.os);
    expect(again.changed).toBe(false);
    expect(again.os).toBe(down.os);

    // Back: 'ok', the error cleared, a change even with no new row.
    const back = rows.apply(scan(), { pids: [], everything: false }, pids, down.os);
    expect(back).toEqual({ os: { processTable: 'ok', processTableError: undefined }, changed: true });
    const pending = rows.apply(scan(), { pids: [], everything: false }, pids, { processTable: 'pending' });
    expect(pending).toEqual({ os: { processTable: 'ok', processTableError: undefined }, changed: true });
  });
});

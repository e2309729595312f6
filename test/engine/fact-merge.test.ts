// How probe results fold into known facts: only what reconcile can see counts as a change.
import { describe, expect, it } from 'vitest';
import type { PidFacts, ProcessInfo } from '../../src/core/types.js';
import { mergeFull, mergeKill, mergePort, mergeProcess } from '../../src/engine/fact-merge.js';

const facts = (f: Partial<PidFacts> & Pick<PidFacts, 'kill'>): PidFacts => ({ pid: 100, checkedAt: 1000, ...f });
const sleepRow: ProcessInfo = { pid: 100, ppid: 1, name: 'sleep', cmd: 'sleep 30', startedAt: 500 };

describe('mergeKill (the 250 ms kill-only probe)', () => {
  it('keeps the previous object when the pid is still alive, so nothing is recomputed', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500 });
    expect(mergeKill(prev, facts({ kill: 'ok', checkedAt: 2000 }))).toEqual({ kind: 'keep' });
  });

  it('a pid that turns ESRCH drops its state, start time and process', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500, process: sleepRow });
    const merged = mergeKill(prev, facts({ kill: 'ESRCH', checkedAt: 2000 }));
    expect(merged).toEqual({
      kind: 'store',
      facts: { pid: 100, kill: 'ESRCH', error: undefined, state: undefined, startedAt: undefined, checkedAt: 2000, process: undefined },
    });
  });

  it('asks for a full probe when a dead or unknown pid answers alive (a new process, or a new entry)', () => {
    expect(mergeKill(facts({ kill: 'ESRCH' }), facts({ kill: 'ok', checkedAt: 2000 }))).toEqual({ kind: 'full' });
    expect(mergeKill(undefined, facts({ kill: 'EPERM' }))).toEqual({ kind: 'full' });
  });

  it('keeps a dead pid dead without a change, and records a failing probe as a change', () => {
    expect(mergeKill(facts({ kill: 'ESRCH' }), facts({ kill: 'ESRCH', checkedAt: 2000 }))).toEqual({ kind: 'keep' });
    const failed = mergeKill(facts({ kill: 'ok', state: 'S' }), facts({ kill: 'error', error: 'EINVAL', checkedAt: 2000 }));
    expect(failed).toMatchObject({ kind: 'store', facts: { kill: 'error', error: 'EINVAL', state: undefined } });
  });

  it('ignores a result older than what is known', () => {
    expect(mergeKill(facts({ kill: 'ok', checkedAt: 3000 }), facts({ kill: 'ESRCH', checkedAt: 2000 }))).toEqual({ kind: 'keep' });
  });
});

describe('mergeFull (state and start time)', () => {
  it('a first reading is always new', () => {
    expect(mergeFull(undefined, facts({ kill: 'ok', state: 'S', startedAt: 500 }))).toMatchObject({ state: 'S', startedAt: 500 });
  });

  it('running <-> sleeping is no change; becoming a zombie or a new start time is', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500, process: sleepRow });
    expect(mergeFull(prev, facts({ kill: 'ok', state: 'R', startedAt: 500, checkedAt: 2000 }))).toBeUndefined();
    expect(mergeFull(prev, facts({ kill: 'ok', state: 'Z', startedAt: 500, checkedAt: 2000 }))).toMatchObject({ state: 'Z', process: sleepRow });
    const reused = mergeFull(prev, facts({ kill: 'ok', state: 'S', startedAt: 90_000, checkedAt: 2000 }));
    expect(reused).toMatchObject({ startedAt: 90_000, process: undefined }); // another process: not its row
  });
});

describe('mergeFull: a stop, and what the process costs', () => {
  const MIB = 1024 * 1024;
  it('running -> stopped is a change that starts "stopped since"; still stopped keeps the object; T <-> t is none; continued ends it', () => {
    const running = facts({ kill: 'ok', state: 'S', startedAt: 500 });
    const stopped = mergeFull(running, facts({ kill: 'ok', state: 'T', startedAt: 500, checkedAt: 2000 }))!;
    expect(stopped).toMatchObject({ state: 'T', stoppedSince: 2000, checkedAt: 2000 });
    expect(mergeFull(stopped, facts({ kill: 'ok', state: 'T', startedAt: 500, checkedAt: 4000 }))).toBeUndefined();
    expect(mergeFull(stopped, facts({ kill: 'ok', state: 't', startedAt: 500, checkedAt: 4000 }))).toBeUndefined();
    expect(mergeFull(stopped, facts({ kill: 'ok', state: 'R', startedAt: 500, checkedAt: 6000 }))).toMatchObject({ state: 'R', stoppedSince: undefined });
    // A new process on the pid that is stopped too: stopped since this reading, not the old one's.
    expect(mergeFull(stopped, facts({ kill: 'ok', state: 'T', startedAt: 90_000, checkedAt: 8000 }))).toMatchObject({ stoppedSince: 8000 });
  });

  it('"stopped since" stays through a change of what it costs and of its owner (EPERM)', () => {
    const stopped = mergeFull(undefined, facts({ kill: 'ok', state: 'T', startedAt: 500, checkedAt: 2000 }))!;
    const grown = mergeFull(stopped, facts({ kill: 'ok', state: 'T', startedAt: 500, checkedAt: 4000 }), { rssBytes: 50 * MIB })!;
    expect(grown).toMatchObject({ stoppedSince: 2000, usage: { rssBytes: 50 * MIB } });
    expect(mergeKill(grown, facts({ kill: 'EPERM', checkedAt: 6000 }))).toMatchObject({ kind: 'store', facts: { stoppedSince: 2000, usage: { rssBytes: 50 * MIB } } });
  });

  it('a cost the table would show alike is no change; one it would show otherwise is; a gone pid costs nothing', () => {
    const prev = mergeFull(undefined, facts({ kill: 'ok', state: 'S', startedAt: 500 }), { cpuPct: 12.2, cpuOver: 'interval', rssBytes: 100 * MIB })!;
    const again = facts({ kill: 'ok', state: 'R', startedAt: 500, checkedAt: 2000 });
    expect(mergeFull(prev, again, { cpuPct: 12.4, cpuOver: 'interval', rssBytes: 100 * MIB + 8192 })).toBeUndefined();
    expect(mergeFull(prev, again, { cpuPct: 35, cpuOver: 'interval', rssBytes: 100 * MIB })).toMatchObject({ usage: { cpuPct: 35 } });
    expect(mergeFull(prev, again, { cpuPct: 12.2, cpuOver: 'interval', rssBytes: 140 * MIB })).toMatchObject({ usage: { rssBytes: 140 * MIB } });
    // The probe's own readings are not kept in the facts: usage is what the engine keeps of them.
    expect(mergeFull(undefined, facts({ kill: 'ok', state: 'S', cpuMs: 5, rssBytes: 7 }), { rssBytes: 7 })).toMatchObject({ cpuMs: undefined, rssBytes: undefined, usage: { rssBytes: 7 } });
    expect(mergeKill(prev, facts({ kill: 'ESRCH', checkedAt: 2000 }))).toMatchObject({ kind: 'store', facts: { usage: undefined } });
  });
});

describe('mergeProcess and mergePort', () => {
  it('attaches a process row once, and only to a live pid whose start time agrees', () => {
    const prev = facts({ kill: 'ok', state: 'S', startedAt: 500 });
    const attached = mergeProcess(prev, sleepRow);
    expect(attached?.process).toBe(sleepRow);
    expect(mergeProcess(attached!, { ...sleepRow })).toBeUndefined();
    expect(mergeProcess(prev, { ...sleepRow, startedAt: 60_000 })).toBeUndefined();
    expect(mergeProcess(facts({ kill: 'ESRCH' }), sleepRow)).toBeUndefined();
  });

  it('a port is news only when its result (or detail) changed', () => {
    const open = { port: 80, result: 'open' as const, detail: '127.0.0.1', checkedAt: 1 };
    expect(mergePort(undefined, open)).toEqual(open);
    expect(mergePort(open, { ...open, checkedAt: 2 })).toBeUndefined();
    expect(mergePort(open, { ...open, result: 'refused', checkedAt: 2 })).toMatchObject({ result: 'refused' });
  });
});

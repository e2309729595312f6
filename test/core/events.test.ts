// The events between two snapshots, as a table of cases built from real reconcile findings.
import { describe, expect, it } from 'vitest';
import { diffEvents, eventText, grouped, eventTone, keepLast, type EventFrame, type EventSource, type WatchEvent } from '../../src/core/events.js';
import { findingKey } from '../../src/core/evict-plan.js';
import type { ClaimEntry, OsFacts, SessionEntry } from '../../src/core/types.js';
import { alive, claim, gone, NOW, os, run, session } from './fixtures.js';

const AT = NOW + 1_000;
const UP: EventSource = { name: 'hypivisor', status: 'connected', reading: true };
const DOWN: EventSource = { name: 'hypivisor', status: 'unreachable', reading: false, why: 'connection refused' };

function frame(sessions: SessionEntry[], facts: OsFacts = os(), sources: EventSource[] = [UP], claims: ClaimEntry[] = []): EventFrame {
  return { findings: run(sessions, facts, { claims }), sources };
}

/** What a test looks at: kind, id, verdicts, status, rows. */
const brief = (e: WatchEvent) => [e.kind, e.id ?? e.status, e.from, e.verdict ?? e.rows].filter((x) => x !== undefined).join(' ');

const live100 = session('a', { pid: 100 });
const PIDS = os([alive(100), alive(200)]);

describe('diffEvents: what happened between two snapshots', () => {
  it.each<[string, EventFrame, EventFrame, string[]]>([
    ['nothing changed: no event', frame([live100], PIDS), frame([live100], PIDS), []],
    ['a new session joined', frame([live100], PIDS), frame([live100, session('b', { pid: 200 })], PIDS), ['joined b live']],
    ['a new session waiting for its first probe: nothing yet', frame([live100], PIDS), frame([live100, session('b', { pid: 200 })], os([alive(100)])), []],
    ['then its first verdict is when it joins', frame([live100, session('b', { pid: 200 })], os([alive(100)])), frame([live100, session('b', { pid: 200 })], PIDS), ['joined b live']],
    ['a port not probed yet: nothing yet', frame([]), frame([session('p', { port: 4000 })]), []],
    ['gone before its first probe: nothing to tell', frame([live100, session('b', { pid: 200 })], os([alive(100)])), frame([live100], PIDS), []],
    ['a local entry with nothing to check joins as unverified', frame([]), frame([session('n')]), ['joined n unverified']],
    ['a session that joins dead says so', frame([], PIDS), frame([session('g', { pid: 300 })], os([gone(300)])), ['joined g ghost']],
    ['a session left its registry', frame([live100, session('b', { pid: 200 })], PIDS), frame([live100], PIDS), ['left b live']],
    ['the registry marked it offline (process alive)', frame([live100], PIDS), frame([session('a', { pid: 100, offline: true })], PIDS), ['offline a offline']],
    ['back online', frame([session('a', { pid: 100, offline: true })], PIDS), frame([live100], PIDS), ['online a live']],
    ['judged ghost when its pid is gone', frame([live100], PIDS), frame([live100], os([gone(100)])), ['judged a live ghost']],
    [
      'killed: offline and a ghost in one step, in that order',
      frame([live100], PIDS),
      frame([session('a', { pid: 100, offline: true })], os([gone(100)])),
      ['offline a ghost', 'judged a live ghost'],
    ],
    ['a zombie', frame([live100], PIDS), frame([live100], os([alive(100, { state: 'Z' })])), ['judged a live zombie']],
    ['turned live again', frame([live100], os([gone(100)])), frame([live100], PIDS), ['judged a ghost live']],
    ['a claim taken', frame([live100], PIDS), frame([live100], PIDS, [UP], [claim('/repo', { holder: 'a' })]), ['joined /repo held']],
    ['a claim whose holder died turns stale', frame([live100], PIDS, [UP], [claim('/repo', { holder: 'a' })]), frame([live100], os([gone(100)]), [UP], [claim('/repo', { holder: 'a' })]), ['judged a live ghost', 'judged /repo held stale-claim']],
    ['a registry lost: one event, its rows kept quiet', frame([live100], PIDS, [UP]), frame([], PIDS, [DOWN]), ['source unreachable 0']],
    ['a registry connected with its rows: one event with the count', frame([], PIDS, [DOWN]), frame([live100, session('b', { pid: 200 })], PIDS, [UP]), ['source connected 2']],
    ['the first frame: every registry once, no row events', { findings: [], sources: [] }, frame([live100], PIDS, [UP]), ['source connected 1']],
    ['a status change that keeps reading still tells its rows', frame([live100], PIDS, [UP]), frame([live100, session('b', { pid: 200 })], PIDS, [{ ...UP, status: 'files-only' }]), ['source files-only 2', 'joined b live']],
  ])('%s', (_, prev, next, expected) => {
    const events = diffEvents(prev, next, AT);
    expect(events.map(brief)).toEqual(expected);
    for (const e of events) expect(e.at).toBe(AT);
  });

  it('a row our eviction removed does not "leave" again', () => {
    const prev = frame([live100, session('g', { pid: 300 })], os([alive(100), gone(300)]));
    const next = frame([live100], PIDS);
    const evicted = new Set([findingKey({ kind: 'session', source: 'hypivisor', id: 'g' })]);
    expect(diffEvents(prev, next, AT, { evicted })).toEqual([]);
    expect(diffEvents(prev, next, AT).map(brief)).toEqual(['left g ghost']);
  });

  it('rows of two registries are told apart by their source', () => {
    const other = session('a', { pid: 100, source: 'agentctl' });
    const sources = [UP, { name: 'agentctl', status: 'connected', reading: true }];
    const events = diffEvents(frame([live100], PIDS, sources), frame([live100, other], PIDS, sources), AT);
    expect(events).toMatchObject([{ kind: 'joined', id: 'a', source: 'agentctl' }]);
  });
});

describe('eventText and eventTone', () => {
  const e = (fields: Partial<WatchEvent>): WatchEvent => ({ at: AT, kind: 'joined', source: 'hypivisor', rowKind: 'session', id: 'a', verdict: 'live', ...fields });
  it.each<[string, WatchEvent, string, string]>([
    ['joined live', e({}), 'a joined hypivisor', 'info'],
    ['joined as a problem, with why', e({ verdict: 'ghost', detail: 'pid 4 is gone' }), 'a joined hypivisor as ghost: pid 4 is gone', 'problem'],
    ['left', e({ kind: 'left' }), 'a left hypivisor', 'info'],
    ['offline', e({ kind: 'offline' }), 'a went offline (hypivisor)', 'warning'],
    ['online', e({ kind: 'online' }), 'a is back online (hypivisor)', 'info'],
    ['judged ghost', e({ kind: 'judged', verdict: 'ghost', from: 'live', detail: 'pid 4 is gone (ESRCH)' }), 'a judged ghost (was live): pid 4 is gone (ESRCH)', 'problem'],
    ['judged live again', e({ kind: 'judged', verdict: 'live', from: 'ghost' }), 'a judged live (was ghost)', 'ok'],
    ['evicted', e({ kind: 'evicted', verdict: 'ghost' }), 'a evicted from hypivisor', 'ok'],
    ['a claim', e({ rowKind: 'claim', id: '/repo', verdict: 'held' }), 'claim /repo joined hypivisor', 'info'],
    ['a source reading', e({ kind: 'source', status: 'connected', reading: true, rows: 10_000 }), 'hypivisor: connected, 10,000 rows', 'ok'],
    ['a source lost', e({ kind: 'source', status: 'unreachable', reading: false, detail: 'connection refused' }), 'hypivisor: unreachable (connection refused)', 'warning'],
    ['leftovers first seen: one process, which', e({ kind: 'leftovers', verdict: 'ghost', rows: 1, detail: 'pid 4242 node :3000' }), 'a (hypivisor) is dead and left 1 process running: pid 4242 node :3000', 'warning'],
    [
      'leftovers first seen: two, their ports',
      e({ kind: 'leftovers', verdict: 'zombie', rows: 2, detail: 'pid 4242 node :3000,:3001, pid 4243 vite' }),
      'a (hypivisor) is dead and left 2 processes running: pid 4242 node :3000,:3001, pid 4243 vite',
      'warning',
    ],
    ['leftovers first seen: many, the count grouped', e({ kind: 'leftovers', verdict: 'ghost', rows: 1_234, detail: 'pid 1 a, pid 2 b, pid 3 c, pid 4 d, ...' }), 'a (hypivisor) is dead and left 1,234 processes running: pid 1 a, pid 2 b, pid 3 c, pid 4 d, ...', 'warning'],
    ['leftovers without a list', e({ kind: 'leftovers', verdict: 'ghost', rows: 3 }), 'a (hypivisor) is dead and left 3 processes running', 'warning'],
    ['leftovers of an agent gone from its registry (a departed row)', e({ kind: 'leftovers', source: 'claude', id: 'sess-1', verdict: 'ghost', rows: 1, detail: 'pid 9 sleep' }), 'sess-1 (claude) is dead and left 1 process running: pid 9 sleep', 'warning'],
  ])('%s', (_, event, text, tone) => {
    expect(eventText(event)).toBe(text);
    expect(eventTone(event)).toBe(tone);
  });

  it('makes every string from a registry inert', () => {
    const text = eventText(e({ id: 'x\u001b]52;c;cHduZWQ=\u0007', source: 'h\u202Eivisor', kind: 'judged', verdict: 'ghost', from: 'live', detail: 'bad\u001b[2J' }));
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    expect(text).toContain('^[');
  });

  it('makes a leftover\'s name inert too (a process names itself: /proc/<pid>/comm)', () => {
    const text = eventText(e({ kind: 'leftovers', id: 'a\u001b[2J', verdict: 'ghost', rows: 1, detail: 'pid 7 \u001b]0;pwned\u0007x :80' }));
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(text).toMatch(/^a\^\[\[2J \(hypivisor\) is dead and left 1 process running: pid 7 \^\[\]0;pwned\^Gx :80$/);
  });
});

describe('grouped: counts as toLocaleString("en-US") writes them, without ICU', () => {
  const samples = [0, -0, 1, 12, 123, 999, 1000, 1001, 9999, 10_000, 12_345, 100_000, 999_999, 1_000_000, 1_234_567, -1, -999, -1000, -1_234_567, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5, 1234.5678, 2 ** 60, NaN, Infinity, -Infinity];
  it.each(samples)('%d', (n) => {
    expect(grouped(n)).toBe(n.toLocaleString('en-US'));
  });

  it('never calls the number formatter for a whole number (its first call maps ~6 MB of ICU data)', () => {
    const real = Number.prototype.toLocaleString;
    let calls = 0;
    Number.prototype.toLocaleString = function (this: number, ...args: Parameters<typeof real>) {
      calls++;
      return real.apply(this, args);
    };
    try {
      expect(eventText({ at: AT, kind: 'source', source: 'hypivisor', rowKind: 'session', status: 'connected', reading: true, rows: 10_000 })).toBe('hypivisor: connected, 10,000 rows');
      expect(grouped(-1_234_567)).toBe('-1,234,567');
    } finally {
      Number.prototype.toLocaleString = real;
    }
    expect(calls).toBe(0);
  });
});

describe('keepLast: the ring of the newest events', () => {
  const ev = (n: number): WatchEvent => ({ at: n, kind: 'left', source: 's', id: String(n) });
  it('keeps the newest `limit`, oldest first, and the same array when nothing is added', () => {
    const ring = keepLast([], [1, 2, 3].map(ev), 5);
    expect(ring.map((e) => e.at)).toEqual([1, 2, 3]);
    expect(keepLast(ring, [], 5)).toBe(ring);
    expect(keepLast(ring, [4, 5, 6, 7].map(ev), 5).map((e) => e.at)).toEqual([3, 4, 5, 6, 7]);
    expect(keepLast([], Array.from({ length: 500 }, (_, i) => ev(i)), 200)).toHaveLength(200);
  });
});

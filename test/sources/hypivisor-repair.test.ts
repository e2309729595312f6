// A list_nodes re-sync against the view: a node that did not change keeps its entry object, read
// off the raw node without making a new entry; a change of identity (machine, cwd, port, pid,
// status) makes a new entry and counts as repaired; a change of another field (a heartbeat's
// last_seen) makes a new entry too, counted as refreshed (not drift).
import { describe, expect, it } from 'vitest';
import { RegistryView } from '../../src/sources/hypivisor/registry-view.js';
import { emptyCounters } from '../../src/sources/types.js';

const node = (id: string, over: Record<string, unknown> = {}) => ({ id, machine: 'm1', cwd: '/w', port: 4000, pid: 100, status: 'active', last_seen: 1_700_000_000, registered_at: 1_699_999_000, ...over });

function view() {
  let now = 1_000;
  const counters = emptyCounters();
  const v = new RegistryView('hypivisor', () => now, counters);
  return { v, counters, later: () => (now += 5_000) };
}
const entries = (v: RegistryView) => new Map(v.lists().sessions.map((e) => [e.id, e]));

describe('hypivisor view: a re-sync keeps what did not change', () => {
  it('unchanged nodes keep their entries and count nothing; the lists stay as they were', () => {
    const { v, later } = view();
    v.replace([node('a'), node('b', { pid: 200 })], []);
    const before = entries(v);
    later();
    expect(v.repairNodes([node('a'), node('b', { pid: 200 })])).toEqual({ repaired: 0, refreshed: 0 });
    const after = entries(v);
    expect(after.get('a')).toBe(before.get('a'));
    expect(after.get('b')).toBe(before.get('b'));
  });

  it('a node whose identity is the same but whose last_seen moved refreshes its entry: shown, not counted as repaired', () => {
    const { v, later } = view();
    v.replace([node('a'), node('b')], []);
    const before = entries(v);
    later();
    // A heartbeat moved a's last_seen (issue 27: the detail view kept the old one, also after R).
    expect(v.repairNodes([node('a', { last_seen: 1_700_000_120 }), node('b')])).toEqual({ repaired: 0, refreshed: 1 });
    const after = entries(v);
    expect(after.get('a')).not.toBe(before.get('a'));
    expect(after.get('a')?.lastSeen).toBe(1_700_000_120_000);
    expect(after.get('a')?.raw?.last_seen).toBe(1_700_000_120);
    // Still the same entry for everything else: first seen, join order.
    expect(after.get('a')?.firstObservedAt).toBe(before.get('a')?.firstObservedAt);
    expect(after.get('a')?.joinSeq).toBe(before.get('a')?.joinSeq);
    expect(after.get('b')).toBe(before.get('b'));
    // The same answer again changes nothing.
    const kept = entries(v);
    expect(v.repairNodes([node('a', { last_seen: 1_700_000_120 }), node('b')])).toEqual({ repaired: 0, refreshed: 0 });
    expect(entries(v).get('a')).toBe(kept.get('a'));
  });

  it('a field added or dropped refreshes the entry; a nested value alone does not (capped, shown only)', () => {
    const { v } = view();
    v.replace([node('a', { meta: { x: 1 } })], []);
    expect(v.repairNodes([node('a', { meta: { x: 2 } })])).toEqual({ repaired: 0, refreshed: 0 });
    expect(v.repairNodes([node('a', { meta: { x: 2 }, offline_since: 1_700_000_100 })])).toEqual({ repaired: 0, refreshed: 1 });
    expect(entries(v).get('a')?.offlineSince).toBe(1_700_000_100_000);
    expect(v.repairNodes([node('a', { meta: { x: 2 } })])).toEqual({ repaired: 0, refreshed: 1 });
    expect(entries(v).get('a')?.offlineSince).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>]>([
    ['machine', { machine: 'm2' }],
    ['cwd', { cwd: '/elsewhere' }],
    ['port', { port: 4001 }],
    ['pid', { pid: 101 }],
    ['status', { status: 'offline' }],
    ['a pid that is an object', { pid: { n: 1 } }],
  ])('a changed %s makes a new entry, counted once', (_what, over) => {
    const { v, later } = view();
    v.replace([node('a'), node('b')], []);
    const before = entries(v);
    later();
    expect(v.repairNodes([node('a', over), node('b')])).toEqual({ repaired: 1, refreshed: 0 });
    const after = entries(v);
    expect(after.get('a')).not.toBe(before.get('a'));
    expect(after.get('a')?.raw).toMatchObject(over);
    expect(after.get('b')).toBe(before.get('b'));
  });

  it('added and removed nodes are counted; a new pid under an old id starts a new first-seen clock, an unchanged one keeps its own', () => {
    const { v, later } = view();
    v.replace([node('a'), node('b')], []);
    const firstA = entries(v).get('a')?.firstObservedAt;
    later();
    expect(v.repairNodes([node('a'), node('c')])).toEqual({ repaired: 2, refreshed: 0 });
    expect([...entries(v).keys()]).toEqual(['a', 'c']);
    expect(entries(v).get('a')?.firstObservedAt).toBe(firstA);
    expect(entries(v).get('c')?.firstObservedAt).toBe(6_000);
    later();
    expect(v.repairNodes([node('a', { pid: 300 }), node('c')])).toEqual({ repaired: 1, refreshed: 0 });
    expect(entries(v).get('a')?.firstObservedAt).toBe(11_000);
  });

  it('the same nodes in another order count nothing and keep their entries and the view\'s order', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 }), node('c', { pid: 300 })], []);
    const before = entries(v);
    expect(v.repairNodes([node('c', { pid: 300 }), node('a'), node('b', { pid: 200 })])).toEqual({ repaired: 0, refreshed: 0 });
    expect([...entries(v)]).toEqual([...before]);
  });

  it('as many nodes as the view holds, one id twice and one missing: the missing one is repaired away', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 })], []);
    const a = entries(v).get('a');
    expect(v.repairNodes([node('a'), node('a')])).toEqual({ repaired: 1, refreshed: 0 });
    expect([...entries(v).keys()]).toEqual(['a']);
    expect(entries(v).get('a')).toBe(a);
  });

  it('a list that is the view but for its last node, one field, or one node more is a repair (no node skipped)', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 }), node('c', { pid: 300 })], []);
    expect(v.repairNodes([node('a'), node('b', { pid: 200 }), node('c', { pid: 301 })])).toEqual({ repaired: 1, refreshed: 0 });
    expect(entries(v).get('c')?.pid).toBe(301);
    expect(v.repairNodes([node('a', { status: 'offline' }), node('b', { pid: 200 }), node('c', { pid: 301 })])).toEqual({ repaired: 1, refreshed: 0 });
    expect(entries(v).get('a')?.status).toBe('offline');
    // The view's nodes, then one more.
    expect(v.repairNodes([node('a', { status: 'offline' }), node('b', { pid: 200 }), node('c', { pid: 301 }), node('d')])).toEqual({ repaired: 1, refreshed: 0 });
    expect([...entries(v).keys()]).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a bad node is counted as before and an id given twice keeps the last', () => {
    const { v, counters } = view();
    v.replace([node('a')], []);
    expect(v.repairNodes([node('a'), { id: '' }, 7, node('a', { cwd: '/x' })])).toEqual({ repaired: 1, refreshed: 0 });
    expect(counters.badEntries).toBe(2);
    expect(entries(v).get('a')?.cwd).toBe('/x');
  });
});

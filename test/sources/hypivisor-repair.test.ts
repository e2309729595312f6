// A list_nodes re-sync against the view: a node whose identity (machine, cwd, port, pid, status)
// did not change keeps its entry object, read off the raw node without making a new entry; any
// change of identity makes a new entry and counts as repaired.
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
    expect(v.repairNodes([node('a'), node('b', { pid: 200 })])).toBe(0);
    const after = entries(v);
    expect(after.get('a')).toBe(before.get('a'));
    expect(after.get('b')).toBe(before.get('b'));
  });

  it('a node with the same identity is not read again (its other fields are never looked at)', () => {
    const { v } = view();
    v.replace([node('a')], []);
    const kept = entries(v).get('a');
    let reads = 0;
    const raw = node('a');
    Object.defineProperty(raw, 'last_seen', { enumerable: true, get: () => (reads++, 1_700_000_999) });
    expect(v.repairNodes([raw])).toBe(0);
    expect(reads).toBe(0);
    expect(entries(v).get('a')).toBe(kept);
    // The registry's last_seen alone is not identity: the kept entry says the old one.
    expect(kept?.lastSeen).toBe(1_700_000_000_000);
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
    expect(v.repairNodes([node('a', over), node('b')])).toBe(1);
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
    expect(v.repairNodes([node('a'), node('c')])).toBe(2);
    expect([...entries(v).keys()]).toEqual(['a', 'c']);
    expect(entries(v).get('a')?.firstObservedAt).toBe(firstA);
    expect(entries(v).get('c')?.firstObservedAt).toBe(6_000);
    later();
    expect(v.repairNodes([node('a', { pid: 300 }), node('c')])).toBe(1);
    expect(entries(v).get('a')?.firstObservedAt).toBe(11_000);
  });

  it('the same nodes in another order count nothing and keep their entries and the view\'s order', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 }), node('c', { pid: 300 })], []);
    const before = entries(v);
    expect(v.repairNodes([node('c', { pid: 300 }), node('a'), node('b', { pid: 200 })])).toBe(0);
    expect([...entries(v)]).toEqual([...before]);
  });

  it('as many nodes as the view holds, one id twice and one missing: the missing one is repaired away', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 })], []);
    const a = entries(v).get('a');
    expect(v.repairNodes([node('a'), node('a')])).toBe(1);
    expect([...entries(v).keys()]).toEqual(['a']);
    expect(entries(v).get('a')).toBe(a);
  });

  it('a list that is the view but for its last node, one field, or one node more is a repair (no node skipped)', () => {
    const { v } = view();
    v.replace([node('a'), node('b', { pid: 200 }), node('c', { pid: 300 })], []);
    expect(v.repairNodes([node('a'), node('b', { pid: 200 }), node('c', { pid: 301 })])).toBe(1);
    expect(entries(v).get('c')?.pid).toBe(301);
    expect(v.repairNodes([node('a', { status: 'offline' }), node('b', { pid: 200 }), node('c', { pid: 301 })])).toBe(1);
    expect(entries(v).get('a')?.status).toBe('offline');
    // The view's nodes, then one more.
    expect(v.repairNodes([node('a', { status: 'offline' }), node('b', { pid: 200 }), node('c', { pid: 301 }), node('d')])).toBe(1);
    expect([...entries(v).keys()]).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a bad node is counted as before and an id given twice keeps the last', () => {
    const { v, counters } = view();
    v.replace([node('a')], []);
    expect(v.repairNodes([node('a'), { id: '' }, 7, node('a', { cwd: '/x' })])).toBe(1);
    expect(counters.badEntries).toBe(2);
    expect(entries(v).get('a')?.cwd).toBe('/x');
  });
});

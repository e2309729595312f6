// The generic fact table: which keys are watched (in order), which wait for a first probe and
// which are urgent, what a re-watch adds or forgets, and which results fold in.
import { describe, expect, it } from 'vitest';
import { FactTable } from '../../src/engine/fact-table.js';

const table = () => new FactTable<string>((prev, next) => (prev === next ? undefined : next));

describe('FactTable', () => {
  it('watches nothing at first', () => {
    const t = table();
    expect(t.keys).toEqual([]);
    expect(t.has(1)).toBe(false);
  });

  it('new keys wait and are urgent; watching the same keys again adds nothing and leaves them as they are', () => {
    const t = table();
    expect(t.watch(new Set([1, 2]))).toBe(true);
    expect(t.keys).toEqual([1, 2]);
    expect([...t.awaiting]).toEqual([1, 2]);
    expect([...t.urgent]).toEqual([1, 2]);
    t.urgent.clear();
    expect(t.fold(new Map([[1, 'a']]))).toBe(true);
    expect([...t.awaiting]).toEqual([2]);
    expect(t.watch(new Set([1, 2]))).toBe(false);
    expect([...t.awaiting]).toEqual([2]);
    expect([...t.urgent]).toEqual([]);
    expect(t.facts.get(1)).toBe('a');
  });

  it('a dropped key is forgotten: its facts, its wait and its urgency', () => {
    const t = table();
    t.watch(new Set([1, 2]));
    t.fold(new Map([[1, 'a']]));
    expect(t.watch(new Set([2, 3]))).toBe(true);
    expect(t.keys).toEqual([2, 3]);
    expect(t.facts.has(1)).toBe(false);
    expect(t.awaiting.has(1)).toBe(false);
    expect(t.urgent.has(1)).toBe(false);
    expect(t.watch(new Set([3]))).toBe(false);
  });

  it('a key dropped before its first probe no longer holds up the wait', () => {
    const t = table();
    t.watch(new Set([1, 2]));
    t.watch(new Set([1]));
    expect([...t.awaiting]).toEqual([1]);
    expect([...t.urgent]).toEqual([1]);
    t.fold(new Map([[1, 'a']]));
    expect(t.awaiting.size).toBe(0);
  });

  it('only results of watched keys fold in; a result the merge keeps is no change, though it ends the wait', () => {
    const t = table();
    t.watch(new Set([1]));
    expect(t.fold(new Map([[9, 'x']]))).toBe(false);
    expect(t.facts.has(9)).toBe(false);
    expect(t.fold(new Map([[1, 'a']]))).toBe(true);
    t.awaiting.add(1);
    expect(t.fold(new Map([[1, 'a']]))).toBe(false);
    expect(t.awaiting.has(1)).toBe(false);
  });
});

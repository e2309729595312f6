import { describe, expect, it } from 'vitest';
import {
  MARKER_MEANINGS,
  problemCounts,
  PROBLEM_VERDICTS,
  VERDICT_TRAITS,
  VERDICTS,
  VERDICTS_WORST_FIRST,
  verdictsMarked,
} from '../../src/core/verdicts.js';

// design.md's "Verdicts" table, written out here by hand (not read from the code): flip any
// trait in core/verdicts.ts and a row below disagrees.
//   verdict        kind       problem evictable short         tone       marker
const DESIGN = [
  ['live',        'session', false,  false,    'live',       'ok',      ' '],
  ['ghost',       'session', true,   true,     'ghost',      'problem', '!'],
  ['zombie',      'session', true,   true,     'zombie',     'problem', '!'],
  ['reused',      'session', true,   true,     'reused',     'warning', '!'],
  ['superseded',  'session', true,   true,     'superseded', 'warning', '!'],
  ['pending',     'session', true,   true,     'pending',    'warning', '!'],
  ['offline',     'session', false,  true,     'offline',    'muted',   '-'],
  ['remote',      'session', false,  false,    'remote',     'info',    '?'],
  ['unverified',  'session', false,  false,    'unverified', 'info',    '?'],
  ['suspended',   'session', false,  false,    'suspended',  'warning', '='],
  ['held',        'claim',   false,  false,    'held',       'ok',      ' '],
  ['stale-claim', 'claim',   true,   true,     'stale',      'problem', '!'],
] as const;

/** Worst first, as the table sorts and the header counts. */
const WORST_FIRST = ['ghost', 'zombie', 'stale-claim', 'reused', 'superseded', 'pending', 'suspended', 'unverified', 'offline', 'remote', 'live', 'held'];

describe('VERDICT_TRAITS', () => {
  it.each(DESIGN.map((row) => [row[0], row] as const))('%s has the traits design.md gives it', (verdict, row) => {
    const [, kind, problem, evictable, short, tone, marker] = row;
    const t = VERDICT_TRAITS[verdict];
    expect({ kind: t.kind, problem: t.problem, evictable: t.evictable, short: t.short, tone: t.tone, marker: t.marker }).toEqual({
      kind, problem, evictable, short, tone, marker,
    });
    expect(t.meaning.length).toBeGreaterThan(10);
    expect(t.meaning).not.toMatch(/\n/);
  });

  it('has exactly design.md\'s verdicts, in its order (the summary line and JSON keys follow it)', () => {
    expect(VERDICTS).toEqual(DESIGN.map((r) => r[0]));
    expect(Object.keys(VERDICT_TRAITS)).toEqual(DESIGN.map((r) => r[0]));
    const ofKind = (kind: 'session' | 'claim') => VERDICTS.filter((v) => VERDICT_TRAITS[v].kind === kind);
    expect(ofKind('session')).toEqual(['live', 'ghost', 'zombie', 'reused', 'superseded', 'pending', 'offline', 'remote', 'unverified', 'suspended']);
    expect(ofKind('claim')).toEqual(['held', 'stale-claim']);
  });

  it('ranks the verdicts worst first, each rank once', () => {
    expect(VERDICTS_WORST_FIRST).toEqual(WORST_FIRST);
    expect(VERDICTS.map((v) => VERDICT_TRAITS[v].rank).sort((a, b) => a - b)).toEqual(VERDICTS.map((_, i) => i));
  });

  it('never lets what cannot be checked be a problem or evictable without force', () => {
    for (const v of ['unverified', 'remote', 'live', 'held', 'suspended'] as const) {
      expect(VERDICT_TRAITS[v]).toMatchObject({ problem: false, evictable: false });
    }
  });

  it('marks exactly the problems with "!"', () => {
    expect(PROBLEM_VERDICTS).toEqual(['ghost', 'zombie', 'reused', 'superseded', 'pending', 'stale-claim']);
    expect(verdictsMarked('!')).toEqual(PROBLEM_VERDICTS);
    expect(verdictsMarked('?')).toEqual(['remote', 'unverified']);
    expect(verdictsMarked('-')).toEqual(['offline']);
    expect(verdictsMarked('=')).toEqual(['suspended']);
    expect(verdictsMarked(' ')).toEqual(['live', 'held']);
    expect(Object.keys(MARKER_MEANINGS)).toEqual(['!', '?', '-', '=']);
  });

  it('counts the problems for the status line by their short names, in the table\'s order', () => {
    const counts = { live: 9, 'stale-claim': 1, ghost: 2, offline: 3, unverified: 4, pending: 0, zombie: 1 };
    expect(problemCounts(counts)).toEqual(['2 ghost', '1 zombie', '1 stale']);
    expect(problemCounts({ live: 3, remote: 1, offline: 2, unverified: 1, held: 5 })).toEqual([]);
  });
});

// What the confirm dialog and `reap` say about the registries a selection touches: only the
// registries of the selected rows speak, one that cannot evict says why (first), one whose
// eviction does more than the plain removal says what.
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import { evictionNoteLines, evictionNotes, liveEvictionLines } from '../../src/engine/eviction-notes.js';
import type { SourceState } from '../../src/sources/types.js';
import { source } from '../support/ui-fixtures.js';

const row = (src: string, id: string): Finding => ({ source: src, id }) as unknown as Finding;

const PRUNE = 'agentctl prunes every dead record, not only the selected ones';

function registries(): SourceState[] {
  return [
    source({ name: 'hypivisor' }), // plain removal: no eviction field
    source({ name: 'agentctl', eviction: { available: true, note: PRUNE } }),
    source({ name: 'claude-files', eviction: { available: false, why: 'the files are read-only here' } }),
    source({ name: 'tmux-reg', eviction: { available: false } }),
    source({ name: 'quiet', eviction: { available: true } }),
  ];
}

describe('evictionNotes', () => {
  it('an empty selection says nothing, whatever the registries are', () => {
    const n = evictionNotes([], registries());
    expect(n.notes).toEqual([]);
    expect([...n.unavailable]).toEqual([]);
    expect(evictionNoteLines(n)).toEqual([]);
  });

  it('rows of a plain-removal registry only: nothing to say', () => {
    const n = evictionNotes([row('hypivisor', 'a'), row('hypivisor', 'b')], registries());
    expect(n).toEqual({ notes: [], unavailable: new Map() });
  });

  it('a registry whose eviction does more says it once, however many of its rows are selected', () => {
    const n = evictionNotes([row('agentctl', 'a'), row('agentctl', 'b'), row('hypivisor', 'c')], registries());
    expect(n.notes).toEqual([PRUNE]);
    expect([...n.unavailable]).toEqual([]);
    expect(evictionNoteLines(n)).toEqual([PRUNE]);
  });

  it('a registry that cannot evict now is named with its reason, "unavailable" when it gives none; an available one without a note says nothing', () => {
    const n = evictionNotes([row('claude-files', 'a'), row('tmux-reg', 'b'), row('quiet', 'c')], registries());
    expect(n.notes).toEqual([]);
    expect([...n.unavailable]).toEqual([
      ['claude-files', 'the files are read-only here'],
      ['tmux-reg', 'unavailable'],
    ]);
  });

  it('the note of an unavailable registry is not shown: it cannot do what the note says', () => {
    const n = evictionNotes([row('agentctl', 'a')], [source({ name: 'agentctl', eviction: { available: false, why: 'daemon down', note: PRUNE } })]);
    expect(n.notes).toEqual([]);
    expect([...n.unavailable]).toEqual([['agentctl', 'daemon down']]);
  });

  it('registries of rows not selected do not speak', () => {
    const n = evictionNotes([row('hypivisor', 'a')], registries());
    expect(n.notes).toEqual([]);
    expect(n.unavailable.size).toBe(0);
  });

  it('lines: the unavailable registries first, each sanitized and cut to 20 columns, then the notes', () => {
    const sources = [
      source({ name: 'agentctl', eviction: { available: true, note: PRUNE } }),
      source({ name: 'claude-files', eviction: { available: false, why: 'read-only' } }),
      source({ name: 'evil\u001b[2Jname-that-is-far-too-long', eviction: { available: false, why: 'no socket' } }),
    ];
    const n = evictionNotes([row('agentctl', 'a'), row('claude-files', 'b'), row('evil\u001b[2Jname-that-is-far-too-long', 'c')], sources);
    const lines = evictionNoteLines(n);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe('claude-files cannot evict now: read-only');
    expect(lines[1]).toBe('evil^[[2Jname-that-… cannot evict now: no socket');
    expect(lines[2]).toBe(PRUNE);
  });

  it('a running session: its registry\'s own lines once, the shared lines once for the registries without their own', () => {
    const FALLBACK = ['shared one', 'shared two'];
    const OWN = ['claude line one', 'claude line two'];
    const sources = [source({ name: 'hypivisor' }), source({ name: 'agentctl', eviction: { available: true, note: PRUNE } }), source({ name: 'claude', eviction: { available: true, liveNote: OWN } })];
    expect(liveEvictionLines([], sources, FALLBACK)).toEqual([]);
    expect(liveEvictionLines([row('claude', 'a'), row('claude', 'b')], sources, FALLBACK)).toEqual(OWN);
    expect(liveEvictionLines([row('hypivisor', 'a'), row('agentctl', 'b')], sources, FALLBACK)).toEqual(FALLBACK);
    expect(liveEvictionLines([row('claude', 'a'), row('hypivisor', 'b')], sources, FALLBACK)).toEqual([...FALLBACK, ...OWN]);
  });
});

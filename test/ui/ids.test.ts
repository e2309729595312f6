// Ids cut so that rows that differ read differently, and paths cut in the middle keeping their
// root: table tests of the pure functions, with UUIDv7 ids as pi-socket makes them.
import { describe, expect, it } from 'vitest';
import { chooseIdStyle, cutId, idShortener, rowShorteners } from '../../src/ui/ids.js';
import { shortenPath } from '../../src/ui/text.js';

// UUIDv7: 48 bits of milliseconds first. Sessions started seconds apart share the first 12 hex characters.
const V7 = [
  '019a3c4e-7b2f-7c3d-8e9f-0a1b2c3d4e5f',
  '019a3c4e-7b2f-7a11-9b22-33c4d5e6f708',
  '019a3c4e-7b2f-7f00-a1b2-c3d4e5f60718',
];
// Started within a few ms: they share 15 characters and differ only in their random tails.
const SAME_MS = ['019a3c4e-7b2f-7000-8000-00000000aaaa', '019a3c4e-7b2f-7000-8000-00000000bbbb'];

describe('id cutting', () => {
  it.each([
    // [ids, width, expected text of each]
    // The shared "019a3c4e-7b2f-7" collapsed to its first characters, then where they differ.
    [V7, 12, ['019…c3d-8e9…', '019…a11-9b2…', '019…f00-a1b…']],
    // Wide enough for the plain cut to reach where they differ: it is kept.
    [V7, 20, ['019a3c4e-7b2f-7c3d-…', '019a3c4e-7b2f-7a11-…', '019a3c4e-7b2f-7f00-…']],
    [SAME_MS, 12, ['019…aaaa', '019…bbbb']],
    [SAME_MS, 36, SAME_MS],
    // Ids that already differ in their start keep the plain cut.
    [['alpha-session-one', 'beta-session-two'], 8, ['alpha-s…', 'beta-se…']],
    // One id alone: the plain cut.
    [[V7[0]!], 12, ['019a3c4e-7b…']],
  ] as const)('%j at %i cells', (ids, width, expected) => {
    const cut = idShortener(ids);
    const shown = ids.map((id) => cut(id, width));
    expect(shown).toEqual(expected);
    for (const s of shown) expect(s.length).toBeLessThanOrEqual(width);
    expect(new Set(shown).size).toBe(new Set(ids).size);
  });

  it('today\'s plain cut would show UUIDv7 ids as one', () => {
    // The failure this fixes: every row read "019a3c4e-7b…".
    expect(new Set(V7.map((id) => cutId(id, 12, { kind: 'head' }))).size).toBe(1);
    expect(chooseIdStyle(V7, 12)).toEqual({ kind: 'skip', prefix: 15 });
  });

  it('keeps the end when the shared start is not where they differ', () => {
    const ids = ['run-2026-11-22-build-agent-0001-alpha', 'run-2026-11-22-build-agent-0001-bravo', 'run-2026-11-22-build-agent-0002-alpha'];
    const cut = idShortener(ids);
    const shown = ids.map((id) => cut(id, 10));
    expect(new Set(shown).size).toBe(3);
    expect(shown.every((s) => s.length <= 10)).toBe(true);
  });
});

describe('path cutting', () => {
  it.each([
    ['/home/ana/work/ghostwatch', '/home/ana', 40, '~/work/ghostwatch'],
    ['/home/ana/work/api-server/packages/gateway', '/home/ana', 24, '~/work/…/gateway'],
    ['/home/ana/work/api-server/packages/gateway', '/home/ana', 12, '~/…/gateway'],
    ['/srv/build/agents/one/two/project', undefined, 20, '/srv/build/…/project'],
    ['/srv/build/agents/one/two/project', undefined, 12, '/…/project'],
    ['/srv/a/b/c/d/very-long-project-name', undefined, 12, '/…oject-name'],
    ['/home/ana/a-really-long-worktree-name', '/home/ana', 10, '~/…ee-name'],
  ] as const)('%s (home %s) in %i cells: %s', (path, home, width, expected) => {
    const out = shortenPath(path, home, width);
    expect(out).toBe(expected);
    expect(out.length).toBeLessThanOrEqual(width);
  });
});

describe('the cutters of a table\'s rows', () => {
  type Row = { id: string; holder?: string };
  const idOf = (r: Row) => r.id;
  const holderOf = (r: Row) => r.holder ?? '-';
  const rows: Row[] = [{ id: V7[0]! }, { id: V7[1]!, holder: SAME_MS[0] }, { id: V7[2]! }];

  it('cut as idShortener cuts those ids and holders', () => {
    const cut = rowShorteners(rows, idOf, holderOf);
    expect(cut.ids).toEqual(V7);
    expect(cut.holders).toEqual(['-', SAME_MS[0], '-']);
    expect(V7.map((id) => cut.shortId(id, 12))).toEqual(V7.map((id) => idShortener(V7)(id, 12)));
    expect(cut.shortHolder(SAME_MS[0]!, 12)).toBe(idShortener(['-', SAME_MS[0]!, '-'])(SAME_MS[0]!, 12));
  });

  it('the same ids and holders in the same order (new row objects) keep the previous cutters', () => {
    const first = rowShorteners(rows, idOf, holderOf);
    expect(rowShorteners(rows.map((r) => ({ ...r })), idOf, holderOf, first)).toBe(first);
  });

  it.each<[string, Row[]]>([
    ['an id changed', [rows[0]!, { ...rows[1]!, id: SAME_MS[1]! }, rows[2]!]],
    ['a holder changed', [rows[0]!, { ...rows[1]!, holder: SAME_MS[1] }, rows[2]!]],
    ['the order changed', [rows[1]!, rows[0]!, rows[2]!]],
    ['a row fewer', rows.slice(0, 2)],
    ['a row more', [...rows, { id: 'x' }]],
  ])('%s: new cutters for the new rows', (_what, next) => {
    const first = rowShorteners(rows, idOf, holderOf);
    const again = rowShorteners(next, idOf, holderOf, first);
    expect(again).not.toBe(first);
    expect(again.ids).toEqual(next.map(idOf));
    expect(again.holders).toEqual(next.map(holderOf));
  });
});

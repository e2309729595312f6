import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { CLAIM_COLUMNS, columnsFor, GUTTER, layoutColumns, samePlacement, SESSION_COLUMNS, type PlacedColumn } from '../../src/ui/columns.js';
import { helpLines } from '../../src/ui/help.js';
import { visibleRows } from '../../src/ui/rows.js';
import { defaultPolicy, reconcile, type PidFacts } from '../../src/core/index.js';
import { bindingKeys, footerFor, keyCommand, KEYMAP } from '../../src/ui/keymap.js';
import { asciiPieces } from '../../src/ui/components/table.js';
import { cellWidth, fit, formatAge, headCells, shortenPath, tailCells, truncate } from '../../src/ui/text.js';

describe('columns', () => {
  it.each([200, 120, 100, 80, 60, 40])('fill exactly %i cells and drop by priority', (width) => {
    for (const cols of [SESSION_COLUMNS, CLAIM_COLUMNS]) {
      const placed = layoutColumns(cols, width);
      const used = GUTTER + placed.reduce((s, p) => s + p.width, 0) + placed.length - 1;
      expect(used).toBeLessThanOrEqual(width);
      if (placed.some((p) => p.column.flex)) expect(used).toBe(width);
      const kept = new Set(placed.map((p) => p.column));
      for (const dropped of cols.filter((c) => !kept.has(c))) {
        for (const k of kept) expect(k.priority).toBeLessThanOrEqual(dropped.priority);
      }
    }
  });
  it('keeps verdict, id and pid at 60 columns, drops the least important', () => {
    const ids = layoutColumns(SESSION_COLUMNS, 60).map((p) => p.column.id);
    expect(ids.slice(0, 3)).toEqual(['verdict', 'id', 'pid']);
    expect(ids).not.toContain('source');
    expect(layoutColumns(SESSION_COLUMNS, 200).map((p) => p.column.id)).toEqual(SESSION_COLUMNS.map((c) => c.id));
  });
  it('gives the spare cells first to what is cut, up to what it needs, then pads the flexible columns', () => {
    const widths = (placed: PlacedColumn[]) => Object.fromEntries(placed.map((p) => [p.column.id, p.width]));
    const needs = new Map([['id', 20], ['cwd', 30], ['status', 24], ['host', 10], ['source', 15]]);
    const wide = widths(layoutColumns(SESSION_COLUMNS, 200, { needs }));
    expect([wide.id! >= 20, wide.cwd! >= 30, wide.status, wide.source, wide.host]).toEqual([true, true, 24, 15, 10]);
    // Not enough for all: the flexible columns first (by weight), then the fixed ones by priority.
    // (Every column at its minimum (CPU% and MEM among them) takes 108 cells, 110 with the gutter.)
    const byWidth = (total: number) => {
      const w = widths(layoutColumns(SESSION_COLUMNS, total, { needs }));
      return [w.id, w.cwd, w.status, w.source];
    };
    expect(byWidth(110 + 28)).toEqual([20, 30, 10, 9]);
    expect(byWidth(110 + 28 + 14)).toEqual([20, 30, 24, 9]);
    expect(byWidth(110 + 28 + 14 + 6)).toEqual([20, 30, 24, 15]);
    const [id, cwd] = byWidth(110 + 6);
    expect([id! + cwd!, id! < 20, cwd! < 30]).toEqual([12 + 10 + 6, true, true]);
    // Measured again with the same result, the placement is the same (the App keeps the one it has).
    expect(samePlacement(layoutColumns(SESSION_COLUMNS, 140, { needs }), layoutColumns(SESSION_COLUMNS, 140, { needs: new Map(needs) }))).toBe(true);
    expect(samePlacement(layoutColumns(SESSION_COLUMNS, 140, { needs }), layoutColumns(SESSION_COLUMNS, 140))).toBe(false);
  });
  it('always shows the column the table is sorted by, in place of the least important that fits', () => {
    const ids = layoutColumns(SESSION_COLUMNS, 60, { keep: 'source' }).map((p) => p.column.id);
    expect(ids).toContain('source');
    expect(ids.slice(0, 2)).toEqual(['verdict', 'id']);
  });
});

describe('what each agent costs: CPU% and MEM', () => {
  const NOW = 1_800_000_000_000;
  const facts = (pid: number, usage: PidFacts['usage']): [number, PidFacts] => [pid, { pid, kill: 'ok', state: 'S', startedAt: NOW - 60_000, checkedAt: NOW, usage }];
  const findings = reconcile(
    {
      sessions: [
        { source: 'hypivisor', id: 'hot', machine: 'devbox', pid: 11 },
        { source: 'hypivisor', id: 'idle', machine: 'devbox', pid: 12 },
        { source: 'hypivisor', id: 'big', machine: 'devbox', pid: 13 },
        { source: 'hypivisor', id: 'far', machine: 'elsewhere', pid: 14 },
      ],
      claims: [],
    },
    { pids: new Map([facts(11, { cpuPct: 97.4, cpuOver: 'interval', rssBytes: 80 * 1024 * 1024 }), facts(12, { cpuPct: 0, cpuOver: 'interval', rssBytes: 900 * 1024 }), facts(13, { cpuPct: 1.25, cpuOver: 'life', rssBytes: 3 * 1024 ** 3 })]), ports: new Map() },
    NOW,
    defaultPolicy('devbox'),
  );
  const cell = (column: string, id: string) => {
    const c = SESSION_COLUMNS.find((x) => x.id === column)!;
    return c.value(findings.find((f) => f.id === id)!, { now: NOW }, c.width);
  };

  it('shows CPU % of a core and resident memory, "-" where unknown (another host)', () => {
    expect(['hot', 'idle', 'big', 'far'].map((id) => cell('cpu', id))).toEqual(['97', '0.0', '1.3', '-']);
    expect(['hot', 'idle', 'big', 'far'].map((id) => cell('mem', id))).toEqual(['80M', '900K', '3.0G', '-']);
  });

  it('sorts heaviest first, the unknown last', () => {
    const order = (sortColumn: string) => visibleRows(findings, { tab: 'sessions', filter: '', problemsOnly: false, sortColumn, sortReverse: false }, { now: NOW }).map((f) => f.id);
    expect(order('cpu')).toEqual(['hot', 'big', 'idle', 'far']);
    expect(order('mem')).toEqual(['big', 'hot', 'idle', 'far']);
  });

  it('are optional: shown from 100 columns, dropped at 80 like the other optional columns', () => {
    const ids = (width: number) => layoutColumns(columnsFor('sessions', undefined, 1), width).map((p) => p.column.id);
    expect(ids(80)).not.toContain('cpu');
    expect(ids(80)).not.toContain('mem');
    expect(ids(100)).toEqual(expect.arrayContaining(['cpu', 'mem']));
    expect(ids(200)).toEqual(['verdict', 'id', 'pid', 'cpu', 'mem', 'age', 'cwd', 'host', 'port', 'status']);
  });
});

describe('text', () => {
  it('fits by display width, including wide characters', () => {
    expect(fit('abc', 5)).toBe('abc  ');
    expect(fit('42', 5, 'right')).toBe('   42');
    expect(truncate('abcdef', 4)).toBe('abc…');
    const wide = fit('東京東京東京', 7);
    expect(stringWidth(wide)).toBe(7);
  });
  it('cuts plain ASCII and text with wide characters alike: the start, the end, or the start with a mark, in whole cells', () => {
    for (const text of ['0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', '東京-0190a1b2-東京']) {
      for (const width of [-1, 0, 1, 2, 7, 12, 40]) {
        const cut = truncate(text, width);
        expect(stringWidth(cut)).toBeLessThanOrEqual(Math.max(0, width));
        if (stringWidth(text) > width && width > 1) expect(cut.endsWith('…') && text.startsWith(cut.slice(0, -1))).toBe(true);
        const head = headCells(text, width);
        const tail = tailCells(text, width);
        expect(text.startsWith(head) && text.endsWith(tail)).toBe(true);
        expect(Math.max(stringWidth(head), stringWidth(tail))).toBeLessThanOrEqual(Math.max(0, width));
      }
    }
    expect([truncate('abcdef', 1), headCells('abcdef', 4), tailCells('abcdef', 4), tailCells('abc', 10)]).toEqual(['…', 'abcd', 'cdef', 'abc']);
  });
  it('counts cells as string-width does: ASCII and the ellipsis one each, the rest by string-width', () => {
    const texts = ['', 'abc', 'abc…', '~/work/…/gateway', '\u2026\u2026', '東京…', 'e\u0301', '\u{1F600}x', 'tab\there', '\u00a0nbsp', '~/work/<U+202E>evil', '…' + 'x'.repeat(200), '≥0m', '≥12h', '≥東'];
    expect(texts.map(cellWidth)).toEqual(texts.map((t) => stringWidth(t)));
    expect(texts.map(cellWidth)).toEqual([0, 3, 4, 16, 2, 5, 1, 3, 7, 5, 19, 201, 3, 4, 3]);
    expect([truncate('≥12h', 3), fit('≥6m', 5, 'right')]).toEqual(['≥1…', '  ≥6m']);
  });
  it('cuts a row in pieces each all printable ASCII or all not, which make the row again', () => {
    const rows = ['', 'plain ascii row', ' !ghost      019c1c68-b4b0-7123-8d55-5fdc15da7…    4317  ≥0m ~/work', '東京…x', '…', 'tab\there', 'a\u00a0b'];
    for (const row of rows) {
      const pieces = asciiPieces(row);
      expect(pieces.join('')).toBe(row);
      for (const p of pieces) expect(/^[\x20-\x7e]+$/.test(p) || /^[^\x20-\x7e]+$/.test(p)).toBe(true);
    }
    expect(asciiPieces(rows[2]!)).toEqual([' !ghost      019c1c68-b4b0-7123-8d55-5fdc15da7', '…', '    4317  ', '≥', '0m ~/work']);
    expect(asciiPieces('東京…x')).toEqual(['東京…', 'x']);
    expect(asciiPieces('')).toEqual([]);
  });
  it('shortens paths with ~ and a middle ellipsis, keeping the last part', () => {
    expect(shortenPath('/home/ana/work/ghostwatch', '/home/ana', 40)).toBe('~/work/ghostwatch');
    expect(shortenPath('/home/ana/work/api-server/packages/gateway', '/home/ana', 24)).toBe('~/work/…/gateway');
    expect(shortenPath('/srv/a/b/c/d/very-long-project-name', undefined, 12)).toBe('/…oject-name');
    expect(shortenPath('/home/anabel/x', '/home/ana', 40)).toBe('/home/anabel/x');
  });
  it('ages are coarse, so they change at most once a minute', () => {
    expect([formatAge(5_000), formatAge(61_000), formatAge(3 * 3_600_000), formatAge(3 * 86_400_000), formatAge(undefined)]).toEqual(['<1m', '1m', '3h', '3d', '-']);
  });
});

describe('keymap', () => {
  it('the help overlay lists every binding of the keymap', () => {
    const help = helpLines();
    for (const b of KEYMAP) expect(help).toContainEqual({ label: bindingKeys(b), value: b.description });
  });
  it('the footer shows only bindings of the keymap, for the mode', () => {
    const words = footerFor('table').map((f) => f.word);
    expect(words).toEqual(KEYMAP.filter((b) => b.footer && b.modes.includes('table')).map((b) => b.footer));
    expect(footerFor('confirm').map((f) => f.word)).toEqual(['yes', 'no']);
  });
  it('maps keys to commands per mode', () => {
    expect(keyCommand({ input: 'j' }, 'table')?.command).toBe('nav.down');
    expect(keyCommand({ input: '', downArrow: true }, 'table')?.command).toBe('nav.down');
    expect(keyCommand({ input: 'd', ctrl: true }, 'table')?.command).toBe('evict.selected');
    expect(keyCommand({ input: 'q' }, 'table')?.command).toBe('app.quit');
    expect(keyCommand({ input: 'q' }, 'detail')?.command).toBe('view.back');
    expect(keyCommand({ input: 'c', ctrl: true }, 'confirm')?.command).toBe('app.quit');
    expect(keyCommand({ input: 'y' }, 'table')?.command).toBeUndefined();
    expect(keyCommand({ input: '', return: true }, 'confirm')?.command).toBe('confirm.no');
  });
  it('no key means two things in one mode', () => {
    for (const mode of ['table', 'detail', 'help', 'confirm', 'confirm-force'] as const) {
      const seen = new Map<string, string>();
      for (const b of KEYMAP.filter((x) => x.modes.includes(mode))) {
        for (const k of b.keys) {
          const label = `${k.key ?? ''}|${k.char ?? ''}|${k.ctrl ?? ''}`;
          expect(seen.get(label) ?? b.command, `${mode}: ${label}`).toBe(b.command);
          seen.set(label, b.command);
        }
      }
    }
  });
});

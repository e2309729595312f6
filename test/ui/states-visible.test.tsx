// Every state visible (issue 15): the header says read-only, each source's state and every count
// whole at 80x24 and 60x15; the footer keeps `? help` and `q quit`; the sort and its direction
// show on the title line, the default order included.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { App } from '../../src/ui/app.js';
import type { KeptView } from '../../src/ui/view-state.js';
import { countForms } from '../../src/ui/components/header.js';
import type { Engine } from '../../src/engine/types.js';
import { FIXED_NOW, multiSourceEngine, StaticEngine } from '../support/ui-fixtures.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';


export async function frameOf(engine: Engine, size: { columns: number; rows: number }, opts: { readOnly?: boolean; keys?: string[] } = {}): Promise<string[]> {
  const r = render(<App engine={engine} readOnly={opts.readOnly} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => {}} />);
  await firstFrame(r);
  await typeKeys(r, opts.keys ?? []);
  const lines = (r.lastFrame() ?? '').split('\n');
  r.unmount();
  return lines;
}

const SIZES = [
  { columns: 80, rows: 24 },
  { columns: 60, rows: 15 },
];

describe('the header and the footer at 80x24 and 60x15', () => {
  it.each(SIZES)('the header says read-only and keeps its counts whole (%o)', async (size) => {
    for (const engine of [new StaticEngine(), multiSourceEngine({ agentctlDown: true })]) {
      const lines = await frameOf(engine, size, { readOnly: true });
      const first = lines[0]!;
      expect(first).toMatch(/^ghostwatch read-only /);
      // One of the forms of the counts, whole, ends the line.
      const forms = countForms(engine.getSnapshot()).map((f) => f.map((s) => s.text).join(''));
      expect(forms.some((f) => first.trimEnd().endsWith(f.trim()))).toBe(true);
      expect(first.length).toBeLessThanOrEqual(size.columns);
    }
  });

  it('each source says its connection state, one line each at 80x24', async () => {
    const top = (await frameOf(multiSourceEngine({ agentctlDown: true }), { columns: 80, rows: 24 })).slice(0, 6).join('\n');
    for (const re of [/hypivisor\s+connected/, /agentctl\s+files only/, /claude\s+watching/, /claude-view\s+absent/, /claude-sessions\s+watching/]) expect(top).toMatch(re);
  });

  it('folded into the first line of a short pane, the sources in trouble come first', async () => {
    const first = (await frameOf(multiSourceEngine({ agentctlDown: true }), { columns: 60, rows: 15 }))[0]!;
    expect(first).toMatch(/^ghostwatch  agentctl files only  claude-view/);
    expect(first).toMatch(/ 9 problems$/);
  });

  it('with everything fitting, the counts follow the states in one flow', async () => {
    const lines = await frameOf(new StaticEngine(), { columns: 200, rows: 24 });
    expect(lines[0]).toMatch(/^ghostwatch  hypivisor connected  devbox  2 ghost 1 zombie/);
  });

  it.each([...SIZES, { columns: 200, rows: 24 }])('the footer keeps "? help" and "q quit", the keys the row needs go first (%o)', async (size) => {
    for (const readOnly of [false, true]) {
      const footer = (await frameOf(new StaticEngine(), size, { readOnly })).at(-1)!;
      expect(footer).toMatch(/\?\s+help\s+q\s+quit\s*$/);
      // The cursor starts on a ghost: evicting it first, unless eviction is off.
      expect(footer).toMatch(readOnly ? /^ Enter\s+details/ : /^ d\s+evict/);
    }
    // In the detail view: help and the way back.
    const detail = (await frameOf(new StaticEngine(), size, { keys: ['\r'] })).at(-1)!;
    expect(detail).toMatch(/\?\s+help/);
    expect(detail).toMatch(/Esc\s+back/);
  });
});

describe('the sort on the title line', () => {
  it('the default order (verdict, worst first) is marked, and r reverses it visibly', async () => {
    const before = await frameOf(new StaticEngine(), { columns: 80, rows: 24 });
    const title = before.find((l) => /VERDICT/.test(l))!;
    expect(title).toMatch(/VERDICTv/);
    const after = await frameOf(new StaticEngine(), { columns: 80, rows: 24 }, { keys: ['r'] });
    expect(after.find((l) => /VERDICT/.test(l))).toMatch(/VERDICT\^/);
    expect(after.at(-2)).toMatch(/sorted by verdict \(reversed\)/);
  });

  it('a chosen column carries the mark instead', async () => {
    // verdict, session, pid, then CPU% and MEM (not shown at 80 columns), then AGE.
    const lines = await frameOf(new StaticEngine(), { columns: 80, rows: 24 }, { keys: ['>', '>', '>', '>', '>', '>'] });
    const title = lines.find((l) => /VERDICT/.test(l))!;
    expect(title).toMatch(/AGEv/);
    expect(title).not.toMatch(/VERDICTv/);
  });

  it('counts say "1 problem", not "1 problems"', async () => {
    const { demoFindings } = await import('../support/ui-fixtures.js');
    const one = demoFindings().filter((f) => f.kind === 'session' && (f.verdict === 'live' || f.id === 'c0ffee00-ghost'));
    const lines = await frameOf(new StaticEngine(one), { columns: 80, rows: 24 });
    expect(lines.at(-2)).toMatch(/^5 sessions {2}\| {2}1 problem\b/);
  });
});

describe('kept view choices', () => {
  it('the kept sort and problems-only are shown from the first frame; a change is handed back to keep', async () => {
    const kept: KeptView[] = [];
    const r = render(
      <App engine={new StaticEngine()} now={() => FIXED_NOW} home="/home/ana" size={{ columns: 80, rows: 24 }} onQuit={() => {}} kept={{ tab: 'sessions', sortColumn: 'age', sortReverse: true, problemsOnly: true }} onKeep={(k) => kept.push(k)} />,
    );
    await firstFrame(r);
    const lines = (r.lastFrame() ?? '').split('\n');
    expect(lines.find((l) => /VERDICT/.test(l))).toMatch(/AGE\^/);
    expect(lines.at(-2)).toMatch(/problems only/);
    expect(lines.join('\n')).not.toMatch(/ live /);
    expect(kept).toEqual([]);
    await typeKeys(r, ['r', 'p']);
    r.unmount();
    expect(kept).toEqual([
      { tab: 'sessions', sortColumn: 'age', sortReverse: false, problemsOnly: true },
      { tab: 'sessions', sortColumn: 'age', sortReverse: false, problemsOnly: false },
    ]);
  });

  it('a kept column the tab does not have is the default order', async () => {
    const lines = await new Promise<string[]>((resolve) => {
      const r = render(<App engine={new StaticEngine()} now={() => FIXED_NOW} size={{ columns: 80, rows: 24 }} onQuit={() => {}} kept={{ tab: 'sessions', sortColumn: 'holder', sortReverse: false, problemsOnly: false }} />);
      setTimeout(() => {
        resolve((r.lastFrame() ?? '').split('\n'));
        r.unmount();
      }, 30);
    });
    expect(lines.find((l) => /VERDICT/.test(l))).toMatch(/VERDICTv/);
  });
});

describe('before the first probe, and how long a ghost has been dead', () => {
  it.each(SIZES)('rows waiting for their first probe say "checking…", never unverified (%o)', async (size) => {
    const { demoFindings } = await import('../support/ui-fixtures.js');
    const { reconcile, defaultPolicy } = await import('../../src/core/index.js');
    const { demoView, HOST } = await import('../support/ui-fixtures.js');
    // The real reconcile with no OS facts yet: every local entry is unverified for want of a probe.
    const bare = reconcile(demoView().view, { pids: new Map(), ports: new Map() }, FIXED_NOW, defaultPolicy(HOST));
    const marked = bare.map((f) => (f.verdict === 'unverified' && f.evidence.host.local && f.kind === 'session' ? { ...f, checking: true as const } : f));
    const checking = marked.filter((f) => 'checking' in f).length;
    expect(checking).toBeGreaterThan(5);
    const lines = await frameOf(new StaticEngine(marked, { settled: false, checking }), size);
    const rows = lines.filter((l) => /^[ >][ *] /.test(l));
    expect(rows.filter((l) => /checking…/.test(l)).length).toBe(Math.min(checking, rows.length));
    expect(lines.join('\n')).not.toMatch(/unverified|stopped/);
  });

  it('a dead problem row shows how long it has been dead in AGE, and the detail says since when', async () => {
    const { demoFindings } = await import('../support/ui-fixtures.js');
    const rows = demoFindings().map((f) => (f.id === 'c0ffee00-ghost' ? { ...f, deadSince: FIXED_NOW - 7 * 60_000 } : f));
    const lines = await frameOf(new StaticEngine(rows), { columns: 80, rows: 24 });
    // Registered 5 h ago; dead for 7 minutes.
    expect(lines.find((l) => /c0ffee00-gh/.test(l))).toMatch(/40777\s+7m /);
    const detail = (await frameOf(new StaticEngine(rows), { columns: 80, rows: 24 }, { keys: ['\r'] })).join('\n');
    expect(detail).toMatch(/dead since\s+\d\d:\d\d:\d\d \(7m00s ago\)/);
  });
});

describe('evidence says when it was checked, truthfully', () => {
  it('the engine\'s last check, not the first time of the facts: "checked 0.2 s ago"', async () => {
    const engine = new StaticEngine();
    const ghost = engine.getSnapshot().findings.find((f) => f.id === 'c0ffee00-ghost')!;
    // The facts date from 5m42s ago; the OS was asked 0.2 s ago.
    const rows = engine.getSnapshot().findings.map((f) => (f === ghost ? { ...f, evidence: { ...f.evidence, checkedAt: FIXED_NOW - 342_000 } } : f));
    engine.set(rows);
    engine.checked.set('c0ffee00-ghost', FIXED_NOW - 200);
    const detail = (await frameOf(engine, { columns: 80, rows: 40 }, { keys: ['\r'] })).join('\n');
    expect(detail).toMatch(/checked\s+0\.2 s ago/);
    expect(detail).not.toMatch(/5m42s ago/);
  });

  it('checkedText: tenths of a second under ten seconds, then a duration', async () => {
    const { checkedText } = await import('../../src/ui/detail.js');
    expect([checkedText(0, 200), checkedText(0, 9_950), checkedText(0, 12_000), checkedText(0, 342_000), checkedText(500, 0)]).toEqual(['0.2 s ago', '9.9 s ago', '12s ago', '5m42s ago', '0.0 s ago']);
  });
});

describe('column widths and the detail view', () => {
  it('CWD gets the room; STATUS and SOURCE stay narrow however wide the pane', async () => {
    const { layoutColumns, SESSION_COLUMNS } = await import('../../src/ui/columns.js');
    for (const width of [120, 160, 200, 300]) {
      const placed = layoutColumns(SESSION_COLUMNS, width);
      const w = (id: string) => placed.find((p) => p.column.id === id)?.width ?? 0;
      expect(w('status') + w('source'), `${width}`).toBeLessThanOrEqual(25);
      expect(Math.max(...placed.map((p) => p.width)), `${width}`).toBe(w('cwd'));
    }
  });

  it('a long value wraps onto the lines under its label instead of being cut', async () => {
    const { wrapLines } = await import('../../src/ui/components/panel.js');
    const long = `/home/ana/${'deeply/nested/'.repeat(8)}project`;
    const wrapped = wrapLines([{ label: 'cwd', value: long }, { label: 'x', value: 'short' }], 60);
    expect(wrapped.length).toBeGreaterThan(2);
    expect(wrapped[0]!.label).toBe('cwd');
    expect(wrapped.slice(1, -1).every((l) => l.label === '')).toBe(true);
    expect(wrapped.slice(0, -1).map((l) => l.value).join('')).toBe(long);
    // Words break at a space when one is near.
    const words = wrapLines([{ label: 'why', value: 'pid 0 and negative pids address process groups; nothing listens on port 7001' }], 60);
    expect(words.map((l) => l.value)).toEqual(['pid 0 and negative pids address process', 'groups; nothing listens on port 7001']);
  });

  it.each(SIZES)('the detail view shows the whole of a long cwd (%o)', async (size) => {
    const { demoFindings } = await import('../support/ui-fixtures.js');
    const long = `/home/ana/${'deeply/nested/'.repeat(6)}the-end-of-it`;
    const rows = demoFindings().map((f) => (f.id === 'c0ffee00-ghost' && f.kind === 'session' ? { ...f, entry: { ...f.entry, raw: { ...f.entry.raw, cwd: long } } } : f));
    const keys = ['\r', ...Array(6).fill('j')];
    const text = (await frameOf(new StaticEngine(rows), size, { keys })).join('\n');
    expect(text).toMatch(/the-end-of-it/);
    expect(text).not.toMatch(/deeply\/nes…/);
  });
});

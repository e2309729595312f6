// What a user needs now is on the screen in the common pane sizes: the evict dialog (the last
// screen before harm) wraps every line instead of cutting it, at 80x24 and at 60x15; the help is
// grouped by the view a key works in; --read-only does not mark; y on a dialog where every entry
// needs force says why and offers f; the summary names what was evicted; the too-small message
// fits the pane it is shown in.
import { render } from 'ink-testing-library';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../src/ui/app.js';
import { wrapText } from '../../src/ui/text.js';
import { downEngine, FIXED_NOW, fleetEngine, StaticEngine } from '../support/ui-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
});

async function app(engine: StaticEngine, size: { columns: number; rows: number }, opts: { readOnly?: boolean; inTmux?: boolean } = {}) {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => {}} readOnly={opts.readOnly} inTmux={opts.inTmux} />);
  unmounts.push(() => r.unmount());
  await sleep(30);
  const send = async (chunk: string) => {
    r.stdin.write(chunk);
    await sleep(30);
  };
  const frame = () => stripVTControlCharacters(r.lastFrame() ?? '');
  return { send, frame };
}

/** The frame's lines joined as one text, so a wrapped sentence reads whole. */
const joined = (frame: string) => frame.split('\n').map((l) => l.trim()).join(' ').replace(/\s+/g, ' ');

describe('the evict dialog wraps, never cuts', () => {
  for (const size of [{ columns: 80, rows: 24 }, { columns: 60, rows: 15 }]) {
    it(`at ${size.columns}x${size.rows} a remote ghost's reason, host and pid are all there`, async () => {
      const a = await app(fleetEngine(), size);
      await a.send('/b42-nightly');
      await a.send('\r');
      await a.send('d');
      await expect.poll(() => a.frame()).toMatch(/Evict 1 entry/);
      const text = joined(a.frame());
      expect(text).toMatch(/pid 4243/);
      expect(text).toMatch(/\(via ssh build-42/);
      // Nothing of the dialog is cut (the header's line above it has its own rules).
      expect(a.frame().split('\n').slice(1).join('\n')).not.toMatch(/…/);
      for (const line of a.frame().split('\n')) expect(line.length).toBeLessThanOrEqual(size.columns);
    });
  }
});

describe('wrapText', () => {
  it('breaks at spaces, indents what follows, keeps every character', () => {
    const text = 'ghost session b42-nightly pid 4243: pid 4243 is gone (ESRCH) (via ssh build-42, rtt 12 ms)';
    const lines = wrapText(text, 30, '    ');
    expect(lines.every((l) => l.length <= 30)).toBe(true);
    expect(lines.slice(1).every((l) => l.startsWith('    '))).toBe(true);
    expect(lines.map((l) => l.trim()).join(' ')).toBe(text);
  });
  it('cuts a word longer than the line anywhere, and survives a width of 1', () => {
    expect(wrapText('abcdefghij', 4)).toEqual(['abcd', 'efgh', 'ij']);
    expect(wrapText('ab c', 1).join('')).toBe('abc');
    expect(wrapText('', 10)).toEqual(['']);
  });
});

describe('the footer offers what the row needs first', () => {
  const footer = (frame: string) => frame.split('\n').at(-1) ?? '';
  it('at 80x24 on a ghost: d evict first, then details, mark, claims, events; help and quit always', async () => {
    const a = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await expect.poll(() => a.frame()).toMatch(/c0ffee00/);
    const f = footer(a.frame());
    expect(f.trim()).toMatch(/^d\s+evict\s+Enter\s+details\s+Space\s+mark\s+Tab\s+claims\s+e\s+events\s+\?\s+help\s+q\s+quit$/);
    expect(f.length).toBeLessThanOrEqual(80);
  });
  it('on a live row evicting is not offered first; marks make it first again', async () => {
    const a = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await a.send('/live-agent');
    await a.send('\r');
    await expect.poll(() => footer(a.frame())).toMatch(/^ Enter\s+details/);
    await a.send(' ');
    await expect.poll(() => footer(a.frame())).toMatch(/^ d\s+evict/);
  });
  it('an empty table (the registry not connected, or a filter that matches nothing) offers no key that acts on a row', async () => {
    const down = await app(downEngine({ cause: 'connection refused', status: 'unreachable', kept: false }), { columns: 100, rows: 16 });
    await expect.poll(() => down.frame()).toMatch(/not connected \(hypivisor: connection refused\)/);
    expect(footer(down.frame()).trim()).toMatch(/^Tab\s+claims\s+e\s+events\s+\/\s+filter\s+p\s+problems\s+\?\s+help\s+q\s+quit$/);
    const a = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await a.send('/no-such-row');
    await a.send('\r');
    await expect.poll(() => footer(a.frame())).not.toMatch(/evict|details|mark/);
    await a.send('\u001b'); // Esc clears the filter: the rows and their keys are back
    await expect.poll(() => footer(a.frame())).toMatch(/^ d\s+evict/);
    // A marked row hidden by the filter: d still evicts it, so it is still offered (first).
    await a.send(' ');
    await a.send('/no-such-row');
    await a.send('\r');
    await expect.poll(() => footer(a.frame())).toMatch(/^ d\s+evict/);
    expect(footer(a.frame())).not.toMatch(/details|mark/);
  });
  it('--read-only never puts evicting first', async () => {
    const r = render(<App engine={new StaticEngine()} now={() => FIXED_NOW} home="/home/ana" size={{ columns: 80, rows: 24 }} readOnly onQuit={() => {}} />);
    unmounts.push(() => r.unmount());
    await expect.poll(() => stripVTControlCharacters(r.lastFrame() ?? '')).toMatch(/c0ffee00/);
    expect(footer(stripVTControlCharacters(r.lastFrame() ?? ''))).toMatch(/^ Enter\s+details/);
  });
});

const PAGE_DOWN = '\u001b[6~';
const statusLine = (frame: string) => frame.split('\n').at(-2) ?? '';

/** Every line of the help overlay at this size, page by page (the last page may repeat a few). */
async function helpText(a: Awaited<ReturnType<typeof app>>): Promise<string[]> {
  await a.send('?');
  await expect.poll(() => a.frame()).toMatch(/keys: /);
  const seen: string[] = [];
  for (let page = 0; page < 20; page++) {
    const body = a.frame().split('\n').slice(1, -2);
    seen.push(...body);
    if (/verdicts|held/.test(body.join('\n')) && / held /.test(body.join('\n'))) break;
    await a.send(PAGE_DOWN);
  }
  return seen.map((l) => l.trimEnd());
}

describe('the help is grouped by the view a key works in (lazygit)', () => {
  it('at 80x24: every list, table, filter prompt, detail view, events and help, evict dialog; Enter means one thing in each', async () => {
    const a = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await expect.poll(() => a.frame()).toMatch(/c0ffee00/);
    const lines = await helpText(a);
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    const headings = [/^keys: in every list/, /^keys: table$/, /^keys: filter prompt \(\/\)$/, /^keys: detail view \(Enter\)$/, /^keys: events and this help \(e, \?\)$/, /^keys: evict dialog \(d Ctrl-D, X\)$/, /^markers$/];
    const where = headings.map(at);
    expect(where.every((i) => i >= 0), JSON.stringify(where)).toBe(true);
    expect([...where].sort((x, y) => x - y)).toEqual(where);
    const section = (re: RegExp) => where.findLastIndex((h) => h <= at(re));
    // Enter opens the details in the table, keeps the filter at its prompt, says No in the dialog.
    expect(section(/^ {2}Enter\s+details and evidence/)).toBe(1);
    expect(section(/^ {2}Enter\s+keep the filter/)).toBe(2);
    expect(section(/^ {2}n Esc Enter\s+cancel \(the default\)/)).toBe(5);
    // d in the details too, where it evicts the row shown.
    expect(lines.slice(where[3], where[4]).join('\n')).toMatch(/ d Ctrl-D\s+evict/);
    for (const l of a.frame().split('\n')) expect(l.length).toBeLessThanOrEqual(80);
  });

  it('page up is PgUp, Ctrl-B or b; inside tmux, whose prefix Ctrl-B is, the help says PgUp b', async () => {
    for (const inTmux of [false, true]) {
      const a = await app(new StaticEngine(), { columns: 80, rows: 24 }, { inTmux });
      await expect.poll(() => a.frame()).toMatch(/c0ffee00/);
      await a.send('?');
      await expect.poll(() => a.frame()).toMatch(/page up/);
      expect(a.frame()).toMatch(inTmux ? /^ {2}PgUp b\s+page up$/m : /^ {2}PgUp Ctrl-B b\s+page up$/m);
    }
  });
});

describe('--read-only', () => {
  it('a and Space do not mark (marks are for evicting) and say so; the footer offers no marks; the details say read-only, not evictable', async () => {
    const a = await app(new StaticEngine(), { columns: 80, rows: 24 }, { readOnly: true });
    await expect.poll(() => a.frame()).toMatch(/c0ffee00/);
    expect(a.frame().split('\n').at(-1)).not.toMatch(/mark/);
    await a.send('a');
    await expect.poll(() => statusLine(a.frame())).toMatch(/^read-only: no marks \(they are for evicting, which is off\)( {2}\| {2}\d+ problems?)?$/);
    expect(a.frame()).not.toMatch(/^.\*/m);
    await a.send(' ');
    expect(a.frame()).not.toMatch(/^.\*/m);
    expect(statusLine(a.frame())).toMatch(/^read-only: no marks/);
    await a.send('\r');
    await expect.poll(() => a.frame()).toMatch(/verdict\s+ghost, a problem, read-only/);
    expect(a.frame()).not.toMatch(/evictable/);
  });
});

describe('y on a dialog where every entry needs force', () => {
  it('says why nothing is sent and keeps the dialog open on f, which evicts anyway', async () => {
    const engine = new StaticEngine();
    const a = await app(engine, { columns: 80, rows: 24 });
    await a.send('/7f3a9c1e');
    await a.send('\r');
    await a.send('d');
    await expect.poll(() => a.frame()).toMatch(/Evict 1 entry/);
    await a.send('y');
    await expect.poll(() => a.frame()).toMatch(/needs force/);
    await a.send('y');
    await expect.poll(() => statusLine(a.frame())).toMatch(/^nothing sent: it needs force; f evicts anyway( {2}\| {2}\d+ problems?)?$/);
    expect(joined(a.frame())).toMatch(/y sends nothing here: it needs force\. f: evict anyway\. n: cancel\./);
    expect(engine.evictions).toEqual([]);
    await a.send('f');
    await expect.poll(() => engine.evictions.length).toBe(1);
    expect(engine.evictions[0]!.force).toBe(true);
    expect(engine.evictions[0]!.selection.map((f) => f.id)).toEqual(['7f3a9c1e-live-agent']);
  });
});

describe('the eviction summary names what went', () => {
  it('one entry: "evicted ghost c0ffee00-ghost"; several: the count and the first', async () => {
    const one = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await expect.poll(() => one.frame()).toMatch(/c0ffee00/);
    await one.send('d');
    await expect.poll(() => one.frame()).toMatch(/Evict 1 entry/);
    await one.send('y');
    await expect.poll(() => statusLine(one.frame())).toMatch(/^evicted ghost c0ffee00-ghost( {2}\| {2}\d+ problems?)?$/);

    const many = await app(new StaticEngine(), { columns: 80, rows: 24 });
    await expect.poll(() => many.frame()).toMatch(/c0ffee00/);
    await many.send('X');
    await expect.poll(() => many.frame()).toMatch(/Evict \d+ entries/);
    await many.send('y');
    await expect.poll(() => statusLine(many.frame())).toMatch(/^evicted (\d+): ghost c0ffee00-ghost and \d+ more/);
    const [, n, more] = /^evicted (\d+): .* and (\d+) more/.exec(statusLine(many.frame()))!;
    expect(Number(more)).toBe(Number(n) - 1);
  });
});

describe('the too-small message fits the pane it is shown in', () => {
  it.each([
    { columns: 39, rows: 24 },
    { columns: 39, rows: 6 },
    { columns: 40, rows: 5 },
    { columns: 20, rows: 4 },
    { columns: 10, rows: 3 },
  ])('%o: whole lines, never cut, what it needs first', async (size) => {
    const a = await app(new StaticEngine(), size);
    await expect.poll(() => a.frame()).toMatch(/needs/);
    const lines = a.frame().split('\n');
    expect(lines.length).toBeLessThan(size.rows);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(size.columns);
    const text = joined(a.frame());
    expect(text).not.toMatch(/…/);
    expect(text).toMatch(/^ghostwatch needs 40x6\b/);
    if (size.rows >= 5) expect(text).toBe(`ghostwatch needs 40x6 this pane: ${size.columns}x${size.rows} q quits`);
  });
});

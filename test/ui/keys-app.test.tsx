// The real App fed byte chunks as a terminal sends them (ink's test harness): every byte is a key,
// a paste at the filter prompt is text, Esc clears a kept filter, n/N find matches, X evicts
// what the view shows, the confirm list scrolls, and a running eviction can be cancelled.
import { render } from 'ink-testing-library';
import { stripVTControlCharacters } from 'node:util';
import chalk from 'chalk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import type { EvictRequest, EvictSummary } from '../../src/engine/types.js';
import { App } from '../../src/ui/app.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ESC = '\u001b';
const unmounts: (() => void)[] = [];
// Colours on (16 colours), so the dialog's colours can be read off the frame.
let level: typeof chalk.level;
beforeAll(() => {
  level = chalk.level;
  chalk.level = 1;
});
afterAll(() => {
  chalk.level = level;
});
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
});

async function app(engine: StaticEngine = new StaticEngine(), size = { columns: 120, rows: 30 }) {
  let quits = 0;
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => quits++} />);
  unmounts.push(() => r.unmount());
  await sleep(30);
  const send = async (chunk: string) => {
    r.stdin.write(chunk);
    await sleep(30);
  };
  /** The frame as text; `raw` keeps its colours. */
  const frame = () => stripVTControlCharacters(r.lastFrame() ?? '');
  const raw = () => r.lastFrame() ?? '';
  /** The id on the cursor's row ("> !ghost  c0ffee00-ghost ..."). */
  const cursorRow = () => /^> \s?\S+\s+(\S+)/m.exec(frame())?.[1];
  /** The cursor's row shows `id`, whole or cut to the SESSION column's width ("a0a0a0a0-old-sessi…"). */
  const cursorOn = (id: string) => {
    const shown = cursorRow();
    return shown === id || (shown !== undefined && shown.endsWith('…') && id.startsWith(shown.slice(0, -1))) ? id : shown;
  };
  return { r, send, frame, raw, cursorRow, cursorOn, engine, quits: () => quits };
}

describe('every byte of a chunk is a key', () => {
  it('jjj in one read moves three rows; kk back two', async () => {
    const a = await app();
    await expect.poll(() => a.cursorOn('c0ffee00-ghost')).toBe('c0ffee00-ghost');
    await a.send('jjj');
    await expect.poll(() => a.cursorOn('e7e7e7e7-reused')).toBe('e7e7e7e7-reused');
    await a.send('kk');
    await expect.poll(() => a.cursorOn('evil^[[2J^[]0;pwned^G')).toBe('evil^[[2J^[]0;pwned^G');
  });

  it('qq in one read quits (twice asked, once is enough)', async () => {
    const a = await app();
    await a.send('qq');
    await expect.poll(() => a.quits()).toBe(2);
  });

  it('arrows inside a chunk are keys: Down Down Up j', async () => {
    const a = await app();
    await a.send(`${ESC}[B${ESC}[B${ESC}[Aj`);
    await expect.poll(() => a.cursorOn('d15ea5e0-zombie')).toBe('d15ea5e0-zombie');
  });
});

describe('the filter', () => {
  it('a paste at the prompt is taken whole: its text, not its control bytes or sequences, and no key after a line break', async () => {
    const a = await app();
    await a.send('/');
    // A paste as typed (no brackets): a colour sequence, a line break and then "X" and "y" (evict, yes!).
    await a.send(`zom${ESC}[31mbie\r\nXy`);
    await expect.poll(() => a.frame()).toMatch(/\/zombieXy_/);
    expect(a.engine.evictions).toEqual([]);
    // A bracketed paste: one piece of text.
    await a.send('\u007f'.repeat(9));
    await a.send(`${ESC}[200~zomb\u0007${ESC}[2J\r\n${ESC}[201~`);
    await expect.poll(() => a.frame()).toMatch(/\/zomb _/);
    await a.send('\r');
    await expect.poll(() => a.frame()).toMatch(/1 session {2}\| {2}7 problems {2}\| {2}filter "zomb "/);
    await expect.poll(() => a.frame()).toContain('d15ea5e0-zombie');
  });

  it('escape sequences at the prompt are dropped, never thrown on (Ink 6.8 threw a TypeError on ESC[31m)', async () => {
    const a = await app();
    await a.send('/');
    for (const chunk of [`ab${ESC}[31mcd`, `${ESC}[31m`, `${ESC}]0;x\u0007`, `${ESC}[200~e${ESC}[201~`]) expect(() => a.r.stdin.write(chunk)).not.toThrow();
    await expect.poll(() => a.frame()).toMatch(/\/abcd0;xe_/);
  });

  it('Esc clears a kept filter: every row comes back', async () => {
    const a = await app();
    await a.send('/');
    await a.send('zombie');
    await a.send('\r');
    await expect.poll(() => a.frame()).toMatch(/^1 session .*filter "zombie"/m);
    await a.send(ESC);
    await sleep(20);
    await expect.poll(() => a.frame()).toMatch(/^13 sessions {2}\| {2}7 problems *$/m);
  });

  it('n and N go to the next and previous match, round the end', async () => {
    const a = await app();
    await a.send('/');
    await a.send('work/ghostwatch');
    await a.send('\r');
    const matches: string[] = ['a0a0a0a0-old-session', '9e9e9e9e-remote', '7f3a9c1e-live-agent', 'a1a1a1a1-new-session'];
    await expect.poll(() => a.cursorOn(matches[0]!)).toBe(matches[0]);
    await a.send('n');
    await expect.poll(() => a.cursorOn(matches[1]!)).toBe(matches[1]);
    await a.send('nn');
    await expect.poll(() => a.cursorOn(matches[3]!)).toBe(matches[3]);
    await a.send('n');
    await expect.poll(() => a.cursorOn(matches[0]!)).toBe(matches[0]);
    await a.send('N');
    await expect.poll(() => a.cursorOn(matches[3]!)).toBe(matches[3]);
  });

  it('n without a filter says how to set one', async () => {
    const a = await app();
    await a.send('n');
    await expect.poll(() => a.frame()).toContain('no filter to match: / sets one');
  });
});

describe('X evicts what the view shows', () => {
  it('with a filter, only the problems it shows, and the dialog says so', async () => {
    const a = await app();
    await a.send('/');
    await a.send('ghost');
    await a.send('\r');
    await a.send('X');
    await expect.poll(() => a.frame()).toContain('Evict 3 entries from the registry?');
    await expect.poll(() => a.frame()).toContain('The problems the table shows: 3 shown of 7 problems; filter: ghost; sessions.');
    await a.send('y');
    expect(a.engine.evictions.map((e) => e.selection.map((f) => f.id))).toEqual([['c0ffee00-ghost', 'evil\u001b[2J\u001b]0;pwned\u0007', 'a0a0a0a0-old-session']]);
  });

  it('with problems-only and no filter: every problem of the tab', async () => {
    const a = await app();
    await a.send('p');
    await a.send('X');
    await expect.poll(() => a.frame()).toContain('6 shown of 7 problems; problems only; sessions.');
  });
});

/** Many ghosts: more than a dialog at 80x14 lists at once. */
function manyGhosts(n: number): Finding[] {
  const ghost = demoFindings().find((f) => f.verdict === 'ghost' && f.id === 'c0ffee00-ghost')!;
  return Array.from({ length: n }, (_, i) => ({ ...ghost, id: `ghost-${String(i).padStart(2, '0')}`, entry: { ...ghost.entry, id: `ghost-${String(i).padStart(2, '0')}`, pid: 50000 + i } }) as Finding);
}

describe('the confirm dialog', () => {
  it('scrolls its list when it does not fit (no "and N more"), keeping the question on top', async () => {
    const a = await app(new StaticEngine(manyGhosts(30)), { columns: 100, rows: 16 });
    await a.send('X');
    await expect.poll(() => a.frame()).toContain('Evict 30 entries from the registry?');
    expect(a.frame()).not.toMatch(/and \d+ more/);
    const where = /entries (\d+)-(\d+) of 30/.exec(a.frame());
    expect(where).not.toBeNull();
    await expect.poll(() => a.frame()).toContain('ghost-00');
    const shown = Number(where![2]);
    expect(a.frame()).not.toContain(`ghost-${String(shown).padStart(2, '0')}`);
    await a.send('jjj');
    await expect.poll(() => a.frame()).toMatch(new RegExp(`entries 4-${shown + 3} of 30`));
    expect(a.frame()).not.toContain('ghost-02 ');
    await expect.poll(() => a.frame()).toContain(`ghost-${String(shown + 2).padStart(2, '0')}`);
    await a.send(`${ESC}[6~${ESC}[6~${ESC}[6~${ESC}[6~`);
    await expect.poll(() => a.frame()).toMatch(/entries \d+-30 of 30/);
    await expect.poll(() => a.frame()).toContain('ghost-29');
    await expect.poll(() => a.frame()).toContain('Evict 30 entries from the registry?');
  });

  it('names each entry\'s cwd, in its verdict colour; an entry that needs force is not green', async () => {
    const live = demoFindings().find((f) => f.id === '7f3a9c1e-live-agent')!;
    const ghost = demoFindings().find((f) => f.id === 'c0ffee00-ghost')!;
    const a = await app(new StaticEngine([ghost, live]));
    await a.send(' ');
    await a.send(' ');
    await a.send('d');
    const lines = a.raw().split('\n');
    const ghostLine = lines.find((l) => l.includes('c0ffee00-ghost pid'))!;
    const liveLine = lines.find((l) => l.includes('7f3a9c1e-live-agent pid'))!;
    expect(ghostLine).toContain('in ~/work/hyper-pi');
    expect(liveLine).toContain('needs force live session');
    expect(liveLine).toContain('in ~/work/ghostwatch');
    // The colours themselves: red for the ghost, yellow (not green) for the live entry that needs force.
    expect(ghostLine).toContain('\u001b[31m');
    expect(liveLine).toContain('\u001b[33m');
    expect(liveLine).not.toContain('\u001b[32m');
  });
});

/** Evictions that go one entry at a time, each waiting to be let through; the signal is honoured between entries. */
class SteppedEngine extends StaticEngine {
  private next: (() => void)[] = [];
  requests: EvictRequest[] = [];
  override async evict(request: EvictRequest): Promise<EvictSummary> {
    this.requests.push(request);
    const results = [];
    for (const [i, finding] of request.selection.entries()) {
      if (request.signal?.aborted) {
        return { results, needsForce: [], counts: { evicted: results.length, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 }, notSent: request.selection.slice(i) };
      }
      request.onProgress?.({ index: i + 1, total: request.selection.length, finding, phase: 'sending' });
      await new Promise<void>((r) => this.next.push(r));
      results.push({ finding, outcome: 'evicted' as const, forced: false });
    }
    return { results, needsForce: [], counts: { evicted: results.length, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 } };
  }
  step(): void {
    for (const r of this.next.splice(0)) r();
  }
}

describe('a running eviction can be cancelled', () => {
  it.each([
    ['Esc', ESC],
    ['Ctrl-C', '\u0003'],
  ])('%s stops it after the entry being sent; the rest are reported as not sent', async (_name, key) => {
    const engine = new SteppedEngine(manyGhosts(5));
    const a = await app(engine);
    await a.send('X');
    await a.send('y');
    await expect.poll(() => a.frame()).toMatch(/evicting 1\/5/);
    await a.send(key);
    if (key === ESC) await sleep(20);
    await expect.poll(() => engine.requests[0]?.signal?.aborted).toBe(true);
    await expect.poll(() => a.frame()).toMatch(/cancelling: stops after the entry being sent; Ctrl-C again quits/);
    expect(a.quits()).toBe(0);
    engine.step();
    await sleep(30);
    await expect.poll(() => a.frame()).toMatch(/cancelled: 4 not sent, evicted ghost ghost-00/);
    expect(a.quits()).toBe(0);
  });

  it('a second Ctrl-C quits', async () => {
    const engine = new SteppedEngine(manyGhosts(5));
    const a = await app(engine);
    await a.send('X');
    await a.send('y');
    await a.send('\u0003');
    expect(a.quits()).toBe(0);
    await a.send('\u0003');
    await expect.poll(() => a.quits()).toBe(1);
    engine.step();
  });

  it('q cancels too, and never quits in the middle of a send', async () => {
    const engine = new SteppedEngine(manyGhosts(3));
    const a = await app(engine);
    await a.send('X');
    await a.send('y');
    await a.send('qq');
    await expect.poll(() => engine.requests[0]?.signal?.aborted).toBe(true);
    expect(a.quits()).toBe(0);
    engine.step();
  });
});

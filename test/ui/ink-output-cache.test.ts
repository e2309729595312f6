// Ink's line caches kept between frames (src/ui/ink-output-cache.ts): the same styled characters
// as Ink's own tokenizer, the same frame text, and a line met in the frame before not read again.
import { Chalk } from 'chalk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InkOutput } from '../../src/ui/ink-output.js';
import { FrameCaches, inkFrameCaches } from '../../src/ui/ink-output-cache.js';

type OutputLike = { caches: { getStyledChars(line: string): unknown }; write(x: number, y: number, text: string, o: { transformers: unknown[] }): void; get(): { output: string } };
const Output = InkOutput as new (o: { width: number; height: number }) => OutputLike;
/** Ink's own caches class, fresh: the reference. */
const InkCaches = new Output({ width: 0, height: 0 }).caches.constructor as new () => { getStyledChars(line: string): unknown };
const inkStyledChars = (line: string): unknown => new InkCaches().getStyledChars(line);

const c = new Chalk({ level: 1 });
const UI_LINES = [
  `${c.inverse(' agent-1  ')}${c.red('ghost')} ${c.dim('/home/dev/work/project-1/packages/pkg-…')}`,
  `${c.bold.cyan('ghostwatch')} ${c.gray('—')} 10000 sessions → ${c.yellow.bold('3 problems')} ⇄ § –`,
  c.bgRed.white(' EVICT ') + ' plain ' + c.underline('under') + '\u001b[m',
  '',
  'no colour at all',
];

function frame(lines: readonly string[], width = 60): string {
  const out = new Output({ width, height: lines.length });
  lines.forEach((line, y) => out.write(0, y, line, { transformers: [] }));
  return out.get().output;
}

describe("Ink's caches kept between frames", () => {
  it('is installed on the Output Ink renders with', () => {
    expect(inkFrameCaches).toBeInstanceOf(FrameCaches);
  });

  it('gives the styled characters of Ink’s tokenizer for the lines the screen draws, without it', () => {
    const caches = new FrameCaches(InkCaches as never);
    for (const line of UI_LINES) {
      const simple = caches.simpleStyledChars(line);
      expect(simple, JSON.stringify(line)).toBeDefined();
      expect(simple).toEqual(inkStyledChars(line));
    }
  });

  it('gives Ink’s styled characters for any line, or leaves the line to Ink’s tokenizer', () => {
    // Pieces that join into graphemes (combining marks, ZWJ, variation selectors, Hangul jamo,
    // flags, CR LF), wide ones, controls, other escape sequences, and plain ones.
    const pieces = [
      'a', 'Z', ' ', '~', '…', '—', '→', '§', 'é', 'e\u0301', '\u0301', '\u200d', '\ufe0f', '👍', '👍🏽', '🇩🇪', '\u{1f1e9}',
      '中', '한', '\u1100', '\u1161', '\u11a8', 'ᄀ', '\r', '\n', '\t', '\u007f', '\u0085', '\u009b', '\u00ad', '\u0903', '\u0600',
      '\u001b[31m', '\u001b[1;4m', '\u001b[38;5;12m', '\u001b[38;2;1;2;3m', '\u001b[0m', '\u001b[m', '\u001b[39m', '\u001b[22m',
      '\u001b[2K', '\u001b]8;;http://x\u0007', '\u001b', '\u001b[', '\u001b[38:5:1m',
    ];
    const caches = new FrameCaches(InkCaches as never);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), (parts) => {
        const line = parts.join('');
        const simple = caches.simpleStyledChars(line);
        if (simple !== undefined) expect(simple).toEqual(inkStyledChars(line));
      }),
      { numRuns: 2000 },
    );
  });

  it('draws the same frames, and does not read again a line the frame before drew', () => {
    // Ink's own caches for one frame, as before the change: the patched get() cannot replace them.
    const reference = (lines: readonly string[]): string => {
      const out = new Output({ width: 60, height: lines.length });
      const own = new InkCaches();
      Object.defineProperty(out, 'caches', { get: () => own, set: () => {} });
      lines.forEach((line, y) => out.write(0, y, line, { transformers: [] }));
      return out.get().output;
    };
    const changed = [...UI_LINES.slice(0, 2), c.green('a new row'), ...UI_LINES.slice(3)];
    // Before the frames counted below: each get() starts a generation.
    const expected = reference(UI_LINES);
    const expectedChanged = reference(changed);
    expect(frame(UI_LINES)).toBe(expected);
    const misses = inkFrameCaches!.misses;
    expect(frame(UI_LINES)).toBe(expected);
    expect(inkFrameCaches!.misses).toBe(misses);
    expect(frame(changed)).toBe(expectedChanged);
    expect(inkFrameCaches!.misses).toBe(misses + 1);
    // Two frames later, a line neither of the last two drew is read again.
    expect(frame(changed)).toBe(expectedChanged);
    expect(frame(UI_LINES)).toBe(expected);
    expect(inkFrameCaches!.misses).toBe(misses + 2);
  });
});

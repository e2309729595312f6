// The bundle's string-width wrapper (src/ui/lazy-width.ts) against both string-width copies it
// wraps (Ink's 8.x and wrap-ansi's 7.x): the same width for every string, and the real one is
// not even loaded for printable ASCII with or without colour codes.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lazyStringWidth } from '../../src/ui/lazy-width.js';

type Width = (input: string, options?: { countAnsiEscapeCodes?: boolean; ambiguousIsNarrow?: boolean }) => number;
const here = createRequire(import.meta.url);
/** A package's ESM entry, resolved from `from` (a file path), with its own strip-ansi. */
async function copyOf(from: string): Promise<{ width: Width; strip: (s: string) => string }> {
  const req = createRequire(from);
  const entry = req.resolve('string-width');
  const strip = createRequire(entry).resolve('strip-ansi');
  const width = ((await import(pathToFileURL(entry).href)) as { default: Width }).default;
  return { width, strip: ((await import(pathToFileURL(strip).href)) as { default: (s: string) => string }).default };
}
const copies = {
  'string-width 8 (Ink)': await copyOf(here.resolve('ink')),
  'string-width 7 (wrap-ansi)': await copyOf(`${dirname(here.resolve('wrap-ansi'))}/index.js`),
};

const samples = [
  '', 'plain ascii', '\u001b[1mghostwatch\u001b[22m  hypivisor', '\u001b[7m j/k \u001b[27m move', 'tab\there', 'cr\r\nlf', '\u0000nul',
  'caf\u00e9', 'e\u0301', '\u2026', '\u2500\u2500', '\u65e5\u672c\u8a9e', '\ud83d\udc4d', '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67', '1\u20e3', '#\ufe0f\u20e3',
  '\u001b]8;;http://x\u0007link\u001b]8;;\u0007', '\u009b31mcsi', '\u001b[31m\u65e5\u001b[39m', '\u00ad', '\u200b', '\ud800',
];

describe.each(Object.entries(copies))('lazy %s', (_name, { width: real, strip }) => {
  it.each(samples)('%j: the same width as the real one, both ways of counting escapes', (text) => {
    const lazy = lazyStringWidth(() => real, strip);
    expect(lazy(text)).toBe(real(text));
    expect(lazy(text, { countAnsiEscapeCodes: true })).toBe(real(text, { countAnsiEscapeCodes: true }));
    expect(lazy(text, { ambiguousIsNarrow: false })).toBe(real(text, { ambiguousIsNarrow: false }));
  });

  it('"…" is one column in the real one (ambiguous, narrow by default) and two when ambiguous is wide', () => {
    expect(real('\u2026')).toBe(1);
    expect(real('~/src/\u2026/agent')).toBe(13);
    expect(real('\u2026', { ambiguousIsNarrow: false })).toBe(2);
  });

  it('the same width for any string (with escape codes mixed in)', () => {
    const piece = fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('\u001b[1m', '\u001b[22m', '\u001b[38;5;9m', '\u009b0m', '\u001b', '\u2026', 'a\u2026b', '\u2025'), fc.string());
    fc.assert(
      fc.property(fc.array(piece), fc.boolean(), fc.constantFrom(undefined, true, false), (parts, countAnsi, narrow) => {
        const text = parts.join('');
        const lazy = lazyStringWidth(() => real, strip);
        const options = narrow === undefined ? { countAnsiEscapeCodes: countAnsi } : { countAnsiEscapeCodes: countAnsi, ambiguousIsNarrow: narrow };
        expect(lazy(text, options)).toBe(real(text, options));
      }),
      { numRuns: 500 },
    );
  });

  it('printable ASCII and "…", coloured or not, never load the real one; anything else loads it once', () => {
    let loads = 0;
    const lazy = lazyStringWidth(() => {
      loads++;
      return real;
    }, strip);
    for (let c = 0x20; c <= 0x7e; c++) expect(lazy(String.fromCharCode(c).repeat(3))).toBe(3);
    expect(lazy('\u001b[1m  VERDICT  \u001b[22m')).toBe(11);
    expect(lazy('\u2026')).toBe(1);
    expect(lazy('\u001b[2m~/src/\u2026/agent\u001b[22m  ab\u2026')).toBe(18);
    expect(loads).toBe(0);
    expect(lazy('\u65e5\u672c')).toBe(4);
    expect(lazy('\u2026', { ambiguousIsNarrow: false })).toBe(2);
    expect(loads).toBe(1);
  });
});

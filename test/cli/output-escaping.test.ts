// The two functions every CLI output path ends in, against many generated hostile strings: the
// JSON text of `check --json` and the error line of a failed command.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorLines, UsageError } from '../../src/cli/args.js';
import { escapeJsonText } from '../../src/cli/report.js';
import { hostileString, unsafeOutput } from '../support/hostile.js';

const anyText = fc.oneof(hostileString(8), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }));

describe('escapeJsonText', () => {
  it('spells C1, bidi, zero-width, separators and tags as \\uXXXX', () => {
    expect(escapeJsonText(JSON.stringify({ k: 'a\u009b2J\u202e\u200b\ufeff\u2028\u007f\u{E0041}😀' }))).toBe(
      '{"k":"a\\u009b2J\\u202e\\u200b\\ufeff\\u2028\\u007f\\udb40\\udc41😀"}',
    );
  });
  it('leaves nothing unsafe and parses back to the same value, whatever the strings', () => {
    fc.assert(
      fc.property(fc.dictionary(anyText, fc.oneof(anyText, fc.array(anyText, { maxLength: 3 }))), (value) => {
        const text = escapeJsonText(JSON.stringify(value, null, 2));
        expect(unsafeOutput(text)).toBeUndefined();
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('errorLines', () => {
  it('a usage error is one safe line, whatever it quotes', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const out = errorLines(new UsageError(`unknown option --${s}`));
        expect(unsafeOutput(out)).toBeUndefined();
        expect(out.endsWith('\n') && out.indexOf('\n') === out.length - 1).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });
  it('any other error keeps its stack, line by line, each line safe', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const out = errorLines(new Error(`registry said ${s}`));
        expect(unsafeOutput(out)).toBeUndefined();
        expect(out).toMatch(/^ghostwatch: internal error: Error: registry said /);
        expect(out).toMatch(/\n +at /);
      }),
      { numRuns: 500 },
    );
    expect(unsafeOutput(errorLines('\u001b]0;x\u0007'))).toBeUndefined();
  });
});

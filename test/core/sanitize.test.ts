import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInert, sanitize } from '../../src/core/index.js';
import { redactUrl } from '../../src/core/sanitize.js';

describe('sanitize', () => {
  it.each([
    ['plain text is kept', '/home/ana/repo', '/home/ana/repo'],
    ['ESC of a CSI colour sequence is shown as ^[', '\u001b[31mred\u001b[0m', '^[[31mred^[[0m'],
    ['an OSC title change loses its ESC and BEL', '\u001b]0;owned\u0007', '^[]0;owned^G'],
    ['an OSC 8 hyperlink ended by ST', '\u001b]8;;http://x\u001b\\link', '^[]8;;http://x^[\\link'],
    ['a DCS sequence', '\u001bPq#0;2;0;0;0\u001b\\', '^[Pq#0;2;0;0;0^[\\'],
    ['C1 CSI (0x9B) is shown as hex', 'a\u009b2Jb', 'a\\x9B2Jb'],
    ['newline, tab and carriage return are visible', 'a\nb\tc\rd', 'a^Jb^Ic^Md'],
    ['DEL', 'a\u007fb', 'a^?b'],
    ['NUL', 'a\u0000b', 'a^@b'],
    ['bidi override (Trojan Source) is visible', 'admin\u202Eexe.txt', 'admin<U+202E>exe.txt'],
    ['bidi isolates are visible', '\u2066x\u2069', '<U+2066>x<U+2069>'],
    ['zero-width space and joiner are visible', 'a\u200Bb\u200Dc', 'a<U+200B>b<U+200D>c'],
    ['BOM and word joiner', '\uFEFFa\u2060', '<U+FEFF>a<U+2060>'],
    ['line separator', 'a\u2028b', 'a<U+2028>b'],
    ['a lone surrogate', 'a\uD800b', 'a<U+D800>b'],
    ['a valid astral character is kept', 'a😀b', 'a😀b'],
    ['accents and CJK are kept (they are text)', 'café 東京', 'café 東京'],
  ])('%s', (_name, input, expected) => {
    expect(sanitize(input)).toBe(expected);
  });

  it('turns non-strings into text', () => {
    expect(sanitize(undefined)).toBe('');
    expect(sanitize(null)).toBe('');
    expect(sanitize(42)).toBe('42');
    expect(sanitize({ a: '\u001b' })).toBe('{"a":"\\u001b"}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(sanitize(cyclic)).toBe('[unprintable]');
  });

  it('caps the length in characters, ending with an ellipsis', () => {
    expect(sanitize('x'.repeat(300))).toBe('x'.repeat(255) + '…');
    expect(sanitize('abcdef', 4)).toBe('abc…');
    expect(sanitize('abcd', 4)).toBe('abcd');
    expect(sanitize('😀😀😀😀😀', 3)).toBe('😀😀…');
  });

  it('never lets a control or format character through, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.integer({ min: 1, max: 300 }), (s, max) => {
        const out = sanitize(s, max);
        expect(out).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
        expect(Array.from(out).length).toBeLessThanOrEqual(max);
        expect(isInert(out, Math.max(max, 1))).toBe(true);
      }),
      { numRuns: 1_000 },
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        const once = sanitize(s, 10_000);
        expect(sanitize(once, 10_000)).toBe(once);
      }),
    );
  });
});

describe('redactUrl', () => {
  it.each([
    ['ws://ana:hunter2@host:9/ws', 'ws://ana:***@host:9/ws'],
    ['wss://:only@host/ws', 'wss://:***@host/ws'],
    ['ws://ana@host/ws', 'ws://ana@host/ws'],
    ['ws://host/ws?u=a:b@c', 'ws://host/ws?u=a:b@c'],
    ['ws://a:p@ss:w@host/ws', 'ws://a:***@host/ws'], // the last @ ends the user part, as the URL parser reads it
    ['ws://a:p@host#x:y@z', 'ws://a:***@host#x:y@z'],
    ['not a url', 'not a url'],
    ['ws://host:31415', 'ws://host:31415'],
  ])('%s -> %s', (input, expected) => expect(redactUrl(input)).toBe(expected));

  it('never leaves the password that the URL parser finds', () => {
    const part = fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=%-]{1,12}$/);
    fc.assert(
      fc.property(part, part, fc.constantFrom('ws', 'wss'), fc.constantFrom('', '/ws', '/a?b=c', '#f'), (user, pass, scheme, tail) => {
        const text = `${scheme}://${user}:${pass}@registry.example.com${tail}`;
        const parsed = new URL(text);
        fc.pre(parsed.password !== '');
        const shown = redactUrl(text);
        expect(shown).toContain(':***@registry.example.com');
        expect(new URL(shown).password).toBe('***');
        expect(new URL(shown).username).toBe(parsed.username);
      }),
    );
  });
});

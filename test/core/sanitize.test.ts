// sanitize.ts, what every string from outside goes through before any output: how each unsafe
// character is spelled, where text is cut, how deep values are capped and printed, and which part
// of a URL is a password. Each table row is one rule, at its boundary.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capDepth, compactText, DEEPER_MARK, inert, MAX_DEPTH, redactUrl, sanitize, visibleControl } from '../../src/core/index.js';

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
        expect(sanitize(out, Math.max(max, 1))).toBe(out);
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

/** An array nested `levels` deep: nest(1) is [0], nest(2) is [[0]]. */
function nest(levels: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

describe('visibleControl: every unsafe character gets one visible ASCII spelling', () => {
  it.each([
    ['NUL, the first C0 control', '\u0000', '^@'],
    ['ESC', '\u001b', '^['],
    ['US, the last C0 control', '\u001f', '^_'],
    ['DEL', '\u007f', '^?'],
    ['the first C1 control', '\u0080', '\\x80'],
    ['CSI', '\u009b', '\\x9B'],
    ['the last C1 control', '\u009f', '\\x9F'],
    ['a no-break space, just past C1', '\u00a0', '<U+00A0>'],
    ['a soft hyphen (four hex digits, zero-padded)', '\u00ad', '<U+00AD>'],
    ['a space, were it ever asked', ' ', '<U+0020>'],
    ['a right-to-left override', '\u202e', '<U+202E>'],
  ])('%s → %s', (_name, ch, spelled) => expect(visibleControl(ch)).toBe(spelled));
});

describe('sanitize: where text is cut and how non-strings read', () => {
  it.each([
    ['exactly max code points of non-ASCII text stay whole', 'ééééé', 5, 'ééééé'],
    ['one code point more is cut to max - 1 and an ellipsis', 'éééééé', 5, 'éééé…'],
    ['exactly max printable ASCII characters stay whole', 'abcde', 5, 'abcde'],
    ['a C1 control is spelled, not dropped', 'a\u0085b', 10, 'a\\x85b'],
  ])('%s', (_name, text, max, out) => expect(sanitize(text, max)).toBe(out));

  it.each([
    ['NaN reads as NaN (not JSON null)', Number.NaN, 'NaN'],
    ['-Infinity reads as -Infinity', Number.NEGATIVE_INFINITY, '-Infinity'],
    ['a boolean as its word', false, 'false'],
    ['a bigint as its digits', 12_345_678_901_234_567_890n, '12345678901234567890'],
    ['undefined as nothing', undefined, ''],
    ['null as nothing', null, ''],
  ])('%s', (_name, value, out) => expect(sanitize(value)).toBe(out));

  it('an object longer than max is cut to max - 1 characters and an ellipsis, like any text', () => {
    expect(sanitize({ key: 'abcdefghij' }, 10)).toBe('{"key":"a…');
  });

  it('an object that fits is printed whole', () => {
    expect(sanitize({ a: [1, 'x'] }, 20)).toBe('{"a":[1,"x"]}');
  });
});

describe('inert: spells unsafe characters but never cuts', () => {
  it.each([
    ['plain ASCII comes back as it is', 'cwd /home/me', 'cwd /home/me'],
    ['an escape sequence is spelled', '\u001b[31mred', '^[[31mred'],
    ['bidi overrides are spelled', 'a\u202eb', 'a<U+202E>b'],
    ['long text is not cut', 'é'.repeat(300), 'é'.repeat(300)],
  ])('%s', (_name, text, out) => expect(inert(text)).toBe(out));

  it('is idempotent: what it writes is printable', () => {
    const once = inert('\u0007\u009b\u2028x');
    expect(once).toBe('^G\\x9B<U+2028>x');
    expect(inert(once)).toBe(once);
  });
});

describe('sanitize leaves a text alone exactly when it has no unsafe character and fits the cap', () => {
  it.each([
    ['plain text within the cap', 'abc', 3, true],
    ['plain text one over the cap', 'abcd', 3, false],
    ['non-ASCII text counted by code points', '😀😀😀', 3, true],
    ['an escape character, however short', '\u001b', 256, false],
    ['a zero-width space', 'a\u200bb', 256, false],
  ])('%s → %s', (_name, text, max, inertText) => {
    expect(sanitize(text, max) === text).toBe(inertText);
  });
});

describe('capDepth: containers deeper than the cap become the mark, the rest stays', () => {
  it('the mark names the depth', () => {
    expect(DEEPER_MARK).toBe('[nested deeper than 32 levels]');
    expect(MAX_DEPTH).toBe(32);
  });

  it.each([
    ['a primitive, even at level 0', 5, 0],
    ['null, even at level 0', null, 0],
    ['a flat array within one level', [1, 'a', null], 1],
    ['an array exactly as deep as the cap', nest(3), 3],
    ['an object exactly as deep as the cap', { a: { b: 1 } }, 2],
    ['an object whose deep value is inherited, not its own', Object.create({ deep: nest(5) }) as object, 1],
    ['the default cap of 32 levels, reached exactly', nest(32), undefined],
  ])('%s: the very same value, no copy', (_name, value, levels) => {
    expect(capDepth(value, levels)).toBe(value);
  });

  it.each([
    ['an empty object at level 0', {}, 0, DEEPER_MARK],
    ['an array one level past the cap', nest(3), 2, [[DEEPER_MARK]]],
    ['the deep element only, its neighbours kept', [1, nest(3), 'x'], 3, [1, [[DEEPER_MARK]], 'x']],
    ['a deep value inside an object', { a: 1, b: { c: { d: 1 } } }, 2, { a: 1, b: { c: DEEPER_MARK } }],
    ['the default cap of 32 levels, passed by one', nest(33), undefined, nest(31)],
  ])('%s', (_name, value, levels, out) => {
    const capped = capDepth(value, levels);
    if (levels === undefined) {
      // 31 arrays, then the 32nd holds the mark in place of the 33rd.
      let v: unknown = capped;
      for (let i = 0; i < 31; i++) v = (v as unknown[])[0];
      expect(v).toEqual([DEEPER_MARK]);
    } else expect(capped).toEqual(out);
  });

  it('keeps a "__proto__" key from JSON as a key, never a prototype', () => {
    const value = JSON.parse('{"__proto__": {"x": [[1]]}, "y": 2}') as Record<string, unknown>;
    const capped = capDepth(value, 2) as Record<string, unknown>;
    expect(Object.hasOwn(capped, '__proto__')).toBe(true);
    expect(capped['__proto__']).toEqual({ x: DEEPER_MARK });
    expect(Object.getPrototypeOf(capped)).toBe(Object.prototype);
    expect(capped['y']).toBe(2);
  });

  it('does not change the value it was given', () => {
    const value = { a: nest(4) };
    capDepth(value, 2);
    expect(value).toEqual({ a: nest(4) });
  });
});

describe('compactText: one line of JSON-like text, whatever the value', () => {
  it.each([
    ['an array of mixed values', [1, 'a', [2, 3], { b: true }], '[1,"a",[2,3],{"b":true}]'],
    ['an empty array and object', [[], {}], '[[],{}]'],
    ['nothing-values as null', [null, undefined, () => 1, Symbol('s')], '[null,null,null,null]'],
    ['undefined alone as null', undefined, 'null'],
    ['non-finite numbers as null', [1.5, Number.NaN, Number.POSITIVE_INFINITY], '[1.5,null,null]'],
    ['booleans and bigints as their text', [true, 10n], '[true,10]'],
    ['object members that are undefined or functions are left out', { a: undefined, f: () => 1, b: 2, c: 3 }, '{"b":2,"c":3}'],
    ['inherited members are left out', Object.create({ inherited: 1 }) as object, '{}'],
    ['strings quoted and escaped as JSON', ['a"b\n'], '["a\\"b\\n"]'],
  ])('%s', (_name, value, out) => expect(compactText(value)).toBe(out));

  it('a container past MAX_DEPTH prints as the quoted mark', () => {
    expect(compactText(nest(33))).toBe(`${'['.repeat(32)}${JSON.stringify(DEEPER_MARK)}${']'.repeat(32)}`);
    expect(compactText(nest(32))).toBe(`${'['.repeat(32)}0${']'.repeat(32)}`);
  });

  it.each([
    ['a long string', 'abcdef', 3, '"ab'],
    ['an array mid-way', [1, 2, 3, 4, 5, 6], 5, '[1,2,'],
    ['an object mid-key', { abcdef: 1 }, 4, '{"ab'],
    ['text exactly maxChars long is whole', [12, 3], 6, '[12,3]'],
  ])('is cut at maxChars: %s', (_name, value, max, out) => expect(compactText(value, max)).toBe(out));

  it('stops writing a huge array soon after maxChars', () => {
    expect(compactText(new Array(100_000).fill('x'), 12)).toBe('["x","x","x"');
  });

  it('a cycle is no value to print', () => {
    const a: unknown[] = [1];
    a.push(a);
    expect(compactText(a)).toBe('[unprintable]');
    const o: Record<string, unknown> = { k: 1 };
    o['self'] = o;
    expect(compactText(o)).toBe('[unprintable]');
  });

  it('the same object twice (no cycle) prints twice', () => {
    const shared = { s: 1 };
    expect(compactText([shared, shared])).toBe('[{"s":1},{"s":1}]');
  });
});

describe('redactUrl: the password goes, everything else stays', () => {
  it.each([
    ['no scheme: as it is', 'user:pw@host', 'user:pw@host'],
    ['a password is masked', 'ws://user:secret@127.0.0.1:7777/x', 'ws://user:***@127.0.0.1:7777/x'],
    ['an empty scheme still starts an authority', '://user:pw@host', '://user:***@host'],
    ['a user without a password: as it is', 'http://user@host/', 'http://user@host/'],
    ['a port after the user, no password: as it is', 'http://user@host:8080/', 'http://user@host:8080/'],
    ['no user at all: as it is', 'http://host:8080/path', 'http://host:8080/path'],
    ['the user part ends at the LAST @', 'http://u:p@ss@host/', 'http://u:***@host/'],
    ['an @ in the path is no password', 'http://h/u:p@x', 'http://h/u:p@x'],
    ['an @ in the query is no password', 'http://h?u:p@x', 'http://h?u:p@x'],
    ['an @ in the fragment is no password', 'http://h#u:p@x', 'http://h#u:p@x'],
    ['a backslash ends the authority', 'http://h\\u:p@x', 'http://h\\u:p@x'],
    ['the first stop wins, whichever it is', 'http://u:p@h#a/b?c', 'http://u:***@h#a/b?c'],
    ['a password with no path after it', 'http://u:p@h', 'http://u:***@h'],
  ])('%s', (_name, text, out) => expect(redactUrl(text)).toBe(out));
});

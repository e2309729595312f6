// Hostile strings, and the check that none of their dangerous characters leaves a process raw.
// A registry, a daemon, a file or the user's own input may carry: OSC 52 (write the clipboard),
// OSC 8 (hyperlinks), OSC 0 (window title), CSI (move, clear, recolour), the C1 controls (0x9B is
// a one-character CSI), bidi overrides and isolates (Trojan Source), zero-width characters and
// lone surrogates.
import fc from 'fast-check';

export const HOSTILE_PIECES: readonly string[] = [
  '\u001b]52;c;cm0gLXJmIH4K\u0007', // OSC 52: set the clipboard, ended by BEL
  '\u001b]52;c;cm0gLXJmIH4K\u001b\\', // ... ended by ST
  '\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\', // OSC 8 hyperlink
  '\u001b]0;pwned\u0007', // OSC 0: window title
  '\u001b[2J\u001b[H', // CSI: clear the screen, home
  '\u001b[31m', // CSI: red
  '\u009b2J', // C1 CSI
  '\u009d0;title\u009c', // C1 OSC ... ST
  '\u0085', // NEL
  '\u0090q\u009c', // DCS
  '\u202e', // RLO
  '\u202a\u202b\u202c\u202d',
  '\u2066x\u2067y\u2068z\u2069', // isolates
  '\u200b',
  '\u200c\u200d',
  '\ufeff',
  '\u2028\u2029',
  '\ud800', // lone high surrogate
  '\udfff', // lone low surrogate
  '\u0007\u0008\r\n\t\u007f',
  '\ud83d\ude00', // a real astral character (allowed)
];

/** Text mixing hostile pieces with arbitrary code units. */
export const hostileString = (maxPieces = 5): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.constantFrom(...HOSTILE_PIECES), fc.string({ unit: 'binary', maxLength: 6 }), fc.string({ maxLength: 6 })), {
      minLength: 1,
      maxLength: maxPieces,
    })
    .map((parts) => parts.join(''));

// What may not appear in what a process prints: ESC and the other C0 controls but newline, DEL,
// C1, and the format and separator characters (bidi, zero-width, BOM, tags, U+2028/9).
const UNSAFE_OUTPUT = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/u;

/** Why `bytes` is not safe to print to a terminal, or undefined when it is. */
export function unsafeOutput(bytes: Buffer | string): string | undefined {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const text = buffer.toString('utf8');
  // Invalid UTF-8 (a raw 0x9B byte, an encoded lone surrogate) decodes to U+FFFD: compare back.
  if (!Buffer.from(text, 'utf8').equals(buffer)) return 'bytes that are not valid UTF-8';
  const m = UNSAFE_OUTPUT.exec(text);
  if (m) return `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at ${m.index}: ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 40))}`;
  return undefined;
}

// Makes any registry-supplied string inert for a terminal. A registry is untrusted input:
// a session "cwd" can carry ESC sequences that recolour, retitle or rewrite the screen,
// bidi overrides that reorder what a person reads, or invisible characters that make two
// ids look the same. Every such character is replaced by a visible, ASCII spelling, so
// no escape sequence can start and nothing is hidden. The result is capped in length.

export const DEFAULT_MAX_LENGTH = 256;
export const ELLIPSIS = '…';

// Cc: C0, DEL, C1. Cf: format characters (bidi controls, zero-width, soft hyphen, tags).
// Zl/Zp: line and paragraph separators. Lone surrogates are not text at all.
const UNSAFE_SOURCE = String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]`;
// Compiled on first use: Unicode property classes cost ~10 ms to build, a real share of the
// start-up of a one-line command like `ghostwatch status`.
let unsafeAll: RegExp | undefined;
let unsafeAny: RegExp | undefined;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function hex(code: number, width: number): string {
  return code.toString(16).toUpperCase().padStart(width, '0');
}

/** The visible spelling of one unsafe character. */
export function visibleControl(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x20) return '^' + String.fromCharCode(code + 0x40); // ^[ for ESC, ^G for BEL, ^J for LF
  if (code === 0x7f) return '^?';
  if (code >= 0x80 && code <= 0x9f) return `\\x${hex(code, 2)}`; // C1: CSI is \x9B
  return `<U+${hex(code, 4)}>`;
}

/** Text of any value, safe to print; at most `max` characters (code points) plus an ellipsis. */
export function sanitize(value: unknown, max: number = DEFAULT_MAX_LENGTH): string {
  const text = toText(value);
  // Most registry strings are printable ASCII: skip the Unicode scan for them.
  if (text.length <= max && PRINTABLE_ASCII.test(text)) return text;
  unsafeAll ??= new RegExp(UNSAFE_SOURCE, 'gu');
  const safe = text.replace(unsafeAll, visibleControl);
  return capLength(safe, max);
}

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '[unprintable]';
  }
}

function capLength(text: string, max: number): string {
  if (text.length <= max) return text; // fast path: UTF-16 length bounds code points from above
  const points = Array.from(text);
  if (points.length <= max) return text;
  return points.slice(0, Math.max(0, max - 1)).join('') + ELLIPSIS;
}

/** True when `sanitize` would leave the text as it is (no unsafe characters, within the cap). */
export function isInert(text: string, max: number = DEFAULT_MAX_LENGTH): boolean {
  unsafeAny ??= new RegExp(UNSAFE_SOURCE, 'u');
  return !unsafeAny.test(text) && Array.from(text).length <= max;
}

/**
 * The text of a URL (or of what was meant to be one) with the password of its `user:password@`
 * masked as `***`: the user name and everything else stay, so a person still sees where it points.
 * The authority ends at the first `/`, `?`, `#` or `\\` and the user part at its last `@`, as the
 * WHATWG parser reads them. Text that has no `scheme://` is returned as it is.
 */
export function redactUrl(text: string): string {
  const start = text.indexOf('://');
  if (start < 0) return text;
  const from = start + 3;
  let end = text.length;
  for (const stop of ['/', '?', '#', '\\']) {
    const at = text.indexOf(stop, from);
    if (at >= 0 && at < end) end = at;
  }
  const authority = text.slice(from, end);
  const at = authority.lastIndexOf('@');
  if (at < 0) return text;
  const colon = authority.indexOf(':');
  if (colon < 0 || colon > at) return text;
  return `${text.slice(0, from)}${authority.slice(0, colon)}:***${text.slice(from + at)}`;
}

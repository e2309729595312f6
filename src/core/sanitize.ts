// Makes any registry-supplied string inert for a terminal. A registry is untrusted input:
// a session "cwd" can carry ESC sequences that recolour, retitle or rewrite the screen,
// bidi overrides that reorder what a person reads, or invisible characters that make two
// ids look the same. Every such character is replaced by a visible, ASCII spelling, so
// no escape sequence can start and nothing is hidden. The result is capped in length.

export const DEFAULT_MAX_LENGTH = 256;
/** What marks a cut: "…", or "..." when the terminal's locale is not UTF-8 (set by the CLI). */
export let ELLIPSIS = '…';

/** "..." instead of "…" from now on (a locale that is not UTF-8), or back. */
export function useAsciiEllipsis(ascii: boolean): void {
  ELLIPSIS = ascii ? '...' : '…';
}

/**
 * Whether the locale's character set is UTF-8: the first of LC_ALL, LC_CTYPE and LANG that is
 * set decides (POSIX order); none set is the C locale, which is ASCII.
 */
export function isUtf8Locale(env: Readonly<Record<string, string | undefined>>): boolean {
  const locale = [env.LC_ALL, env.LC_CTYPE, env.LANG].find((v) => v !== undefined && v !== '');
  return locale !== undefined && /utf-?8/i.test(locale);
}

// Cc: C0, DEL, C1. Cf: format characters (bidi controls, zero-width, soft hyphen, tags).
// Zl/Zp: line and paragraph separators. Lone surrogates are not text at all.
const UNSAFE_SOURCE = String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]`;
// Compiled on first use: Unicode property classes cost ~10 ms to build, a real share of the
// start-up of a one-line command like `ghostwatch status`.
let unsafeAll: RegExp | undefined;
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
  const text = toText(value, max);
  // Most registry strings are printable ASCII: skip the Unicode scan for them.
  if (text.length <= max && PRINTABLE_ASCII.test(text)) return text;
  unsafeAll ??= new RegExp(UNSAFE_SOURCE, 'gu');
  const safe = text.replace(unsafeAll, visibleControl);
  return capLength(safe, max);
}

function toText(value: unknown, max: number): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return compactText(value, max + 1);
}

function capLength(text: string, max: number): string {
  if (text.length <= max) return text; // fast path: UTF-16 length bounds code points from above
  const points = Array.from(text);
  if (points.length <= max) return text;
  return points.slice(0, Math.max(0, max - ELLIPSIS.length)).join('') + ELLIPSIS;
}

/**
 * The text with every unsafe character spelled visibly, as `sanitize` does, but not cut: for
 * text already fitted to its place (a terminal cell range) that must still never carry an escape.
 * Idempotent: what it writes is printable ASCII.
 */
export function inert(text: string): string {
  if (PRINTABLE_ASCII.test(text)) return text;
  unsafeAll ??= new RegExp(UNSAFE_SOURCE, 'gu');
  return text.replace(unsafeAll, visibleControl);
}

/** How deep a registry's values may nest; deeper ones are replaced by DEEPER_MARK when taken in. */
export const MAX_DEPTH = 32;
export const DEEPER_MARK = `[nested deeper than ${MAX_DEPTH} levels]`;

/** True when `value` holds an array or object more than `levels` levels down (the value itself is level 1). */
function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (deeperThan(v, levels - 1)) return true;
    return false;
  }
  for (const k in value) if (Object.hasOwn(value, k) && deeperThan((value as Record<string, unknown>)[k], levels - 1)) return true;
  return false;
}

function cut(value: unknown, levels: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (levels === 0) return DEEPER_MARK;
  if (Array.isArray(value)) return value.map((v) => cut(v, levels - 1));
  // fromEntries defines own properties: a "__proto__" key from JSON stays a key, never a prototype.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cut(v, levels - 1)]));
}

/**
 * A JSON value with every array or object nested deeper than `levels` levels replaced by
 * DEEPER_MARK, so nothing that walks it later (JSON.stringify, String(), a renderer) recurses
 * without bound. The same value (no copy) when nothing is that deep. Both walks are bounded by
 * `levels`, however deep the input.
 */
export function capDepth<T>(value: T, levels: number = MAX_DEPTH): T {
  return deeperThan(value, levels) ? (cut(value, levels) as T) : value;
}

/**
 * A value as one line of JSON-like text, whatever its depth or size: containers deeper than
 * MAX_DEPTH show as DEEPER_MARK, and writing stops soon after `maxChars` characters (the caller
 * cuts). Never throws: no stack overflow on a deep value, no RangeError on a huge one.
 */
export function compactText(value: unknown, maxChars: number = DEFAULT_MAX_LENGTH): string {
  const parts: string[] = [];
  let size = 0;
  // A cycle cannot come from JSON; from elsewhere it is no value to print (as JSON.stringify says).
  const open = new Set<unknown>();
  let cyclic = false;
  const put = (s: string): boolean => {
    parts.push(s);
    size += s.length;
    return size <= maxChars;
  };
  const write = (v: unknown, levels: number): boolean => {
    if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') return put('null');
    if (typeof v === 'string') return put(JSON.stringify(v.length > maxChars ? v.slice(0, maxChars + 1) : v));
    if (typeof v === 'number') return put(Number.isFinite(v) ? String(v) : 'null');
    if (typeof v !== 'object') return put(String(v));
    if (levels === 0) return put(JSON.stringify(DEEPER_MARK));
    if (open.has(v)) return (cyclic = true), false;
    open.add(v);
    const done = Array.isArray(v) ? writeArray(v, levels) : writeObject(v, levels);
    open.delete(v);
    return done;
  };
  const writeArray = (v: readonly unknown[], levels: number): boolean => {
    if (!put('[')) return false;
    for (let i = 0; i < v.length; i++) if ((i > 0 && !put(',')) || !write(v[i], levels - 1)) return false;
    return put(']');
  };
  const writeObject = (v: object, levels: number): boolean => {
    if (!put('{')) return false;
    let first = true;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const item = (v as Record<string, unknown>)[k];
      if (item === undefined || typeof item === 'function') continue;
      if ((!first && !put(',')) || !put(`${JSON.stringify(k.length > maxChars ? k.slice(0, maxChars + 1) : k)}:`) || !write(item, levels - 1)) return false;
      first = false;
    }
    return put('}');
  };
  write(value, MAX_DEPTH);
  if (cyclic) return '[unprintable]';
  const text = parts.join('');
  return text.length > maxChars ? text.slice(0, maxChars) : text;
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

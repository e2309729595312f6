// The optional pre-shared token of the hypivisor protocol: `/ws?token=…`, compared in constant
// time so neither the content nor the length of the secret leaks.
import { createHash, timingSafeEqual } from 'node:crypto';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/**
 * Percent-decoding as hypivisor does it: every valid %XX escape becomes its byte, a '%' not
 * followed by two hex digits stays as it is (Pi-DE sends the token raw, pi-socket encoded), '+'
 * stays '+'. Undefined when the bytes are not UTF-8, which the stock server treats as no token.
 */
export function percentDecodeLenient(text: string): string | undefined {
  if (!text.includes('%')) return text;
  const bytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const hi = bytes[i] === 0x25 && i + 2 < bytes.length ? hexValue(bytes[i + 1]!) : -1;
    const lo = hi === -1 ? -1 : hexValue(bytes[i + 2]!);
    if (lo === -1) {
      out[n++] = bytes[i]!;
      continue;
    }
    out[n++] = hi * 16 + lo;
    i += 2;
  }
  try {
    return utf8.decode(out.subarray(0, n));
  } catch {
    return undefined;
  }
}

/** The decoded value of the first `token=` pair of the request URL's query, or undefined. */
export function tokenFromUrl(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq) !== 'token') continue;
    return percentDecodeLenient(pair.slice(eq + 1));
  }
  return undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Both sides are hashed first: equal-length buffers for timingSafeEqual, whatever was sent. */
export function tokenMatches(given: string | undefined, secret: string): boolean {
  const ok = timingSafeEqual(digest(given ?? ''), digest(secret));
  return ok && given !== undefined;
}

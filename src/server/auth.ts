// The optional pre-shared token of the hypivisor protocol: `/ws?token=<percent-encoded>`,
// compared in constant time so neither the content nor the length of the secret leaks.
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The percent-decoded value of the first `token=` pair of the request URL's query, or undefined.
 * Like the stock server, only %XX escapes are decoded ('+' stays '+'); bad escapes mean no token.
 */
export function tokenFromUrl(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q === -1) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq) !== 'token') continue;
    try {
      return decodeURIComponent(pair.slice(eq + 1));
    } catch {
      return undefined;
    }
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

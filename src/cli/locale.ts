// The locale's say in what we print: a cut is marked "..." where the locale cannot show "…"
// (LANG=C, a bare cron environment). Every command applies it when it starts: the commands loaded
// on use are bundled apart from the dispatcher (scripts/bundle.mjs), each with its own copy of
// core/sanitize, so setting it once in the dispatcher would not reach them.
import { isUtf8Locale, useAsciiEllipsis } from '../core/sanitize.js';

export function applyLocale(env: NodeJS.ProcessEnv = process.env): void {
  useAsciiEllipsis(!isUtf8Locale(env));
}

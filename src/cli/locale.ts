// The locale's say in what we print: a cut is marked "..." where the locale cannot show "…"
// (LANG=C, a bare cron environment). Applied as this module loads (main.ts imports it).
import { isUtf8Locale, useAsciiEllipsis } from '../core/sanitize.js';

export function applyLocale(env: NodeJS.ProcessEnv = process.env): void {
  useAsciiEllipsis(!isUtf8Locale(env));
}

applyLocale();

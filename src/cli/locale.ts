// The locale's say in what we print: a cut is marked "..." where the locale cannot show "…"
// (LANG=C, a bare cron environment). Applied as this module loads. The bundle (scripts/bundle.mjs)
// injects it at the start of every file, main.js and each heavy one: each carries its own copy of
// core/sanitize.ts, and a command's file loads others (check loads engine-setup), so each copy
// must be told. The unbundled build has one copy, which main.ts's import sets.
import { isUtf8Locale, useAsciiEllipsis } from '../core/sanitize.js';

export function applyLocale(env: NodeJS.ProcessEnv = process.env): void {
  useAsciiEllipsis(!isUtf8Locale(env));
}

applyLocale();

// Injected at the start of every file of the bundle (scripts/bundle.mjs: main.js and each heavy
// file). Each file carries its own copy of core/sanitize.ts, so each copy is told here whether
// the locale can show "…" ("..." under LANG=C, a bare cron environment); without it a heavy
// file's copy kept "…" whatever main.js had chosen. The unbundled build has one copy, which
// main() sets.
import { isUtf8Locale, useAsciiEllipsis } from '../core/sanitize.js';

useAsciiEllipsis(!isUtf8Locale(process.env));

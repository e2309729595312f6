// Node built-ins that only some paths need, loaded synchronously on first use instead of by a
// static import: every static import of a built-in is evaluated at start, and child_process and
// crypto cost a few ms each before `--version` or `status` does anything.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const childProcess = (): typeof import('node:child_process') => load('node:child_process') as typeof import('node:child_process');
export const crypto = (): typeof import('node:crypto') => load('node:crypto') as typeof import('node:crypto');

// Node built-ins that only some paths need, loaded synchronously on first use instead of by a
// static import: in the bundled CLI every static import of a built-in is evaluated at start, and
// child_process and crypto cost a few ms each before `--version` or `status` does anything.
import { createRequire } from 'node:module';

// Made on first use too: node:module itself is one of the built-ins a status line need not load.
let require_: NodeJS.Require | undefined;
const load = (id: string): unknown => (require_ ??= createRequire(import.meta.url))(id);

export const childProcess = (): typeof import('node:child_process') => load('node:child_process') as typeof import('node:child_process');
export const crypto = (): typeof import('node:crypto') => load('node:crypto') as typeof import('node:crypto');

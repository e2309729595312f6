// Ink's Output class (ink/build/output.js: the grid a frame is drawn into, then turned into
// text), which Ink's package exports do not name. Loaded from the folder of the Ink that `ink`
// resolves to, so it is the very module Ink renders with. The bundle (scripts/bundle.mjs)
// replaces this file with a static import of the same file, which it inlines.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const inkEntry = createRequire(import.meta.url).resolve('ink');
const output = (await import(pathToFileURL(join(dirname(inkEntry), 'output.js')).href)) as { default: unknown };

export const InkOutput: unknown = output.default;

// Where the bench finds the project: from bench/ (run with tsx) or from dist/bench/ (built).
import { join } from 'node:path';

const HERE = new URL('.', import.meta.url).pathname;
export const ROOT = HERE.includes('/dist/') ? join(HERE, '../..') : join(HERE, '..');
/** This build's launcher. */
export const LAUNCHER = join(ROOT, 'bin/ghostwatch.js');
/**
 * The launcher a start-up or idle figure measures: GHOSTWATCH_BENCH_BIN names another build's (a
 * copy of an older bin/ and dist/bundle/), to measure before and after in one run.
 */
export const MEASURED_BIN = process.env.GHOSTWATCH_BENCH_BIN ?? LAUNCHER;

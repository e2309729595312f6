// The monitor's first frame, kept from the last run, so the next start shows it before the screen
// code loads. Ink and React take ~60 ms to load and draw their first frame; the frame they draw
// first is always the same for the same build, terminal size, settings and view choices (the
// engine starts after it: "waiting for the registry and the first probe..."). main.js reads the
// kept frame and writes it (~1 ms after the options are read); Ink's own first frame is then drawn
// through the frame-diffing layer over it, so it rewrites only the rows that differ: none when the
// kept frame is right, and the right frame within one frame when anything the key below missed has
// changed. It is a head start, never the truth: no key is ever read from it, no decision made.
//
// - File: $XDG_CACHE_HOME/ghostwatch/first-frames.json (~/.cache by default), 0600 in a 0700
//   folder, beside the code cache and switched off with it (GHOSTWATCH_CODE_CACHE=0). It keeps the
//   frames of the last MAX_FRAMES keys (terminal sizes, mostly), the newest first.
// - Key: the monitor file's build hash, the terminal's size, the resolved settings without secrets
//   (no token, no CA), the view choices kept, this host's name and what picks colours and the
//   ellipsis (FORCE_COLOR, TERM, COLORTERM, CI, the locale).
// - Read bounded, never through a symlink; lines only of printable text and SGR sequences (what
//   frame-diff draws), so a file someone else wrote can colour a row at most. Failures are silent.
import { closeSync, openSync, readSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ownFolderSync, readBoundedSync, writeFileAtomicSync } from './safe-file.js';
import { ghostwatchCacheDir } from './state-dir.js';

const MAGIC = 'ghostwatch-first-frame-1';
const MAX_FRAMES = 8;
const MAX_BYTES = 1024 * 1024;
/** A frame line as frame-diff writes it: printable text and SGR sequences only. */
const FRAME_LINE = /^(?:[^\u0000-\u001f\u007f-\u009f]|\u001b\[[\d;:]*m)*$/;
/** What picks Ink's colours (chalk's supports-color) and the ellipsis (src/cli/locale.ts). */
const RENDER_ENV = ['FORCE_COLOR', 'NO_COLOR', 'TERM', 'COLORTERM', 'TERM_PROGRAM', 'CI', 'LANG', 'LC_ALL', 'LC_CTYPE'];
/** Settings fields that never reach the screen and must not be kept in a cache file. */
const SECRET_FIELDS = new Set(['token', 'ca']);

interface Entry {
  readonly key: string;
  readonly lines: readonly string[];
}

/** The kept frames' file, or undefined when the start-up caches are off or there is no home. */
export function firstFramePath(env: NodeJS.ProcessEnv, home: () => string): string | undefined {
  const dir = ghostwatchCacheDir(env, home);
  return dir === undefined ? undefined : join(dir, 'first-frames.json');
}

/** The build hash on the first line of a bundle file (`//gw-build <hash>`), or undefined (not the bundle). */
export function buildHashOf(path: string): string | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(96);
      const n = readSync(fd, head, 0, head.length, 0);
      const m = /^\/\/gw-build ([0-9a-f]{16,64})\n/.exec(head.subarray(0, n).toString('latin1'));
      return m?.[1];
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** The key of the first frame these inputs draw: any difference, another frame. */
export function firstFrameKey(inputs: { build: string; columns: number; rows: number; settings: unknown; prefs: unknown; env: NodeJS.ProcessEnv; host?: string }): string {
  const env = RENDER_ENV.map((name) => inputs.env[name] ?? null);
  const settings = JSON.stringify(inputs.settings, (field, value: unknown) => (SECRET_FIELDS.has(field) ? undefined : value));
  return JSON.stringify([MAGIC, inputs.build, inputs.columns, inputs.rows, settings, inputs.prefs ?? null, inputs.host ?? hostname(), env]);
}

function readEntries(path: string): Entry[] {
  try {
    const raw: unknown = JSON.parse(readBoundedSync(path, MAX_BYTES, { noFollow: true }).toString('utf8'));
    if (!Array.isArray(raw)) return [];
    return raw.filter(
      (e): e is Entry =>
        typeof e === 'object' && e !== null && typeof e.key === 'string' && Array.isArray(e.lines) && e.lines.every((l: unknown) => typeof l === 'string' && FRAME_LINE.test(l)),
    );
  } catch {
    return [];
  }
}

/** The frame kept for `key`, as its lines, or undefined (none, another key, unsafe, unreadable). */
export function readFirstFrame(path: string, key: string): readonly string[] | undefined {
  return readEntries(path).find((e) => e.key === key)?.lines;
}

/** Keeps `lines` as the frame of `key`, newest first, atomically. False when it could not. */
export function writeFirstFrame(path: string, key: string, lines: readonly string[]): boolean {
  if (!lines.every((l) => FRAME_LINE.test(l))) return false;
  try {
    if (!ownFolderSync(join(path, '..'))) return false;
    const entries = [{ key, lines }, ...readEntries(path).filter((e) => e.key !== key)].slice(0, MAX_FRAMES);
    writeFileAtomicSync(path, JSON.stringify(entries));
    return true;
  } catch {
    return false;
  }
}

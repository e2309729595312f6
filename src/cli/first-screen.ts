// The monitor's screen before its screen code has loaded: the alternate screen entered, the keys
// held (raw mode: nothing typed is echoed over the frame, nothing is lost), and the first frame the
// last run drew for the same key (src/os/frame-cache.ts) written at once. runMonitor takes it over:
// Ink's first frame is drawn over that one through the frame-diffing layer, and kept for the next
// start when it differs from what was shown.
import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildHashOf, firstFrameKey, firstFramePath, readFirstFrame, writeFirstFrame } from '../os/frame-cache.js';
import { defaultViewPrefsPath, loadViewPrefs, type ViewPrefs } from '../os/view-prefs.js';
import { diffFrames, screenFrame } from '../ui/frame-diff.js';
import { enterFullscreen, type Fullscreen } from '../ui/terminal.js';
import type { MonitorSettings } from './settings.js';

export interface FirstScreen {
  readonly fullscreen: Fullscreen;
  readonly prefsPath: string;
  readonly prefs: { prefs?: ViewPrefs; warning?: string };
  /** The kept frame now on the screen, and the terminal size it was drawn for; undefined when none was kept. */
  readonly shown?: { readonly lines: readonly string[]; readonly columns: number; readonly rows: number } | undefined;
  /** Keeps Ink's first frame for the next start (when it is not the one shown); undefined when nothing can be kept. */
  readonly keep?: ((lines: readonly string[]) => void) | undefined;
}

/** Enters the screen on `stdout` (a terminal) and draws the kept first frame, if there is one for this key. */
export function openFirstScreen(settings: MonitorSettings, stdout: NodeJS.WriteStream, stdin: NodeJS.ReadStream, env: NodeJS.ProcessEnv = process.env): FirstScreen {
  const prefsPath = defaultViewPrefsPath(env);
  const prefs = loadViewPrefs(prefsPath);
  const fullscreen = enterFullscreen(stdout, undefined, stdin);
  const path = firstFramePath(env, homedir);
  // Only the bundle's monitor file carries a build hash; the unbundled build keeps no frame. Ink's
  // own whole-frame renderer (a test switch) draws from the cursor, not over a frame.
  const build = buildHashOf(fileURLToPath(new URL('./monitor.js', import.meta.url)));
  if (path === undefined || build === undefined || env.GHOSTWATCH_TEST_STANDARD_RENDER === '1') return { fullscreen, prefsPath, prefs };
  const columns = stdout.columns;
  const rows = stdout.rows;
  const key = firstFrameKey({ build, columns, rows, settings, prefs, env });
  const kept = readFirstFrame(path, key);
  if (kept !== undefined) stdout.write(diffFrames(null, screenFrame(kept), rows || 24));
  const keep = (lines: readonly string[]): void => {
    if (kept === undefined || kept.length !== lines.length || kept.some((line, i) => line !== lines[i])) writeFirstFrame(path, key, lines);
  };
  return { fullscreen, prefsPath, prefs, shown: kept === undefined ? undefined : { lines: kept, columns, rows }, keep };
}

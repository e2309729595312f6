// The live monitor: the engine and the Ink screen, or one printed report without a terminal.
// Loaded only when the monitor really runs, so --help and usage errors start in a fraction of the time.
import { homedir } from 'node:os';
import { render } from 'ink';
import { createElement } from 'react';
import type { Engine } from '../engine/types.js';
import { App } from '../ui/app.js';
import { RENDER_OPTIONS } from '../ui/render-options.js';
import { enterFullscreen } from '../ui/terminal.js';
import { frameDiffingStdout } from '../ui/frame-stream.js';
import { buildEngine, reportOnce } from './engine-setup.js';
import type { MonitorSettings } from './settings.js';
import type { FirstScreen } from './first-screen.js';
import { defaultViewPrefsPath, loadViewPrefs, saveViewPrefs, type ViewPrefs } from '../os/view-prefs.js';
import { compactHeapOnce } from '../os/heap.js';

/** How long the start-up may take before its memory is left to V8's own reducer. */
const SETTLE_WAIT_MS = 60_000;
/** After settling: the rows of the first probes drawn, their recomputes done. */
const COMPACT_AFTER_MS = 1_000;

export async function runMonitor(settings: MonitorSettings, first?: FirstScreen): Promise<number> {
  let engine: Engine;
  try {
    engine = buildEngine(settings);
  } catch (error) {
    // The error is said on the shell's screen, not on the alternate one about to be left.
    first?.fullscreen.restore();
    throw error;
  }
  if (!process.stdout.isTTY || !process.stdin.isTTY) {
    engine.start();
    return printOnce(engine, settings);
  }
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => (resolveDone = r));
  // The alternate screen first: Ink's first frame must land on it, not on the shell's screen.
  let app: ReturnType<typeof render> | undefined;
  const screen = first?.fullscreen ?? enterFullscreen(process.stdout, undefined, process.stdin);
  screen.onRestore(() => app?.unmount());
  // The sort and problems-only of the last run; a file that is not ours is said once, in the status line.
  const prefsPath = first?.prefsPath ?? defaultViewPrefsPath();
  const { prefs, warning } = first?.prefs ?? loadViewPrefs(prefsPath);
  // Not kept (a read-only home): the monitor works on; the choice lasts for this run only.
  const onKeep = (kept: ViewPrefs): void => void saveViewPrefs(prefsPath, kept);
  // Ink draws into a stand-in that sends the terminal only the rows that changed. The end-to-end
  // test compares it with Ink's own whole-frame output, switched back by this variable. The kept
  // first frame on the screen counts only if the terminal has kept its size since.
  const standard = process.env['GHOSTWATCH_TEST_STANDARD_RENDER'] === '1';
  const shown = first?.shown !== undefined && first.shown.columns === process.stdout.columns && first.shown.rows === process.stdout.rows ? first.shown.lines : undefined;
  const keep = first?.keep;
  const diffing = standard
    ? undefined
    : frameDiffingStdout(process.stdout, { shown, onFirstFrame: keep && ((lines) => void setImmediate(() => keep(lines))) });
  app = render(
    createElement(App, {
      engine,
      readOnly: settings.readOnly,
      home: homedir(),
      onQuit: () => resolveDone(),
      kept: prefs,
      onKeep,
      initialState: warning ? { message: { text: warning, tone: 'warn' } } : undefined,
      absent: settings.discovery?.absent,
    }),
    { ...RENDER_OPTIONS, stdout: diffing ?? process.stdout },
  );
  // The first frame ("connecting...") goes out before the sources connect and the probes start.
  setImmediate(() => engine.start());
  // Settled, and its frame drawn: the start-up's garbage is given back at once (os/heap.ts).
  void engine.settled(SETTLE_WAIT_MS).then((snap) => {
    if (snap.settled) setTimeout(compactHeapOnce, COMPACT_AFTER_MS).unref();
  });
  await done;
  screen.restore();
  diffing?.detach();
  // A send may still be under way (a second Ctrl-C quits during a bulk eviction): it finishes and
  // its outcome is audited before the process ends. The terminal is no longer raw, so a Ctrl-C now
  // is a SIGINT: the first says what is being waited for, a second ends it at once.
  let interrupted = false;
  const onInterrupt = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write('ghostwatch: finishing the eviction under way and auditing it (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onInterrupt);
  try {
    await engine.stop();
  } finally {
    process.off('SIGINT', onInterrupt);
  }
  return 0;
}

async function printOnce(engine: Engine, settings: MonitorSettings): Promise<number> {
  return reportOnce(engine, { timeoutMs: 10_000, json: false, note: 'not a terminal: printed one report instead of the live view', discovery: settings.discovery });
}


// The live monitor: the engine and the Ink screen, or one printed report without a terminal.
// Loaded only when the monitor really runs, so --help and usage errors start in a fraction of the time.
import { homedir } from 'node:os';
import { render } from 'ink';
import { createElement } from 'react';
import type { Engine } from '../engine/types.js';
import { App } from '../ui/app.js';
import { ScreenBoundary } from '../ui/components/boundary.js';
import { RENDER_OPTIONS } from '../ui/render-options.js';
import { enterFullscreen } from '../ui/terminal.js';
import { buildEngine, reportOnce } from './engine-setup.js';
import type { MonitorSettings } from './settings.js';
import { defaultViewPrefsPath, loadViewPrefs, saveViewPrefs, type ViewPrefs } from '../os/view-prefs.js';

/** `warnings`: lines said before the screen opened (a config file not used), said again in its status line. */
export async function runMonitor(settings: MonitorSettings, warnings: readonly string[] = []): Promise<number> {
  const engine: Engine = buildEngine(settings);
  if (!process.stdout.isTTY || !process.stdin.isTTY) {
    engine.start();
    return printOnce(engine, settings);
  }
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => (resolveDone = r));
  // The alternate screen first: Ink's first frame must land on it, not on the shell's screen.
  let app: ReturnType<typeof render> | undefined;
  const screen = enterFullscreen(process.stdout, undefined, process.stdin);
  screen.onRestore(() => app?.unmount());
  // The sort and problems-only of the last run; a file that is not ours is said once, in the status line.
  const prefsPath = defaultViewPrefsPath();
  const { prefs, warning: prefsWarning } = loadViewPrefs(prefsPath);
  const warning = [...warnings, ...(prefsWarning === undefined ? [] : [prefsWarning])].join('; ');
  // Not kept (a read-only home): the monitor works on; the choice lasts for this run only.
  const onKeep = (kept: ViewPrefs): void => void saveViewPrefs(prefsPath, kept);
  const onQuit = (): void => resolveDone();
  app = render(
    createElement(
      ScreenBoundary,
      { engine, onQuit, width: () => process.stdout.columns || 80 },
      createElement(App, {
        engine,
        readOnly: settings.readOnly,
        home: homedir(),
        onQuit,
        kept: prefs,
        onKeep,
        initialState: warning ? { message: { text: warning, tone: 'warn' } } : undefined,
        absent: settings.discovery?.absent,
        // tmux's prefix (Ctrl-B) never reaches a program inside it: the help shows the keys that do.
        inTmux: (process.env.TMUX ?? '') !== '',
        killGraceMs: settings.killGraceMs,
      }),
    ),
    RENDER_OPTIONS,
  );
  // The first frame ("connecting...") goes out before the sources connect and the probes start.
  setImmediate(() => engine.start());
  await done;
  screen.restore();
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
  return reportOnce(engine, { timeoutMs: 10_000, format: 'text', note: 'not a terminal: printed one report instead of the live view', discovery: settings.discovery });
}


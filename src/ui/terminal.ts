// The alternate screen, entered once and left exactly once on every way out: q, Ctrl-C,
// SIGTERM, SIGHUP, an uncaught error. A monitor that dies must not leave a broken terminal.

// Alternate screen, home, hide cursor, bracketed paste on: the terminal wraps a paste in
// ESC[200~ ... ESC[201~, so pasted text is one piece (the filter prompt takes it; the table
// ignores it) and never a run of keys — a pasted "Xy" must not evict anything.
const ENTER = '\u001b[?1049h\u001b[H\u001b[?25l\u001b[?2004h';
const LEAVE = '\u001b[?2004l\u001b[?25h\u001b[?1049l'; // paste mode off, show cursor, main screen back

export interface Fullscreen {
  /** Leave the alternate screen (idempotent) and run the cleanup once. */
  restore(): void;
  /** What restore() runs first (the screen's unmount), given once the screen exists. */
  onRestore(cleanup: () => void): void;
}

/**
 * Enters the alternate screen. With `stdin` (a terminal), its keys are held from now on: raw mode,
 * so a key pressed before the screen code has loaded is neither echoed over the frame nor lost (it
 * waits in the terminal for Ink); restore() gives the terminal its line mode back.
 */
export function enterFullscreen(stdout: NodeJS.WriteStream, cleanup: () => void = () => {}, stdin?: NodeJS.ReadStream): Fullscreen {
  let done = false;
  let runFirst = cleanup;
  stdout.write(ENTER);
  const raw = stdin?.isTTY === true && typeof stdin.setRawMode === 'function';
  if (raw) stdin.setRawMode(true);
  const restore = (): void => {
    if (done) return;
    done = true;
    try {
      runFirst();
    } finally {
      if (raw) stdin.setRawMode(false);
      stdout.write(LEAVE);
      for (const [signal, handler] of handlers) process.off(signal, handler);
      process.off('uncaughtException', onCrash);
      process.off('unhandledRejection', onCrash);
      process.off('exit', restore);
    }
  };
  const onSignal = (signal: NodeJS.Signals, code: number) => () => {
    restore();
    process.exit(code);
  };
  const handlers: [NodeJS.Signals, () => void][] = [
    ['SIGTERM', onSignal('SIGTERM', 143)],
    ['SIGHUP', onSignal('SIGHUP', 129)],
    ['SIGINT', onSignal('SIGINT', 130)],
  ];
  const onCrash = (error: unknown): void => {
    restore();
    process.stderr.write(`ghostwatch: crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(70);
  };
  for (const [signal, handler] of handlers) process.on(signal, handler);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  process.on('exit', restore);
  return {
    restore,
    onRestore: (next) => {
      runFirst = next;
    },
  };
}

/**
 * Put `text` on the clipboard with OSC 52 (`ESC ] 52 ; c ; base64 BEL`): the terminal (or tmux,
 * with `set-clipboard on`, which also forwards it to the terminal outside) takes it, over SSH too.
 * Only to an interactive terminal: false, and nothing written, otherwise.
 */
export function copyToClipboard(stdout: NodeJS.WriteStream, text: string): boolean {
  if (stdout.isTTY !== true) return false;
  stdout.write(osc52(text));
  return true;
}

export function osc52(text: string): string {
  return `\u001b]52;c;${Buffer.from(text, 'utf8').toString('base64')}\u0007`;
}

// Between Ink and the terminal: Ink renders into this stand-in for stdout, which hands the
// terminal only the rows that changed (src/ui/frame-diff.ts). Ink's standard renderer writes each
// frame whole, `eraseLines(previous line count) + frame text`; that write is recognised and
// diffed against the frame on the screen. The synchronized-update brackets and cursor hide/show
// pass through and change nothing; anything else (a clear-terminal frame, OSC 52 from the copy
// key) goes to the terminal unchanged, and the next frame is then drawn whole, as is the first
// one (unless a kept first frame is already on the screen) and the first after a resize.
import { Writable } from 'node:stream';
import { diffFrames, frameLines, screenFrame, type ScreenFrame } from './frame-diff.js';

// ansi-escapes' eraseLines(n): n-1 times "erase line, up one", then "erase line, column 1".
const ERASE_LINES = /^(?:\u001b\[2K\u001b\[1A)*\u001b\[2K\u001b\[G/;
// Frame text is printable text, newlines and SGR sequences, nothing else.
const NOT_FRAME_TEXT = /[\u0000-\u0009\u000b-\u001a\u001c-\u001f\u007f-\u009f]|\u001b(?!\[[\d;:]*m)/;
// Begin/end synchronized update (Ink brackets each frame with them) and cursor hide/show (Ink
// hides it before its first frame): they change no cell on the screen.
const SYNC = new Set(['\u001b[?2026h', '\u001b[?2026l', '\u001b[?25l', '\u001b[?25h']);

export interface FrameStream extends NodeJS.WriteStream {
  /** Stop following the terminal's resizes. */
  detach(): void;
}

export interface FrameStreamOptions {
  /** The lines already on the screen (a kept first frame, drawn before Ink loaded): Ink's first frame is drawn over them. */
  readonly shown?: readonly string[] | undefined;
  /** Told the lines of Ink's first frame, once, after they are written. */
  readonly onFirstFrame?: ((lines: readonly string[]) => void) | undefined;
}

/** A stdout for Ink that writes to `terminal` only the rows that changed between frames. */
export function frameDiffingStdout(terminal: NodeJS.WriteStream, opts: FrameStreamOptions = {}): FrameStream {
  let screen: ScreenFrame | null = opts.shown === undefined ? null : screenFrame(opts.shown);
  let firstFrame = opts.onFirstFrame;
  const write = (text: string): void => {
    if (SYNC.has(text)) {
      terminal.write(text);
      return;
    }
    const erase = ERASE_LINES.exec(text);
    const body = erase === null ? text : text.slice(erase[0].length);
    if (erase !== null && body === '') {
      // Ink's clear: the frame erased, the cursor at its top (row 1).
      terminal.write('\u001b[H\u001b[J');
      screen = { lines: [], enters: [], exits: [] };
      return;
    }
    if (body !== '' && !NOT_FRAME_TEXT.test(body)) {
      const next = screenFrame(frameLines(body), screen);
      const bytes = diffFrames(screen, next, terminal.rows || 24);
      screen = next;
      if (bytes !== '') terminal.write(bytes);
      if (firstFrame !== undefined) {
        const tell = firstFrame;
        firstFrame = undefined;
        tell(next.lines);
      }
      return;
    }
    if (text === '') return;
    terminal.write(text);
    screen = null;
  };
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      callback();
    },
  }) as unknown as FrameStream;
  Object.defineProperties(stream, {
    isTTY: { get: () => terminal.isTTY },
    columns: { get: () => terminal.columns },
    rows: { get: () => terminal.rows },
  });
  const onResize = (): void => {
    screen = null;
    stream.emit('resize');
  };
  terminal.on('resize', onResize);
  stream.detach = () => void terminal.off('resize', onResize);
  return stream;
}

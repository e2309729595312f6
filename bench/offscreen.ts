// Ink rendered off-screen for the benches: a TTY-shaped stdout that notes when each frame is
// written, a stdin keys can be typed into, and Ink imported outside CI mode.
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';

const BSU = '\u001b[?2026h';
const ESU = '\u001b[?2026l';

/** A TTY-shaped stdout that notes when each write happens. Frames come wrapped in BSU/ESU writes. */
export class FakeStdout extends Writable {
  readonly isTTY = true;
  frames = 0;
  /** Every byte written, frames and their BSU/ESU wrappers alike. */
  bytes = 0;
  lastFrame = '';
  /** Told of the next frame only (then cleared). */
  onFrame: ((at: number) => void) | undefined;
  /** Told of every frame, with its text. */
  onEveryFrame: ((at: number, text: string) => void) | undefined;
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {
    super({ decodeStrings: false, write: (_chunk, _encoding, done) => done() });
  }
  override write(chunk: unknown, encoding?: unknown, cb?: unknown): boolean {
    const at = performance.now();
    const text = String(chunk);
    this.bytes += Buffer.byteLength(text);
    if (text !== BSU && text !== ESU && text !== '') {
      this.frames++;
      this.lastFrame = text;
      const waiter = this.onFrame;
      this.onFrame = undefined;
      waiter?.(at);
      this.onEveryFrame?.(at, text);
    }
    return super.write(chunk, encoding as BufferEncoding, cb as (error?: Error | null) => void);
  }
}

/** As ink-testing-library's: Ink reads keys on 'readable' with read(). */
export class FakeStdin extends EventEmitter {
  readonly isTTY = true;
  private data: string | null = null;
  write(data: string): void {
    this.data = data;
    this.emit('readable');
    this.emit('data', data);
  }
  read(): string | null {
    const { data } = this;
    this.data = null;
    return data;
  }
  setEncoding(): void {}
  setRawMode(): void {}
  ref(): void {}
  unref(): void {}
  resume(): void {}
  pause(): void {}
}

/**
 * Ink decides "in CI, render nothing live" once, when it is first imported (is-in-ci), and chalk
 * decides whether to colour by the process's own stdout (a pipe under the bench runner): import
 * both as under a terminal, so frames carry the colours (and their cost) a terminal gets.
 */
export async function importInkOutsideCi(): Promise<{ ink: typeof import('ink'); app: typeof import('../src/ui/app.js') }> {
  const saved: Record<string, string | undefined> = {};
  for (const k of ['CI', 'CONTINUOUS_INTEGRATION', 'FORCE_COLOR']) {
    saved[k] = process.env[k];
    delete process.env[k];
  }
  // 16 colours are all the theme uses; a FORCE_COLOR given to the bench wins.
  if (saved.FORCE_COLOR === undefined) process.env.FORCE_COLOR = '1';
  else process.env.FORCE_COLOR = saved.FORCE_COLOR;
  try {
    return { ink: await import('ink'), app: await import('../src/ui/app.js') };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Frame text without colours and cursor moves: what a person reads. */
export function plainText(frame: string): string {
  // eslint-disable-next-line no-control-regex
  return frame.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
}

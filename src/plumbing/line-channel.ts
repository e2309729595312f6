// Newline framing for a stream of text (a socket, a child's stdout): one home for the loop that
// the agentctl client and the ssh provider each wrote by hand. Chunks go in; whole lines (without
// their '\n') come out in order; the unterminated rest is held, and a rest longer than the cap is
// reported so the reader can treat the stream as broken instead of buffering without bound.
// A channel whose peer answers in order keeps its requests in a ReplyFifo.
import type { Clock, TimerHandle } from './clock.js';

export class LineSplitter {
  private rest = '';

  constructor(private readonly maxLineLength: number) {}

  /**
   * Add `chunk` and hand each complete line to `onLine`, in order; `onLine` returning false stops
   * the reading there (the reader ended the stream). False when the unterminated rest is past the
   * cap (nothing more is read from this chunk then), true otherwise.
   */
  push(chunk: string, onLine: (line: string) => boolean | void): boolean {
    return this.pushBounds(chunk, (text, from, to) => onLine(text.slice(from, to)));
  }

  /**
   * As push, but each line is handed over as its bounds in `text` (from `from` to `to`, the '\n'
   * left out) instead of cut out: a reader that drops most lines unread (a flood) allocates
   * nothing for them.
   */
  pushBounds(chunk: string, onLine: (text: string, from: number, to: number) => boolean | void): boolean {
    const text = this.rest + chunk;
    let from = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', from)) >= 0) {
      const start = from;
      from = nl + 1;
      if (onLine(text, start, nl) === false) {
        this.rest = text.slice(from);
        return true;
      }
    }
    this.rest = text.slice(from);
    return this.rest.length <= this.maxLineLength;
  }

  /** Forget the unterminated rest (a new connection, or a line too long to keep). */
  clear(): void {
    this.rest = '';
  }
}

/**
 * The requests written on an ordered channel and not yet answered, oldest first: the peer answers
 * in the order it was asked, so an answer belongs to the head. Each request has a deadline; what a
 * missed one means (the connection is stuck, say) is the caller's `onTimeout`.
 */
export class ReplyFifo<T> {
  private readonly waiting: { readonly request: T; readonly timer: TimerHandle }[] = [];

  constructor(private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>) {}

  push(request: T, timeoutMs: number, onTimeout: () => void): void {
    this.waiting.push({ request, timer: this.clock.setTimeout(onTimeout, timeoutMs) });
  }

  /** The oldest request not answered yet: the one the next answer is for. */
  get head(): T | undefined {
    return this.waiting[0]?.request;
  }

  /** The head is answered (or given up on): removed, its deadline disarmed. */
  shift(): T | undefined {
    const w = this.waiting.shift();
    if (w === undefined) return undefined;
    this.clock.clearTimeout(w.timer);
    return w.request;
  }

  /** The channel is over: every waiting request, oldest first, removed and its deadline disarmed. */
  drain(): T[] {
    const all = this.waiting.splice(0);
    for (const w of all) this.clock.clearTimeout(w.timer);
    return all.map((w) => w.request);
  }
}

// Newline framing for a stream of text (a socket, a child's stdout): one home for the loop that
// the agentctl client and the ssh provider each wrote by hand. Chunks go in; whole lines (without
// their '\n') come out in order; the unterminated rest is held, and a rest longer than the cap is
// reported so the reader can treat the stream as broken instead of buffering without bound.

export class LineSplitter {
  private rest = '';

  constructor(private readonly maxLineLength: number) {}

  /**
   * Add `chunk` and hand each complete line to `onLine`, in order; `onLine` returning false stops
   * the reading there (the reader ended the stream). False when the unterminated rest is past the
   * cap (nothing more is read from this chunk then), true otherwise.
   */
  push(chunk: string, onLine: (line: string) => boolean | void): boolean {
    const text = this.rest + chunk;
    let from = 0;
    let nl: number;
    while ((nl = text.indexOf('\n', from)) >= 0) {
      const line = text.slice(from, nl);
      from = nl + 1;
      if (onLine(line) === false) {
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

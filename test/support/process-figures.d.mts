export interface ProcessFigures {
  readonly fds: number;
  readonly rss: number;
  /** The JS heap without compiled code, after a full GC. */
  readonly heap: number;
  /** What V8 has committed for its heap. */
  readonly heapTotal: number;
  /** Memory outside the JS heap held by JS objects (Buffers, socket data). */
  readonly external: number;
}
export function processFigures(): ProcessFigures;

// Items (a registry's frames) taken as they arrive and applied in order, in slices of a few ms
// with the event loop free between slices: one read of 2 MB of queued events (8,000 frames) is
// never applied in one go while a key waits. With `high` items waiting the producer is asked to
// pause (a socket stops reading, TCP pushes back); below `low` it is asked to resume.

export interface PacedQueueOptions<T> {
  readonly apply: (item: T) => void;
  /** Apply items for this long at most before the event loop gets its turn. */
  readonly sliceMs: number;
  readonly high: number;
  readonly low: number;
  readonly pause: () => void;
  readonly resume: () => void;
  readonly monotonic?: () => number;
}

export class PacedQueue<T> {
  private items: T[] = [];
  /** Index of the next item to apply (items before it are applied; the array is compacted per slice). */
  private head = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private paused = false;
  private readonly monotonic: () => number;

  constructor(private readonly opts: PacedQueueOptions<T>) {
    this.monotonic = opts.monotonic ?? (() => performance.now());
  }

  get waiting(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
    if (!this.paused && this.waiting >= this.opts.high) {
      this.paused = true;
      this.opts.pause();
    }
    this.scheduled ??= setImmediate(this.slice);
  }

  /** Applies everything that waits, now (the producer is done: its last items come before its end). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    while (this.head < this.items.length) this.opts.apply(this.items[this.head++]!);
    this.items = [];
    this.head = 0;
  }

  /** Drops what waits: nothing more is applied, and the producer is not resumed. */
  clear(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.items = [];
    this.head = 0;
    this.paused = false;
  }

  private readonly slice = (): void => {
    this.scheduled = undefined;
    const start = this.monotonic();
    // An item applied may clear the queue (it closed the connection): re-read the array each time.
    while (this.head < this.items.length) {
      const item = this.items[this.head]!;
      this.head++;
      this.opts.apply(item);
      if (this.monotonic() - start >= this.opts.sliceMs) break;
    }
    this.items = this.items.slice(this.head);
    this.head = 0;
    if (this.paused && this.waiting <= this.opts.low) {
      this.paused = false;
      this.opts.resume();
    }
    if (this.waiting > 0) this.scheduled ??= setImmediate(this.slice);
  };
}

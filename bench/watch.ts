// Waits for events that each name an id: how long after its t0 each was first seen (a bench's
// detection figures). An id never seen within `giveUpMs` counts as `giveUpMs`.

export class Watch {
  private readonly waiting = new Map<string, { t0: number; resolve: (ms: number) => void }>();
  constructor(private readonly giveUpMs: number) {}
  expect(id: string, t0: number): Promise<number> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(this.giveUpMs);
      }, this.giveUpMs);
      this.waiting.set(id, {
        t0,
        resolve: (ms) => {
          clearTimeout(timer);
          resolve(ms);
        },
      });
    });
  }
  /** `seen(id)` says whether this id shows what we wait for now. */
  check(at: number, seen: (id: string) => boolean): void {
    for (const [id, w] of this.waiting) {
      if (!seen(id)) continue;
      this.waiting.delete(id);
      w.resolve(at - w.t0);
    }
  }
  get size(): number {
    return this.waiting.size;
  }
}

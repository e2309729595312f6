// Running probes without overlap: each kind of probe has at most one run in flight (a slow run
// turns the next tick into a no-op), every run gets the same AbortSignal, and stop() aborts and
// waits for all of them. Failures are swallowed: the next tick retries, the loop must live on.

export class ProbeRunner<Kind extends string> {
  private readonly running = new Map<Kind, Promise<void>>();
  private controller = new AbortController();

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  isRunning(kind: Kind): boolean {
    return this.running.has(kind);
  }

  /** The run of `kind` in flight, if any. */
  current(kind: Kind): Promise<void> | undefined {
    return this.running.get(kind);
  }

  /** A fresh signal after an abort, for a restart. */
  reset(): void {
    if (this.controller.signal.aborted) this.controller = new AbortController();
  }

  /** Runs `fn` unless a run of the same kind is still going; either way returns that run. */
  run(kind: Kind, fn: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const current = this.running.get(kind);
    if (current) return current;
    const { signal } = this.controller;
    const p = fn(signal)
      .catch(() => {
        // Aborted by stop(), or an OS failure the next tick retries.
      })
      .finally(() => this.running.delete(kind));
    this.running.set(kind, p);
    return p;
  }

  /** Probes a queue batch by batch; whatever is queued while the run is finishing starts another. */
  drain<T>(
    kind: Kind,
    queue: Set<number>,
    probe: (batch: number[], signal: AbortSignal) => Promise<ReadonlyMap<number, T>>,
    after: (result: ReadonlyMap<number, T>) => void,
  ): void {
    const run = this.run(kind, async (signal) => {
      while (queue.size > 0 && !signal.aborted) {
        const batch = [...queue];
        queue.clear();
        const result = await probe(batch, signal);
        if (signal.aborted) return;
        after(result);
      }
    });
    void run.then(() => {
      if (queue.size > 0 && !this.aborted && !this.running.has(kind)) this.drain(kind, queue, probe, after);
    });
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled([...this.running.values()]);
  }
}

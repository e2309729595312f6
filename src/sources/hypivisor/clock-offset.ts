// Estimates how far the registry's clock is from ours, from fresh registrations: a node_joined
// event's registered_at is the registry's "now" at that moment. Seconds resolution and network
// delay make each sample a little off, so the estimate is the median of recent samples, and
// anything under two seconds counts as no offset at all.

const WINDOW = 15;
const NOISE_MS = 2_000;

export class ClockOffset {
  private readonly samples: number[] = [];

  /** registryTime - localTime, in ms, for one fresh registration. */
  sample(deltaMs: number): void {
    if (!Number.isFinite(deltaMs)) return;
    this.samples.push(deltaMs);
    if (this.samples.length > WINDOW) this.samples.shift();
  }

  offsetMs(): number {
    if (this.samples.length === 0) return 0;
    const sorted = [...this.samples].sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1]!;
    // registered_at is truncated to whole seconds, which biases samples by up to -1 s.
    return Math.abs(median) < NOISE_MS ? 0 : Math.round(median / 1000) * 1000;
  }
}

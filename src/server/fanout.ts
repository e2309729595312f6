// What serve sends to every registry client: the registry's events, and `init` to those that just
// connected. Both go out in flushes, at most one every BROADCAST_INTERVAL_MS while the registry is
// busy (the first after a quiet spell at once). A flush's events are framed once, into one buffer
// that every client's socket is given in one write. A reconnect storm of 1,000 agents is 1,000
// registers that each go to 1,000 clients: one write (a writev, a TCP send on loopback) per event
// per client took 20 of 33 s of CPU, and a million frames queued one by one kept the garbage
// collector busy; per flush it is one write per client. A client's init is the state after the
// flush's events, encoded once per flush however many joined, and it gets no event older than it.
import type { RegistryPeer } from './peer.js';
import type { RegistryEvent } from './protocol.js';
import { textFramesToClient } from './ws-frames.js';

/** How often events go out at most while they keep coming: the latency a busy registry adds. */
export const BROADCAST_INTERVAL_MS = 50;

export class Fanout {
  /** Clients that have their init. */
  readonly peers = new Set<RegistryPeer>();
  /** Clients waiting for theirs (not read until it has gone out). */
  readonly joining = new Set<RegistryPeer>();
  private readonly pending: RegistryEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;

  constructor(
    /** `init` for the registry as it is now (cached per version). */
    private readonly init: () => Buffer,
    /** Fault injection for tests: false drops that event. */
    private readonly keep: (event: RegistryEvent) => boolean = () => true,
    private readonly now: () => number = () => performance.now(),
  ) {}

  event(event: RegistryEvent): void {
    this.pending.push(event);
    this.schedule();
  }

  join(peer: RegistryPeer): void {
    this.joining.add(peer);
    this.schedule();
  }

  leave(peer: RegistryPeer): void {
    this.peers.delete(peer);
    this.joining.delete(peer);
  }

  /** Every client, joined or joining. */
  all(): RegistryPeer[] {
    return [...this.peers, ...this.joining];
  }

  /** Sends what is pending now: the events to the joined clients, then init to the joining ones. */
  flush(): void {
    clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.pending.length === 0 && this.joining.size === 0) return;
    this.lastFlush = this.now();
    const events = this.pending.splice(0).filter(this.keep);
    if (events.length > 0) {
      // One buffer that every client's write refers to: a thousand clients do not copy it.
      const wire = textFramesToClient(events.map((event) => Buffer.from(JSON.stringify(event))));
      for (const peer of this.peers) peer.sendEvents(wire);
    }
    if (this.joining.size > 0) {
      const init = this.init();
      for (const peer of this.joining) {
        this.peers.add(peer);
        peer.sendInit(init);
      }
      this.joining.clear();
    }
  }

  private schedule(): void {
    if (this.timer || this.immediate) return;
    const wait = this.lastFlush + BROADCAST_INTERVAL_MS - this.now();
    if (wait <= 0) this.immediate = setImmediate(() => this.flush());
    else this.timer = setTimeout(() => this.flush(), wait);
  }
}

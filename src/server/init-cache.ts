// `init` as sent: encoded once per registry version and shared by every client that connects
// while it holds (up to 16 MiB each). A heartbeat changes a node's last_seen but is no new
// version: every live agent pings every 30 s, so a cache renewed on each ping would give almost
// every client a private copy. A pinged registry is encoded again once the cached frame is one
// heartbeat period old, so last_seen in `init` is never staler than a node's own last_seen is
// between two of its pings.

/** A node's last_seen moves once per heartbeat: `init` may lag it by as much. */
export const INIT_HEARTBEAT_MS = 30_000;

export class InitFrameCache {
  private frame: Buffer | undefined;
  private builtAt = 0;
  private pinged = false;
  private count = 0;

  constructor(
    private readonly encode: () => Buffer,
    private readonly now: () => number,
  ) {}

  /** The registry changed: the next client gets a new frame. */
  changed(): void {
    this.frame = undefined;
  }

  /** A heartbeat moved a node's last_seen. */
  heartbeat(): void {
    this.pinged = true;
  }

  get(): Buffer {
    if (this.frame && this.pinged && this.now() - this.builtAt >= INIT_HEARTBEAT_MS) this.frame = undefined;
    if (!this.frame) {
      this.frame = this.encode();
      this.builtAt = this.now();
      this.pinged = false;
      this.count++;
    }
    return this.frame;
  }

  /** How many frames were encoded so far. */
  get encodes(): number {
    return this.count;
  }
}

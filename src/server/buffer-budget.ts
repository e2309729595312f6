// One budget for every byte serve holds for a connection that has not yet gone out: registry
// clients' init, events and replies, and both sides of every agent proxy. Each connection is
// bounded on its own (it is not read while too much is unsent to it, and closed if it stays so), but
// a thousand of them each within its bound could still take gigabytes; past the budget, the
// connections holding the most are closed (the oldest first among equals) until serve is back
// under it, and one line says which. A frame shared by many clients (init, a flush's events) counts once.

/** The default budget: with serve's own ~60 MB, a worst mix of 1,000 connections stays under 512 MB. */
export const DEFAULT_BUFFER_BUDGET = 256 * 1024 * 1024;
/**
 * What one queued write costs besides its bytes (ws's header, Node's write requests): ~220 bytes
 * for a frame sent through ws, measured with frames queued on sockets that are not read.
 */
export const WRITE_OVERHEAD = 256;
/** Connections named in the one line (the rest are counted). */
const LISTED = 5;

/** A connection that may hold unsent bytes. */
export interface BudgetHolder {
  /** Its place in the order connections opened in: among equals, the oldest goes first. */
  readonly opened: number;
  /** "connection 12 (node X)", "proxy to X (host:port)". */
  label(): string;
  /** Bytes unsent to it, shared frames included. */
  unsent(): number;
  /** What closing it frees for sure: its own bytes (a shared frame may be held by others too). */
  freeable(): number;
  terminate(): void;
  readonly closed: Promise<void>;
}

export class BufferBudget {
  private total = 0;
  /** Shared frames in flight, and how many sends of each are not yet out. */
  private readonly shared = new Map<Buffer, number>();
  /** Holders closed by the budget whose bytes are not yet released. */
  private readonly closing = new Map<BudgetHolder, number>();
  private scheduled = false;

  constructor(
    readonly limit: number,
    private readonly holders: () => Iterable<BudgetHolder>,
    private readonly log: (line: string) => void,
  ) {}

  /** Bytes unsent in all. */
  get bytes(): number {
    return this.total;
  }

  hold(bytes: number): void {
    this.total += bytes;
    if (this.total > this.limit) this.schedule();
  }

  release(bytes: number): void {
    this.total -= bytes;
  }

  holdShared(frame: Buffer): void {
    const n = this.shared.get(frame) ?? 0;
    this.shared.set(frame, n + 1);
    if (n === 0) this.hold(frame.length);
  }

  releaseShared(frame: Buffer): void {
    const n = this.shared.get(frame) ?? 0;
    if (n <= 1) {
      this.shared.delete(frame);
      if (n === 1) this.release(frame.length);
    } else this.shared.set(frame, n - 1);
  }

  /** After what is being done now: one send past the budget rarely comes alone. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.enforce();
    });
  }

  private enforce(): void {
    let expected = this.total;
    for (const bytes of this.closing.values()) expected -= bytes;
    if (expected <= this.limit) return;
    const candidates = [...this.holders()].filter((h) => !this.closing.has(h) && h.unsent() > 0);
    candidates.sort((a, b) => b.unsent() - a.unsent() || a.opened - b.opened);
    const closed: string[] = [];
    for (const holder of candidates) {
      if (expected <= this.limit) break;
      const freed = holder.freeable();
      expected -= freed;
      closed.push(`${holder.label()} (${holder.unsent()} bytes)`);
      this.closing.set(holder, freed);
      void holder.closed.then(() => this.closing.delete(holder));
      holder.terminate();
    }
    if (closed.length === 0) return;
    const more = closed.length > LISTED ? `, and ${closed.length - LISTED} more` : '';
    this.log(`serve: ${this.total} bytes unsent in all, over the budget of ${this.limit}: closed the largest first: ${closed.slice(0, LISTED).join(', ')}${more}`);
  }
}

/**
 * When ghostwatch first saw each (id, pid): the reuse reference when a registry gives no
 * registration time, and it survives re-reads. A new pid under an old id starts a new clock.
 */
export class FirstSeen {
  private readonly seen = new Map<string, { pid: unknown; at: number }>();

  at(id: string, pid: unknown, now: number): number {
    const s = this.seen.get(id);
    if (s && s.pid === pid) return s.at;
    this.seen.set(id, { pid, at: now });
    return now;
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  /** Forget every id not in this read. */
  keepOnly(ids: { has(id: string): boolean }): void {
    for (const id of this.seen.keys()) if (!ids.has(id)) this.seen.delete(id);
  }
}

// One generic table of facts about watched keys (pids, ports): which keys are watched, the facts
// as last probed, which keys still wait for their first probe (`settled` waits for those) and
// which must be probed at once. The engine keeps one for pids and one for ports; a remote host's
// provider will fill tables just like these.

export class FactTable<F> {
  /** Handed to reconcile as is: only ever replaced into, never copied. */
  readonly facts = new Map<number, F>();
  /** Watched and not yet probed (fully, for pids). */
  readonly awaiting = new Set<number>();
  /** To be probed at once, not at the next tick. */
  readonly urgent = new Set<number>();
  private keySet: ReadonlySet<number> = new Set();
  private keyList: readonly number[] = [];

  /** `merge` folds a fresh result into the previous facts: undefined keeps the previous object. */
  constructor(private readonly merge: (prev: F | undefined, next: F) => F | undefined) {}

  /** The watched keys, in the order they were given. */
  get keys(): readonly number[] {
    return this.keyList;
  }

  has(key: number): boolean {
    return this.keySet.has(key);
  }

  /** Watch exactly `next`: new keys wait for a probe and are urgent, dropped keys are forgotten. True when a key was added. */
  watch(next: ReadonlySet<number>): boolean {
    let added = false;
    for (const key of next) {
      if (this.keySet.has(key)) continue;
      this.awaiting.add(key);
      this.urgent.add(key);
      added = true;
    }
    for (const key of this.keySet) {
      if (next.has(key)) continue;
      this.facts.delete(key);
      this.awaiting.delete(key);
      this.urgent.delete(key);
    }
    this.keySet = next;
    this.keyList = [...next];
    return added;
  }

  /** Fold a probe result of watched keys (others are ignored): true when facts reconcile can see changed. */
  fold(result: ReadonlyMap<number, F>): boolean {
    let changed = false;
    for (const [key, next] of result) {
      if (!this.keySet.has(key)) continue;
      this.awaiting.delete(key);
      const merged = this.merge(this.facts.get(key), next);
      if (merged) {
        this.facts.set(key, merged);
        changed = true;
      }
    }
    return changed;
  }
}

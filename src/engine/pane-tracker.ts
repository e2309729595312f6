// Which tmux pane each tracked pid runs in, as last looked up: live pids are looked up (new ones
// soon, all of them once a minute of cadence), and a pid that died keeps the pane it was last
// seen in for as long as that pane exists: a pane whose agent died is where the person goes next.
import type { PidFacts } from '../core/types.js';
import type { TmuxPane } from '../core/tmux.js';
import type { PaneLookup } from '../os/tmux.js';
import { isAlive } from './fact-merge.js';
import type { FactTable } from './fact-table.js';

/** Every this many lookups, every live pid's chain is walked again (not only the new pids'). */
export const PANE_REFRESH_EVERY = 12;

export class PaneTracker {
  private byPid: ReadonlyMap<number, TmuxPane> = new Map();
  /** Live pids looked up and found in no pane: not walked again until a full lookup. */
  private readonly paneless = new Set<number>();
  private lookups = 0;

  /** Pid → the pane it runs in (or, for a dead pid, last ran in). Replaced, never changed in place. */
  get panes(): ReadonlyMap<number, TmuxPane> {
    return this.byPid;
  }

  /** The pids the next lookup walks: those not known dead; of those only new ones unless it is a full lookup. */
  plan(pids: FactTable<PidFacts>, everything = false): number[] {
    const full = everything || this.lookups++ % PANE_REFRESH_EVERY === 0;
    return pids.keys.filter((pid) => {
      const f = pids.facts.get(pid);
      if (f !== undefined && !isAlive(f.kill)) return false;
      return full || (!this.byPid.has(pid) && !this.paneless.has(pid));
    });
  }

  /** Fold a lookup of `walked` in; true when a pid's pane changed. */
  apply(lookup: PaneLookup, walked: readonly number[], pids: FactTable<PidFacts>): boolean {
    if (!lookup.available) {
      this.paneless.clear();
      return this.replace(new Map());
    }
    const byId = new Map(lookup.panes.map((p) => [p.id, p]));
    const next = new Map<number, TmuxPane>();
    // Kept from before: the pane must still exist (its target is read afresh: windows get renumbered).
    for (const [pid, pane] of this.byPid) {
      const now = byId.get(pane.id);
      if (now && pids.has(pid)) next.set(pid, now);
    }
    for (const pid of walked) {
      const found = lookup.byPid.get(pid);
      if (found) {
        next.set(pid, found);
        this.paneless.delete(pid);
        continue;
      }
      const f = pids.facts.get(pid);
      // Died while it was looked up: the chain could not be read, the pane it was in stays.
      if (f !== undefined && !isAlive(f.kill)) continue;
      next.delete(pid);
      if (pids.has(pid)) this.paneless.add(pid);
    }
    for (const pid of this.paneless) if (!pids.has(pid)) this.paneless.delete(pid);
    return this.replace(next);
  }

  private replace(next: Map<number, TmuxPane>): boolean {
    const prev = this.byPid;
    if (prev.size === next.size && [...next].every(([pid, p]) => samePane(prev.get(pid), p))) return false;
    this.byPid = next;
    return true;
  }
}

function samePane(a: TmuxPane | undefined, b: TmuxPane): boolean {
  return a !== undefined && a.id === b.id && a.target === b.target && a.pid === b.pid;
}

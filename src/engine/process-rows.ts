// What the process table scans know: "who is this pid" for the live tracked pids, read for the
// detail view and attached to their facts as evidence. A process that has its row keeps it (only
// an exec changes name and command), so between full refreshes only new processes are read.

import type { PidFacts, ProcessInfo } from '../core/types.js';
import type { ProcessTableResult } from '../os/process-table.js';
import { isAlive, mergeProcess } from './fact-merge.js';
import type { FactTable } from './fact-table.js';
import type { OsState } from './types.js';

/** Every this many table scans (a minute at the default cadence), every live tracked pid's row is read again. */
export const TABLE_REFRESH_EVERY = 12;

export interface ScanPlan {
  /** The pids whose rows this scan reads. */
  readonly pids: readonly number[];
  /** Every live tracked pid's row is read again (not only the new ones). */
  readonly everything: boolean;
}

export class ProcessRows {
  private table: ReadonlyMap<number, ProcessInfo> | undefined;
  private scans = 0;

  get(pid: number): ProcessInfo | undefined {
    return this.table?.get(pid);
  }

  /** What the next scan reads: live tracked pids only, and of those only rowless ones unless it is a refresh. */
  plan(pids: FactTable<PidFacts>, evenIfIdle: boolean): ScanPlan {
    const everything = evenIfIdle || this.scans++ % TABLE_REFRESH_EVERY === 0;
    const wanted = pids.keys.filter((pid) => {
      const f = pids.facts.get(pid);
      return f !== undefined && isAlive(f.kill) && (everything || f.process === undefined);
    });
    return { pids: wanted, everything };
  }

  /** Fold a scan into the rows and the pids' facts; the table status is reported once per change. */
  apply(scan: ProcessTableResult, plan: ScanPlan, pids: FactTable<PidFacts>, os: OsState): { os: OsState; changed: boolean } {
    let changed = false;
    if (!scan.ok) {
      // Liveness never depends on the table, so everything else keeps going.
      this.table = undefined;
      if (os.processTable === 'unavailable') return { os, changed };
      return { os: { ...os, processTable: 'unavailable', processTableError: scan.error }, changed: true };
    }
    if (os.processTable !== 'ok') {
      os = { ...os, processTable: 'ok', processTableError: undefined };
      changed = true;
    }
    if (plan.everything || this.table === undefined) this.table = scan.processes;
    else {
      const table = new Map(this.table);
      for (const [pid, row] of scan.processes) table.set(pid, row);
      for (const pid of pids.keys) {
        const f = pids.facts.get(pid);
        if (f !== undefined && !isAlive(f.kill)) table.delete(pid);
      }
      this.table = table;
    }
    for (const pid of plan.pids) {
      const prev = pids.facts.get(pid);
      const merged = prev && mergeProcess(prev, scan.processes.get(pid));
      if (merged) {
        pids.facts.set(pid, merged);
        changed = true;
      }
    }
    return { os, changed };
  }
}

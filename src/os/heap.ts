// Giving back, once, the memory the monitor's start-up left behind.
//
// A start on a large registry allocates in bursts: the init frame of 10,000 nodes, then one
// recompute per round of first probes, each result living until the next. The garbage of those
// rounds is promoted to the old generation, and V8 keeps the pages it grew into until its memory
// reducer decides the process is idle (~10-30 s later here). Measured on the 10,000-session
// bench: a JS heap of ~43 MB committed with ~23 MB live, RSS ~105 MB, for the first half-minute.
//
// Once the engine has settled (the first full picture is on screen) the monitor asks for one
// full collection that also compacts, so the emptied pages go back to the OS at once: ~25-40 ms
// of one core, once per run. Nothing else calls this; steady-state collection is V8's own.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One compacting full collection. V8 offers it only through its `gc` extension, installed in
 * contexts made while --expose-gc is set: a throwaway context lends the function, the flag is
 * reset before anything else runs, and compaction is forced for this one collection only.
 * False when this V8 refuses (its flags frozen, the extension gone): nothing was changed then.
 */
export function compactHeapOnce(): boolean {
  let gc: unknown;
  try {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('typeof gc === "function" ? gc : undefined');
  } catch {
    return false;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc !== 'function') return false;
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    (gc as () => void)();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
  return true;
}

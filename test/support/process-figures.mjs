// What an endurance test measures of a process, after a full GC (the process runs with
// --expose-gc): its open fds, RSS, the JS heap without compiled code (JIT output grows with
// warm-up and is not data kept), what V8 has committed for its heap, and the memory outside the
// JS heap that JS objects hold (Buffers, socket data).
import { readdirSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

export function processFigures() {
  globalThis.gc?.();
  const m = process.memoryUsage();
  const heap = getHeapSpaceStatistics().reduce((n, s) => (s.space_name.startsWith('code') ? n : n + s.space_used_size), 0);
  return { fds: readdirSync('/proc/self/fd').length, rss: m.rss, heap, heapTotal: m.heapTotal, external: m.external };
}

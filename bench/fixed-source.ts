// A registry that never changes, for the benches' engine children: these sessions, connected,
// and nothing else ever (no events, no evictions).
import type { SessionEntry } from '../src/core/types.js';
import type { Source, SourceSnapshot } from '../src/sources/types.js';

export function fixedSource(sessions: readonly SessionEntry[]): Source {
  const snapshot: SourceSnapshot = {
    sessions: [...sessions],
    claims: [],
    state: { name: 'hypivisor', url: 'ws://bench', status: 'connected', since: Date.now(), repaired: 0, resyncs: 0, reconnects: 0, counters: { frames: 0, invalidJson: 0, badFrames: 0, unknownEvents: 0, badEntries: 0, oversize: 0, requestTimeouts: 0 }, clockOffsetMs: 0 },
  };
  return {
    name: 'hypivisor',
    start: () => {},
    stop: async () => {},
    snapshot: () => snapshot,
    subscribe: () => () => {},
    evict: async () => ({ ok: true }) as never,
    resync: async () => {},
  };
}

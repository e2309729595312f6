// A source the test drives by hand: its sessions and status are set directly, a re-sync counts
// (as the eviction re-check requires), an eviction is recorded and answered `evicted`.
import type { EvictionAction } from '../../src/core/evict-plan.js';
import type { ClaimEntry, SessionEntry } from '../../src/core/types.js';
import type { ConnectionStatus, Source, SourceSnapshot, SourceState } from '../../src/sources/types.js';
import type { FakeClock } from './fake-clock.js';

export class FakeSource implements Source {
  readonly evicted: EvictionAction[] = [];
  private snap: SourceSnapshot;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly clock: FakeClock,
    readonly name: string = 'fake',
  ) {
    const state: SourceState = {
      name: this.name,
      url: 'fake://registry',
      status: 'connecting',
      since: clock.now(),
      repaired: 0,
      resyncs: 0,
      reconnects: 0,
      counters: { frames: 0, invalidJson: 0, badFrames: 0, unknownEvents: 0, badEntries: 0, oversize: 0, requestTimeouts: 0 },
      clockOffsetMs: 0,
    };
    this.snap = { sessions: [], claims: [], state };
  }

  /** A session of this source, on `machine` (the engine's host unless told). */
  static session(id: string, fields: Partial<SessionEntry> & { machine: string }): SessionEntry {
    return { source: 'fake', id, ...fields };
  }

  start(): void {}

  async stop(): Promise<void> {}

  snapshot(): SourceSnapshot {
    return this.snap;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** New lists (and status): listeners are told, as a real source does after every change. */
  set(sessions: readonly SessionEntry[], status: ConnectionStatus = 'connected', claims: readonly ClaimEntry[] = []): void {
    this.snap = { sessions, claims, state: { ...this.snap.state, status, since: this.clock.now() } };
    for (const l of [...this.listeners]) l();
  }

  /** Tells the listeners without changing anything (a burst of events that changed nothing). */
  poke(): void {
    for (const l of [...this.listeners]) l();
  }

  evict(action: EvictionAction): ReturnType<Source['evict']> {
    this.evicted.push(action);
    return Promise.resolve({ outcome: 'evicted' });
  }

  async resync(): Promise<void> {
    const state = this.snap.state;
    this.snap = { ...this.snap, state: { ...state, resyncs: state.resyncs + 1, lastSyncAt: this.clock.now() } };
  }
}

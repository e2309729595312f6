// A source whose every answer the test sets: its entries and status, whether a re-sync reads
// anything, what an eviction request answers (or that it throws), with a hook at each request.
// Requests are recorded, never sent anywhere.
import type { EvictionAction } from '../../src/core/evict-plan.js';
import type { ClaimEntry, SessionEntry } from '../../src/core/types.js';
import { emptyCounters, type RegistryAnswer, type Source, type SourceSnapshot, type SourceState } from '../../src/sources/types.js';

export class ScriptedSource implements Source {
  readonly sent: EvictionAction[] = [];
  /** What every eviction request answers; an Error is thrown instead. */
  answer: RegistryAnswer | Error = { outcome: 'evicted' };
  /** Answers by entry id (session id or claim resource), over `answer`. */
  readonly answers = new Map<string, RegistryAnswer | Error>();
  /** A re-sync reads the registry (counts); false: it cannot. */
  rereads = true;
  onResync: (() => void) | undefined;
  onSend: ((action: EvictionAction) => void) | undefined;
  private state: SourceState;

  constructor(
    readonly name: string,
    public sessions: SessionEntry[],
    public claims: ClaimEntry[] = [],
    fields: Partial<SourceState> = {},
  ) {
    this.state = { name, url: 'test://registry', status: 'connected', since: 0, repaired: 0, resyncs: 0, reconnects: 0, counters: emptyCounters(), clockOffsetMs: 0, ...fields };
  }

  start(): void {}

  async stop(): Promise<void> {}

  subscribe(): () => void {
    return () => {};
  }

  snapshot(): SourceSnapshot {
    return { sessions: this.sessions, claims: this.claims, state: this.state };
  }

  async resync(): Promise<void> {
    this.onResync?.();
    if (this.rereads) this.state = { ...this.state, resyncs: this.state.resyncs + 1 };
  }

  async evict(action: EvictionAction): Promise<RegistryAnswer> {
    this.sent.push(action);
    this.onSend?.(action);
    const id = action.type === 'deregister' ? action.id : action.resource;
    const answer = this.answers.get(id) ?? this.answer;
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

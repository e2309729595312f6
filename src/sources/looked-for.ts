// A registry read because it may be on this host, not because anyone named it (no --source, no
// --registry): until it has been read once, "nothing answers there" is said as `absent` (shown,
// not an error, not counted by `check`'s exit code) and the source keeps trying quietly, so a
// registry started later appears. Once read, it is a registry like any other: losing it is an outage.

import type { EvictionAction } from '../core/evict-plan.js';
import { STATUS_TRAITS, type RegistryAnswer, type Source, type SourceSnapshot, type SourceState } from './types.js';

export class LookedForSource implements Source {
  readonly name: string;
  private readonly inner: Source;
  private readonly nothingThere: (state: SourceState) => boolean;
  private everRead = false;
  private lastInner: SourceSnapshot | undefined;
  private lastShown: SourceSnapshot | undefined;
  private unwatch: (() => void) | undefined;

  /** `nothingThere`: whether a state of the inner source (before its first read) means there is no such registry here. */
  constructor(inner: Source, nothingThere: (state: SourceState) => boolean) {
    this.inner = inner;
    this.name = inner.name;
    this.nothingThere = nothingThere;
  }

  start(): void {
    // Every change is looked at, so a read between two of the engine's snapshots still counts.
    this.unwatch ??= this.inner.subscribe(() => this.notice(this.inner.snapshot()));
    this.inner.start();
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.unwatch = undefined;
    await this.inner.stop();
  }

  snapshot(): SourceSnapshot {
    const snap = this.inner.snapshot();
    if (snap === this.lastInner && this.lastShown) return this.lastShown;
    this.notice(snap);
    this.lastInner = snap;
    this.lastShown = this.everRead || !this.nothingThere(snap.state) ? snap : { ...snap, state: absentState(snap.state) };
    return this.lastShown;
  }

  subscribe(listener: () => void): () => void {
    return this.inner.subscribe(listener);
  }

  evict(action: EvictionAction): Promise<RegistryAnswer> {
    return this.inner.evict(action);
  }

  resync(): Promise<void> {
    return this.inner.resync();
  }

  showProblems(shown: boolean): void {
    this.inner.showProblems?.(shown);
  }

  private notice(snap: SourceSnapshot): void {
    if (STATUS_TRAITS[snap.state.status].reading) this.everRead = true;
  }
}

/** The inner state said as "not here": where it was looked for and what answered, no outage, no countdown. */
function absentState(s: SourceState): SourceState {
  const what = s.cause ?? s.lastError ?? s.status;
  return { ...s, status: 'absent', lastError: `not on this host (${what}); looked for, not named: not an error`, cause: undefined, downSince: undefined, retryAt: undefined, confirmedAt: undefined };
}

/** hypivisor's causes that mean nothing answers at the address (not: something answered and refused). */
const NOTHING_ANSWERS = [/^connection refused$/, /^DNS lookup failed/, /^no answer \(timed out\)$/, /^host unreachable$/];

/**
 * hypivisor looked for: nothing listening (or no such host) is absence, also while it tries again
 * (the cause is kept through a retry); a token refused, TLS or HTTP errors are not.
 */
export function hypivisorNotThere(s: SourceState): boolean {
  return (s.status === 'unreachable' || s.status === 'connecting') && s.cause !== undefined && NOTHING_ANSWERS.some((re) => re.test(s.cause!));
}

/** agentctl looked for (its socket or files were there): a socket nobody answers and no files to read is a stopped daemon, absence. */
export function agentctlNotThere(s: SourceState): boolean {
  return s.status === 'unreachable';
}

// What happened between two snapshots, as events a person reads instead of logs: a session
// joined or left, went offline or came back, was judged a ghost (or turned live again), a
// registry connected or was lost. Pure: the caller gives both frames and the moment.
import { findingKey } from './evict-plan.js';
import { sanitize } from './sanitize.js';
import type { Finding, Verdict } from './types.js';
import { VERDICT_TRAITS } from './verdicts.js';

/** A registry as the events see it: its name, its status word, and whether it is reading now. */
export interface EventSource {
  readonly name: string;
  readonly status: string;
  readonly reading: boolean;
  /** Why it is not reading, in a few words. */
  readonly why?: string | undefined;
}

/** One side of a diff: the rows and the registries of one snapshot. */
export interface EventFrame {
  readonly findings: readonly Finding[];
  readonly sources: readonly EventSource[];
}

export type WatchEventKind =
  /** A row appeared (a session registered, a claim was taken). */
  | 'joined'
  /** A row is gone from its registry (not by an eviction of ours). */
  | 'left'
  /** The registry marks the session offline / no longer does. */
  | 'offline'
  | 'online'
  /** The verdict changed (to a problem, or back to live...). */
  | 'judged'
  /** Removed by an eviction of ours. */
  | 'evicted'
  /** A registry's connection state changed. */
  | 'source'
  /** Processes a dead agent started were first found still running (`rows`: how many; `detail`: which). */
  | 'leftovers';

export interface WatchEvent {
  /** Local clock, epoch ms. */
  readonly at: number;
  readonly kind: WatchEventKind;
  /** The registry the event is about. */
  readonly source: string;
  /** Row events: whose. */
  readonly rowKind?: 'session' | 'claim' | undefined;
  readonly id?: string | undefined;
  /** The row's verdict after the event; for 'judged', `from` is the one before. */
  readonly verdict?: Verdict | undefined;
  readonly from?: Verdict | undefined;
  /** 'source': the status word after the change; `rows` how many rows it has now. */
  readonly status?: string | undefined;
  readonly reading?: boolean | undefined;
  readonly rows?: number | undefined;
  /** One line of why (the verdict's reason, the source's cause), as given: sanitized when shown. */
  readonly detail?: string | undefined;
}

export interface DiffOptions {
  /** Keys (findingKey) of rows our own evictions removed: their leaving is already told. */
  readonly evicted?: ReadonlySet<string> | undefined;
  /** Only the newest this many events are wanted. */
  readonly limit?: number | undefined;
}

/**
 * A local row whose pid or port has not been probed yet: its `unverified` is no verdict, so it
 * joins (with its first real verdict) only once the OS has answered.
 */
export function awaitingFirstProbe(f: Finding): boolean {
  const e = f.evidence;
  if (f.verdict !== 'unverified' || !e.host.local || e.checkedAt !== undefined) return false;
  if (e.port?.result === 'not-probed') return true;
  // A usable pid the OS has not answered for (an unusable one is noted in evidence.pid).
  return f.kind === 'session' && typeof f.entry.pid === 'number' && e.pid === undefined && e.kill === undefined;
}

function isOffline(f: Finding): boolean {
  return f.kind === 'session' && f.entry.offline === true;
}

/** A row new or changed in one step: its version before (none: it is new) and after. */
export interface RowChange<F extends Finding = Finding> {
  readonly before: F | undefined;
  readonly after: F;
}

/** One step as the events see it: the registries before and after, and the rows that changed. */
export interface FrameChange {
  readonly sourcesBefore: readonly EventSource[];
  readonly sourcesAfter: readonly EventSource[];
  /** Rows new or changed (a row passed unchanged tells nothing), in the order of the rows after. */
  readonly changed: readonly RowChange[];
  /** Rows that are gone, in the order of the rows before. */
  readonly left: readonly Finding[];
  /** How many rows a registry has after: asked only of one whose status changed. */
  readonly rowsOf: (source: string) => number;
}

/**
 * The events between two frames, in a fixed order: registries first, then per row of `next`
 * (joined, offline/online, judged), then the rows that left. A registry that started or stopped
 * reading in this step is one event with its row count, not one per row: a reconnect replaces
 * the whole view and would otherwise bury everything else. A row waiting for its first probe
 * has no news yet (awaitingFirstProbe).
 */
export function diffEvents(prev: EventFrame, next: EventFrame, at: number, opts: DiffOptions = {}): WatchEvent[] {
  const old = new Map(prev.findings.map((f) => [findingKey(f), f]));
  const seen = new Set<string>();
  const changed: RowChange[] = [];
  for (const f of next.findings) {
    const key = findingKey(f);
    seen.add(key);
    changed.push({ before: old.get(key), after: f });
  }
  const left = [...old].flatMap(([key, p]) => (seen.has(key) ? [] : [p]));
  const rowsOf = (source: string): number => next.findings.filter((f) => f.source === source).length;
  return changeEvents({ sourcesBefore: prev.sources, sourcesAfter: next.sources, changed, left, rowsOf }, at, opts);
}

/**
 * The events of one step given what changed in it (diffEvents pairs the rows of two whole frames;
 * the engine pairs them as it reuses them). With `limit`, only the newest `limit` events are made:
 * a flood that changed 30,000 rows between two snapshots makes the few hundred a ring keeps.
 */
export function changeEvents(change: FrameChange, at: number, opts: DiffOptions = {}): WatchEvent[] {
  const limit = opts.limit ?? Number.POSITIVE_INFINITY;
  const sourceEvents: WatchEvent[] = [];
  const before = new Map(change.sourcesBefore.map((s) => [s.name, s]));
  /** Sources whose rows are told as one count in this step. */
  const wholesale = new Set<string>();
  for (const s of change.sourcesAfter) {
    const was = before.get(s.name);
    if (was !== undefined && was.status === s.status) continue;
    if (was === undefined || was.reading !== s.reading) wholesale.add(s.name);
    sourceEvents.push({ at, kind: 'source', source: s.name, status: s.status, reading: s.reading, rows: change.rowsOf(s.name), detail: s.reading ? undefined : s.why });
  }
  // The row events newest first, from the last row that left back to the first row that changed.
  const newestFirst: WatchEvent[] = [];
  for (let i = change.left.length - 1; i >= 0 && newestFirst.length < limit; i--) {
    const p = change.left[i]!;
    if (wholesale.has(p.source) || awaitingFirstProbe(p)) continue;
    // Our own eviction told it already, when it was sent.
    if (opts.evicted?.has(findingKey(p)) !== true) newestFirst.push({ at, source: p.source, rowKind: p.kind, id: p.id, verdict: p.verdict, kind: 'left' });
  }
  for (let i = change.changed.length - 1; i >= 0 && newestFirst.length < limit; i--) {
    const { before: was, after: f } = change.changed[i]!;
    if (wholesale.has(f.source)) continue;
    const events = rowEvents(was, f, at);
    for (let k = events.length - 1; k >= 0; k--) newestFirst.push(events[k]!);
  }
  const all = [...sourceEvents, ...newestFirst.reverse()];
  return all.length > limit ? all.slice(-limit) : all;
}

/** What one row's change says: joined, offline / online, judged (none while it waits for its first probe). */
function rowEvents(was: Finding | undefined, f: Finding, at: number): WatchEvent[] {
  if (awaitingFirstProbe(f)) return [];
  const p = was !== undefined && !awaitingFirstProbe(was) ? was : undefined;
  const row = { at, source: f.source, rowKind: f.kind, id: f.id, verdict: f.verdict } as const;
  if (p === undefined) return [{ ...row, kind: 'joined', detail: VERDICT_TRAITS[f.verdict].problem ? f.reason : undefined }];
  const events: WatchEvent[] = [];
  const flipped = isOffline(p) !== isOffline(f);
  if (flipped) events.push({ ...row, kind: isOffline(f) ? 'offline' : 'online' });
  // live ⇄ offline is what going offline or coming back means: the flip says it. A problem on either side is news.
  const mirrorsFlip = flipped && !f.problem && !p.problem;
  if (p.verdict !== f.verdict && !mirrorsFlip) events.push({ ...row, kind: 'judged', from: p.verdict, detail: f.reason });
  return events;
}

const plural = (n: number, word: string): string => `${grouped(n)} ${word}${n === 1 ? '' : 's'}`;

/**
 * `n` with commas between groups of three digits, as toLocaleString('en-US') writes it, spelled
 * out for whole numbers: the first call of ICU's number formatter maps ~6 MB of its data into
 * the process for good (a monitor shows "10,000 rows" once and keeps that memory).
 */
export function grouped(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let at = out.length; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`;
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}

/** The event as one line of plain words; every string from outside is made inert. */
export function eventText(e: WatchEvent): string {
  const src = sanitize(e.source, 40);
  if (e.kind === 'source') {
    const status = sanitize(e.status ?? '?', 40);
    if (e.reading === true) return `${src}: ${status}, ${plural(e.rows ?? 0, 'row')}`;
    return `${src}: ${status}${e.detail !== undefined ? ` (${sanitize(e.detail, 120)})` : ''}`;
  }
  const what = e.rowKind === 'claim' ? `claim ${sanitize(e.id, 80)}` : sanitize(e.id, 80);
  const why = e.detail !== undefined ? `: ${sanitize(e.detail, 160)}` : '';
  switch (e.kind) {
    case 'joined':
      return `${what} joined ${src}${e.verdict !== undefined && VERDICT_TRAITS[e.verdict].problem ? ` as ${e.verdict}${why}` : ''}`;
    case 'left':
      return `${what} left ${src}`;
    case 'offline':
      return `${what} went offline (${src})`;
    case 'online':
      return `${what} is back online (${src})`;
    case 'judged':
      return `${what} judged ${e.verdict ?? '?'} (was ${e.from ?? '?'})${why}`;
    case 'evicted':
      return `${what} evicted from ${src}${why}`;
    case 'leftovers': {
      const n = e.rows ?? 0;
      return `${what} (${src}) is dead and left ${grouped(n)} ${n === 1 ? 'process' : 'processes'} running${why}`;
    }
  }
}

/** How an event reads at a glance: bad news, good news, or neither. */
export function eventTone(e: WatchEvent): 'problem' | 'ok' | 'warning' | 'info' {
  switch (e.kind) {
    case 'source':
      return e.reading === true ? 'ok' : 'warning';
    case 'judged':
    case 'joined':
      return e.verdict !== undefined && VERDICT_TRAITS[e.verdict].problem ? 'problem' : e.kind === 'judged' ? 'ok' : 'info';
    case 'offline':
    case 'leftovers':
      return 'warning';
    case 'evicted':
      return 'ok';
    default:
      return 'info';
  }
}

/** The newest `limit` events, newest last: `ring` with `added` appended, the oldest dropped. */
export function keepLast(ring: readonly WatchEvent[], added: readonly WatchEvent[], limit: number): readonly WatchEvent[] {
  if (added.length === 0) return ring;
  const all = ring.length + added.length <= limit ? [...ring, ...added] : [...ring, ...added].slice(-limit);
  return all;
}

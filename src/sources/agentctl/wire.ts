// agentctl's formats (protocols.md §3): daemon replies, SessionRecord, Lock, and the state.json /
// locks.json files. Parsing only: nothing here reads a socket or a file.

import { capDepth, sanitize } from '../../core/sanitize.js';
import { readTime, type InvalidTime } from '../../core/time.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';

/** Records agentctl itself marks ended: it knows they are over (shown as offline, still evictable by prune). */
export const ENDED_STATUSES: ReadonlySet<string> = new Set(['stopped', 'completed', 'failed', 'error']);

export type Reply =
  | { readonly kind: 'result'; readonly id: string; readonly result: unknown }
  | { readonly kind: 'error'; readonly id: string; readonly code: string; readonly message: string }
  | { readonly kind: 'bad'; readonly why: string };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

function isoMs(v: unknown): number | undefined {
  return typeof v === 'string' ? Date.parse(v) : undefined;
}

/** One record's ISO time fields as ms: a field that is no time (core/time.ts) is noted in `invalid` and read as unknown. */
function isoReader(now: number, invalid: InvalidTime[]) {
  return (field: string, raw: unknown): number | undefined => readTime(field, raw, isoMs(raw), now, invalid);
}

/**
 * One line from the daemon. Errors come as `{id, error: {code: "ERR", message}}`; a line the
 * daemon cannot parse gets no reply at all, so every request has its own timeout.
 */
export function parseReply(line: string): Reply {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch {
    return { kind: 'bad', why: 'not JSON' };
  }
  if (!isObject(data) || typeof data.id !== 'string') return { kind: 'bad', why: 'no request id' };
  if (isObject(data.error)) {
    return { kind: 'error', id: data.id, code: String(data.error.code ?? 'ERR'), message: String(data.error.message ?? 'error') };
  }
  if (!('result' in data)) return { kind: 'bad', why: 'neither result nor error' };
  return { kind: 'result', id: data.id, result: data.result };
}

/**
 * `session.list` answers a bare `SessionRecord[]` (v1.9.1, observed: no `warnings`); an object
 * `{sessions, warnings}` is read too, its warnings kept. The call is not read-only: the daemon
 * asks every adapter and marks dead launched sessions stopped, which it then lists no more.
 */
export function sessionListOf(result: unknown): { records: unknown[]; warnings: string[] } | undefined {
  if (Array.isArray(result)) return { records: result, warnings: [] };
  if (!isObject(result) || !Array.isArray(result.sessions)) return undefined;
  const warnings = Array.isArray(result.warnings) ? result.warnings.filter((w): w is string => typeof w === 'string') : [];
  return { records: result.sessions, warnings };
}

/** state.json: `{"sessions": {"<id>": SessionRecord}, "version": 1}`; a record without an id takes its key's. */
export function stateFileRecords(data: unknown): unknown[] | undefined {
  if (!isObject(data) || !isObject(data.sessions)) return undefined;
  return Object.entries(data.sessions).map(([key, record]) => (isObject(record) && record.id === undefined ? { ...record, id: key } : record));
}

/**
 * What agentctl does on its own with an ended record (protocols.md §3). A record it launched or
 * tracked is marked stopped by its 30 s sweep, by `session.list` or by `session.prune`, and then
 * kept: nothing deletes it. A record an adapter discovers (a claude transcript) is listed again on
 * every `session.list` while the transcript exists: neither the sweep nor prune touches it.
 */
export const AGENTCTL_KEEPS_LAUNCHED = 'agentctl never deletes it: its sweep and session.prune only mark records stopped (state.json only grows)';
export const AGENTCTL_KEEPS_DISCOVERED = 'agentctl never removes it: it lists it from its transcript, which neither its sweep nor session.prune touches';

/** A record an agent adapter discovered (a claude transcript) rather than one agentctl launched: it has `meta.projectDir`. */
export function isDiscovered(record: Record<string, unknown>): boolean {
  return isObject(record.meta) && typeof record.meta.projectDir === 'string';
}

/**
 * A SessionRecord as an entry on this host (the daemon runs here), or undefined when it has no id.
 * A discovered record's `startedAt` is its transcript file's birth time (a session resumed days
 * later looks days old) and its `stoppedAt` the last transcript write: neither is a registration
 * or a death, so it gets no registration time (the reuse check uses when ghostwatch first saw
 * it) and its stoppedAt is its last activity (`lastSeen`), not when it went offline.
 * agentctl's liveness checks count EPERM as dead (its `process.kill(pid, 0)` sits in a catch-all).
 */
export function toSessionEntry(record: unknown, source: string, host: string, firstObservedAt: (id: string, pid: unknown) => number, now: number): SessionEntry | undefined {
  if (!isObject(record) || typeof record.id !== 'string' || record.id === '') return undefined;
  const status = text(record.status);
  const ended = status !== undefined && ENDED_STATUSES.has(status);
  const discovered = isDiscovered(record);
  const invalid: InvalidTime[] = [];
  const time = isoReader(now, invalid);
  const stoppedAt = time('stoppedAt', record.stoppedAt);
  const startedAt = time('startedAt', record.startedAt);
  return {
    source,
    id: record.id,
    machine: host,
    cwd: text(record.cwd),
    port: undefined,
    pid: capDepth(record.pid),
    offline: ended,
    ended,
    cleanup: discovered ? AGENTCTL_KEEPS_DISCOVERED : AGENTCTL_KEEPS_LAUNCHED,
    epermCountsDead: true,
    status,
    lastSeen: discovered ? stoppedAt : undefined,
    offlineSince: ended && !discovered ? stoppedAt : undefined,
    registeredAt: discovered ? undefined : startedAt,
    pidStartedAt: undefined,
    firstObservedAt: firstObservedAt(record.id, record.pid),
    joinSeq: undefined,
    invalidTimes: invalid.length > 0 ? invalid : undefined,
    raw: capDepth(record),
  };
}

/** What tells a lock from the others on its directory (its key, else the directory). */
export const claimKeyOf = (c: ClaimEntry): string => c.key ?? c.resource;

/**
 * A Lock as a claim on its directory. Auto-locks are held by their pid (v1.9 and later) or, from
 * older daemons without a pid, by their session; manual locks by whoever set them, which only
 * counts as a holder when it is the id of a session this daemon knows.
 */
export function toClaimEntry(lock: unknown, source: string, host: string, sessionIds: ReadonlySet<string>, now: number): ClaimEntry | undefined {
  if (!isObject(lock) || typeof lock.directory !== 'string' || lock.directory === '') return undefined;
  const type = lock.type === 'manual' ? 'manual' : 'auto';
  const sessionId = text(lock.sessionId);
  const lockedBy = text(lock.lockedBy);
  const reason = text(lock.reason);
  let holder: string | undefined;
  let pid: unknown;
  if (type === 'auto') {
    pid = capDepth(lock.pid);
    holder = pid === undefined ? sessionId : undefined;
  } else {
    holder = lockedBy !== undefined && sessionIds.has(lockedBy) ? lockedBy : undefined;
  }
  // Several locks may share a directory (a manual lock on top of an auto-lock, a second auto-lock
  // with --force): each is told apart by its type and its pid or setter.
  const key = `${lock.directory}\u0000${type}\u0000${type === 'auto' ? `pid ${String(pid ?? '')} session ${sessionId ?? ''}` : `by ${lockedBy ?? ''}`}`;
  // The note is display text built from the daemon's strings: sanitized as it is made.
  const invalid: InvalidTime[] = [];
  const acquiredAt = isoReader(now, invalid)('lockedAt', lock.lockedAt);
  const who = type === 'manual' ? `manual lock${lockedBy ? ` by ${sanitize(lockedBy, 60)}` : ''}` : `auto-lock${sessionId ? ` of session ${sanitize(sessionId, 60)}` : ''}`;
  return {
    source,
    resource: lock.directory,
    key,
    holder,
    pid,
    machine: host,
    acquiredAt,
    note: reason ? `${who}: ${sanitize(reason, 200)}` : who,
    heartbeatAt: undefined,
    staleAfterMs: undefined,
    invalidTimes: invalid.length > 0 ? invalid : undefined,
    raw: capDepth(lock),
  };
}

export function isManualLock(raw: unknown): boolean {
  return isObject(raw) && raw.type === 'manual';
}

/**
 * A read's records and locks as entries: one per session id and one per lock (directory, type,
 * pid or setter: a directory may hold several); a repeat is dropped like a record without a
 * usable id. `seen` holds the session ids kept.
 */
export function entriesOf(
  records: readonly unknown[],
  locks: readonly unknown[],
  source: string,
  host: string,
  firstObservedAt: (id: string, pid: unknown) => number,
  now: number,
): { sessions: SessionEntry[]; claims: ClaimEntry[]; seen: ReadonlySet<string> } {
  const sessions: SessionEntry[] = [];
  const seen = new Set<string>();
  for (const r of records) {
    const entry = toSessionEntry(r, source, host, firstObservedAt, now);
    if (!entry || seen.has(entry.id)) continue;
    seen.add(entry.id);
    sessions.push(entry);
  }
  const claims: ClaimEntry[] = [];
  const keys = new Set<string>();
  for (const l of locks) {
    const claim = toClaimEntry(l, source, host, seen, now);
    if (!claim || keys.has(claimKeyOf(claim))) continue;
    keys.add(claimKeyOf(claim));
    claims.push(claim);
  }
  return { sessions, claims, seen };
}

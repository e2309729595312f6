// The hypivisor wire format (protocols.md §1, §2): frames in, entries out. Nothing here throws
// on hostile input: every frame is classified, and what cannot be used says why.

import { capDepth, compactText } from '../../core/sanitize.js';
import { readTime, type InvalidTime } from '../../core/time.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';

export type Frame =
  | { readonly kind: 'init'; readonly nodes: readonly unknown[]; readonly claims?: readonly unknown[] | undefined }
  | { readonly kind: 'node_joined'; readonly node: unknown }
  | { readonly kind: 'node_offline'; readonly id: string }
  | { readonly kind: 'node_removed'; readonly id: string }
  | { readonly kind: 'claim_acquired'; readonly claim: unknown }
  | { readonly kind: 'claim_released'; readonly resource: string }
  | { readonly kind: 'unknown-event'; readonly event: string }
  | { readonly kind: 'response'; readonly id: string; readonly result?: unknown; readonly error?: string | undefined }
  | { readonly kind: 'invalid-json' }
  | { readonly kind: 'bad'; readonly why: string };

type Json = Record<string, unknown>;

/**
 * The registry URL with the token as `?token=`: percent-encoded, never URLSearchParams' '+' for a
 * space, because hypivisor decodes only %XX escapes.
 */
export function urlWithToken(url: string | URL, token: string | undefined): URL {
  const u = new URL(url);
  if (token !== undefined) u.search = `${u.search ? `${u.search}&` : '?'}token=${encodeURIComponent(token)}`;
  return u;
}

/** A text frame's bytes as a string, whichever of ws's three shapes they came in. */
export function rawToString(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return data.toString('utf8');
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Classify one text frame. An object with an "event" key is an event; anything else is a response.
 * A frame JSON.parse cannot read (bad syntax, or nesting so deep the parser gives up with a
 * RangeError) is 'invalid-json': counted and dropped by the caller, never thrown.
 */
export function parseFrame(text: string): Frame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid-json' };
  }
  if (!isObject(value)) return { kind: 'bad', why: 'not a JSON object' };
  if ('event' in value) return parseEvent(value);
  if (typeof value.id !== 'string') return { kind: 'bad', why: 'a response without a string id' };
  if ('error' in value) {
    // compactText, not JSON.stringify: an error object 100,000 levels deep must not overflow the stack.
    return { kind: 'response', id: value.id, error: typeof value.error === 'string' ? value.error : compactText(value.error, 1_000) };
  }
  return { kind: 'response', id: value.id, result: value.result };
}

function parseEvent(value: Json): Frame {
  const event = value.event;
  if (typeof event !== 'string') return { kind: 'bad', why: 'an event name that is not a string' };
  switch (event) {
    case 'init':
      if (!Array.isArray(value.nodes)) return { kind: 'bad', why: 'init without a nodes array' };
      return { kind: 'init', nodes: value.nodes, claims: Array.isArray(value.claims) ? value.claims : undefined };
    case 'node_joined':
      return { kind: 'node_joined', node: value.node };
    case 'node_offline':
    case 'node_removed':
      if (typeof value.id !== 'string') return { kind: 'bad', why: `${event} without a string id` };
      return { kind: event, id: value.id };
    case 'claim_acquired':
      return { kind: 'claim_acquired', claim: value.claim };
    case 'claim_released':
      if (typeof value.resource !== 'string') return { kind: 'bad', why: 'claim_released without a string resource' };
      return { kind: 'claim_released', resource: value.resource };
    default:
      return { kind: 'unknown-event', event };
  }
}

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' ? value * 1000 : undefined;
}

/** The reader of one record's time fields: a field that is no time is noted in `invalid` and read as unknown. */
function timeReader(now: number, invalid: InvalidTime[]) {
  return (field: string, raw: unknown, ms: number | undefined): number | undefined => readTime(field, raw, ms, now, invalid);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The id and raw pid of a node, or undefined when it has no usable id. */
export function nodeKey(node: unknown): { id: string; pid: unknown } | undefined {
  if (!isObject(node) || typeof node.id !== 'string' || node.id === '') return undefined;
  return { id: node.id, pid: node.pid };
}

/** hypivisor's own cleanup of an offline node (protocols.md §1: a sweep every 15 s, TTL 30 s by default). */
const SWEEP = 'the registry sweeps it once its TTL has passed (30 s by default)';

/**
 * A NodeInfo as a SessionEntry, or undefined when it has no usable id. Registry timestamps are
 * Unix seconds on the registry's clock; entries keep them in ms, still on the registry's clock.
 * A timestamp that is no time (core/time.ts, against `now`, ours) is unknown and in `invalidTimes`.
 * One object literal with every field, so all entries share one hidden class. Values nested deeper
 * than MAX_DEPTH levels (in `raw`, `pid`, `port`) are replaced by a marker here, as they come in:
 * nothing downstream (check --json, the detail view, the filter) then walks an unbounded depth.
 */
export function toSessionEntry(
  input: unknown,
  source: string,
  observed: { firstObservedAt: number | undefined; joinSeq: number | undefined },
  now: number,
): SessionEntry | undefined {
  if (!isObject(input) || typeof input.id !== 'string' || input.id === '') return undefined;
  const node = capDepth(input);
  const status = text(node.status);
  const invalid: InvalidTime[] = [];
  const time = timeReader(now, invalid);
  const lastSeen = time('last_seen', node.last_seen, seconds(node.last_seen));
  const offlineSince = time('offline_since', node.offline_since, seconds(node.offline_since));
  const registeredAt = time('registered_at', node.registered_at, seconds(node.registered_at));
  const pidStartedAt = time('pid_started_at', node.pid_started_at, typeof node.pid_started_at === 'number' ? node.pid_started_at : undefined);
  return {
    source,
    id: input.id,
    machine: text(node.machine),
    cwd: text(node.cwd),
    port: node.port,
    // hypivisor's agents serve WebSocket there: its proxy opens ws://<machine>:<port>/ (protocols.md §1).
    portProtocol: 'websocket',
    pid: node.pid,
    offline: status === 'offline',
    ended: undefined,
    cleanup: SWEEP,
    epermCountsDead: undefined,
    status,
    lastSeen,
    offlineSince,
    registeredAt,
    pidStartedAt,
    firstObservedAt: observed.firstObservedAt,
    joinSeq: observed.joinSeq,
    invalidTimes: invalid.length > 0 ? invalid : undefined,
    raw: node,
  };
}

export function toClaimEntry(input: unknown, source: string, now: number): ClaimEntry | undefined {
  if (!isObject(input) || typeof input.resource !== 'string' || input.resource === '') return undefined;
  const claim = capDepth(input); // as toSessionEntry
  const invalid: InvalidTime[] = [];
  const acquiredAt = timeReader(now, invalid)('acquired_at', claim.acquired_at, seconds(claim.acquired_at));
  return {
    source,
    resource: input.resource,
    holder: text(claim.holder),
    pid: claim.pid,
    machine: undefined,
    acquiredAt,
    note: undefined,
    invalidTimes: invalid.length > 0 ? invalid : undefined,
    raw: claim,
  };
}

/**
 * What sameIdentity(entry, toSessionEntry(node)) would say, read off the raw node without making
 * the entry: a re-sync of 10,000 unchanged nodes then makes no entries at all. Only for a node
 * with the entry's id whose pid and port are plain values; anything else is answered false and
 * the caller makes the entry as before.
 */
export function sameIdentityAsNode(entry: SessionEntry, node: unknown): boolean {
  if (!isObject(node) || node.id !== entry.id) return false;
  const { pid, port } = node;
  if ((typeof pid === 'object' && pid !== null) || (typeof port === 'object' && port !== null)) return false;
  return text(node.machine) === entry.machine && text(node.cwd) === entry.cwd && port === entry.port && pid === entry.pid && text(node.status) === entry.status;
}

/**
 * The node says nothing new about its entry: the same identity and the same top-level values
 * (`last_seen`, `offline_since`, `registered_at` and any other field the detail view shows). Read
 * off the raw node without making anything. A nested value (none in NodeInfo) is not compared:
 * capped in depth and shown only, its change alone does not refresh the entry.
 */
export function sameNodeAs(entry: SessionEntry, node: unknown): boolean {
  if (!sameIdentityAsNode(entry, node)) return false;
  const raw = entry.raw;
  const fresh = node as Json;
  if (raw === undefined) return false;
  let keys = 0;
  for (const k in fresh) {
    if (!Object.prototype.hasOwnProperty.call(fresh, k)) continue;
    keys++;
    const v = fresh[k];
    const was = raw[k];
    if (typeof v === 'object' && v !== null) {
      if (typeof was !== 'object' || was === null) return false;
    } else if (was !== v) return false;
  }
  for (const k in raw) if (Object.prototype.hasOwnProperty.call(raw, k)) keys--;
  return keys === 0;
}

/**
 * The fields whose change means the registry's view moved: a change of any other field (last_seen
 * moves with every heartbeat) refreshes the entry but is no drift (sameNodeAs).
 */
export function sameIdentity(a: SessionEntry, b: SessionEntry): boolean {
  return a.machine === b.machine && a.cwd === b.cwd && a.port === b.port && a.pid === b.pid && a.status === b.status;
}

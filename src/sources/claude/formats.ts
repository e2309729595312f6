// The Claude Code session files (protocols.md §4), parsed into entries. Pure: text in, entries
// (or an Error saying what is wrong) out. Three families, three sources:
//   claude           ~/.claude/sessions/<pid>.json (written by Claude Code itself)
//   claude-view      ~/.claude/live-monitor-pids.json (claude-view's snapshot, v1 and v2)
//   claude-sessions  ~/.claude-sessions/<session_id>.json (a claim-tracking session manager)

import { capDepth } from '../../core/sanitize.js';
import { readTime, type InvalidTime } from '../../core/time.js';
import type { ClaimEntry, PidDomain, SessionEntry } from '../../core/types.js';

/** The claim manager's own rule: a claim whose heartbeat is older than this is stale. */
export const CLAIM_HEARTBEAT_STALE_MS = 900_000;

/** What one file holds, before ids are made unique across files. */
export interface FileEntries {
  readonly sessions: readonly SessionEntry[];
  readonly claims: readonly ClaimEntry[];
}

export interface ParseContext {
  readonly source: string;
  /** This host: files under the home directory describe processes here unless they say otherwise. */
  readonly host: string;
  readonly firstSeen: (id: string, pid: unknown) => number;
  /** Local clock: the times a file gives are held against it (core/time.ts). */
  readonly now: () => number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Epoch ms from a positive number (ms, or seconds when it is too small to be ms) or an ISO string; NaN when neither. */
export function timeOf(v: unknown): number {
  if (typeof v === 'number') return v > 0 ? (v < 1e11 ? v * 1000 : v) : Number.NaN;
  return typeof v === 'string' ? Date.parse(v) : Number.NaN;
}

/**
 * One file's time fields as ms (timeOf), each held to core/time.ts: a field that is there and is no
 * time is read as unknown and noted in `invalid`, for the entry's `invalidTimes`.
 */
function timeReader(ctx: ParseContext, invalid: InvalidTime[]) {
  const now = ctx.now();
  return (field: string, raw: unknown): number | undefined => readTime(field, raw, timeOf(raw), now, invalid);
}

const listed = (invalid: readonly InvalidTime[]): readonly InvalidTime[] | undefined => (invalid.length > 0 ? invalid : undefined);

/** JSON.parse with the error a person can act on: where the text stops making sense. */
export function parseJson(body: string): unknown {
  if (body.trim() === '') throw new Error('empty file (being written?)');
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new Error(`not valid JSON (${(error as Error).message})`);
  }
}

const stem = (name: string): string => name.replace(/\.json$/, '');

type SessionFields = Omit<SessionEntry, 'source' | 'firstObservedAt' | 'joinSeq' | 'pidStartTicks' | 'pidDomain' | 'sessionId' | 'invalidTimes'> &
  Partial<Pick<SessionEntry, 'pidStartTicks' | 'pidDomain' | 'sessionId' | 'invalidTimes'>>;

function session(ctx: ParseContext, fields: SessionFields): SessionEntry {
  return {
    source: ctx.source,
    id: fields.id,
    machine: fields.machine,
    cwd: fields.cwd,
    port: undefined,
    pid: capDepth(fields.pid),
    offline: undefined,
    ended: undefined,
    cleanup: undefined,
    epermCountsDead: undefined,
    status: fields.status,
    lastSeen: fields.lastSeen,
    offlineSince: undefined,
    registeredAt: fields.registeredAt,
    pidStartedAt: undefined,
    pidStartTicks: fields.pidStartTicks,
    pidDomain: fields.pidDomain,
    sessionId: fields.sessionId,
    firstObservedAt: ctx.firstSeen(fields.id, fields.pid),
    joinSeq: undefined,
    invalidTimes: fields.invalidTimes,
    raw: capDepth(fields.raw),
  };
}

/** Claude Code's `procStart`: field 22 of /proc/<pid>/stat, as a string of digits. */
export function startTicksOf(v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^\d{1,15}$/.test(v)) return undefined;
  return Number(v);
}

/** Claude Code's `pidDomain`: `linux:<machine-id>:pid:[<pid-namespace inode>]`; what else it may say is kept unread. */
export function pidDomainOf(v: unknown): PidDomain | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') return { text: JSON.stringify(v) ?? String(v), unreadable: 'not a string' };
  const m = /^linux:([0-9a-f]{32}):pid:\[(\d{1,20})\]$/.exec(v);
  if (!m) return { text: v, unreadable: 'not linux:<machine-id>:pid:[<inode>]' };
  return { text: v, machineId: m[1], namespace: m[2] };
}

/** What the session is doing: Claude Code's own `status`; a `-p` run (entrypoint sdk-cli) has none and is a print run. */
function claudeStatus(data: Record<string, unknown>): string | undefined {
  const status = text(data.status);
  if (status !== undefined) return status;
  return data.entrypoint === 'sdk-cli' ? 'print' : undefined;
}

/**
 * ~/.claude/sessions/<pid>.json (protocols.md §4): `{pid, sessionId, cwd, startedAt (ms), procStart,
 * status, updatedAt, kind, entrypoint, version, name}`, and from 2.1.332 `pidDomain` and `tmux`.
 */
export function parseClaudeSession(body: string, name: string, ctx: ParseContext): FileEntries {
  const data = parseJson(body);
  if (!isObject(data)) throw new Error('not a JSON object');
  const fileStem = stem(name);
  const pid = data.pid ?? (/^\d+$/.test(fileStem) ? Number(fileStem) : undefined);
  const sessionId = text(data.sessionId);
  const id = sessionId ?? `pid-${fileStem}`;
  const invalid: InvalidTime[] = [];
  const time = timeReader(ctx, invalid);
  // Its last status change (not a heartbeat: an idle session does not write).
  const updatedAt = time('updatedAt', data.updatedAt);
  const statusUpdatedAt = time('statusUpdatedAt', data.statusUpdatedAt);
  const registeredAt = time('startedAt', data.startedAt);
  return {
    sessions: [
      session(ctx, {
        id,
        machine: ctx.host,
        cwd: text(data.cwd),
        pid,
        status: claudeStatus(data),
        lastSeen: updatedAt ?? statusUpdatedAt,
        registeredAt,
        pidStartTicks: startTicksOf(data.procStart),
        pidDomain: pidDomainOf(data.pidDomain),
        sessionId,
        invalidTimes: listed(invalid),
        raw: data,
      }),
    ],
    claims: [],
  };
}

/** ~/.claude/live-monitor-pids.json: v1 `{"<sessionId>": pid}`; v2 `{version: 2, sessions: {"<id>": {pid, status, lastActivityAt}}}`. */
export function parseLiveMonitor(body: string, _name: string, ctx: ParseContext): FileEntries {
  const data = parseJson(body);
  if (!isObject(data)) throw new Error('not a JSON object');
  const sessions: SessionEntry[] = [];
  if ('version' in data) {
    if (data.version !== 2) throw new Error(`unknown version ${JSON.stringify(data.version)} (this release reads 1 and 2)`);
    if (!isObject(data.sessions)) throw new Error('version 2 without a "sessions" object');
    for (const [id, rec] of Object.entries(data.sessions)) {
      if (id === '') continue;
      const r = isObject(rec) ? rec : {};
      const invalid: InvalidTime[] = [];
      const lastSeen = timeReader(ctx, invalid)('lastActivityAt', r.lastActivityAt);
      sessions.push(
        session(ctx, {
          id,
          machine: ctx.host,
          cwd: text(r.cwd),
          pid: r.pid,
          status: text(r.status),
          lastSeen,
          registeredAt: undefined,
          invalidTimes: listed(invalid),
          raw: { sessionId: id, ...r },
        }),
      );
    }
  } else {
    for (const [id, pid] of Object.entries(data)) {
      if (id === '') continue;
      sessions.push(session(ctx, { id, machine: ctx.host, cwd: undefined, pid, status: undefined, lastSeen: undefined, registeredAt: undefined, raw: { sessionId: id, pid } }));
    }
  }
  return { sessions, claims: [] };
}

/**
 * ~/.claude-sessions/<session_id>.json: `{session_id, pid, hostname, terminal_id, sd_id, claimed_at,
 * heartbeat_at}`. The session itself, and its claim on `sd_id` when it holds one: stale once the
 * heartbeat is older than 900 s or the pid is dead on this host.
 */
export function parseClaimSession(body: string, name: string, ctx: ParseContext): FileEntries {
  const data = parseJson(body);
  if (!isObject(data)) throw new Error('not a JSON object');
  const id = text(data.session_id) ?? stem(name);
  const machine = text(data.hostname) ?? ctx.host;
  const invalid: InvalidTime[] = [];
  const time = timeReader(ctx, invalid);
  const heartbeatAt = time('heartbeat_at', data.heartbeat_at);
  const claimedAt = time('claimed_at', data.claimed_at);
  const sessions = [
    session(ctx, {
      id,
      machine,
      cwd: text(data.cwd),
      pid: data.pid,
      status: text(data.status),
      lastSeen: heartbeatAt,
      registeredAt: claimedAt,
      invalidTimes: listed(invalid),
      raw: data,
    }),
  ];
  const sd = typeof data.sd_id === 'number' ? String(data.sd_id) : text(data.sd_id);
  const claims: ClaimEntry[] =
    sd === undefined
      ? []
      : [
          {
            source: ctx.source,
            resource: sd,
            holder: id,
            pid: capDepth(data.pid),
            machine,
            acquiredAt: claimedAt,
            note: text(data.terminal_id) ? `terminal ${text(data.terminal_id)}` : undefined,
            heartbeatAt,
            staleAfterMs: heartbeatAt === undefined ? undefined : CLAIM_HEARTBEAT_STALE_MS,
            invalidTimes: listed(invalid),
            raw: capDepth(data),
          },
        ];
  return { sessions, claims };
}

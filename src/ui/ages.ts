// The AGE of a row and when its text next changes. AGE is the true floor of an age ("1m" from 60 s
// to 119 s), and the table is redrawn at the moment a shown AGE (or a stale row's "stale 3m") would
// read differently: one timer for the earliest of those moments, never a redraw every second.
import type { Finding } from '../core/types.js';
import { deadSinceOf, goneAtFirstProbeOf, staleOf } from '../engine/types.js';

/** What an age is counted from (local clock), and whether it is only a lower bound ("≥ 6m"). */
export interface AgeOrigin {
  readonly since: number;
  /** The moment is the latest the thing can have begun: the age is at least what it says. */
  readonly atLeast: boolean;
}

/** What the AGE cell needs of the screen: the clock offsets of the sources. */
export interface AgeContext {
  /** Per source: registry clock minus local clock. */
  readonly clockOffsetMs?: Readonly<Record<string, number>> | undefined;
}

function local(ctx: AgeContext, source: string, registryMs: number): number {
  return registryMs - (ctx.clockOffsetMs?.[source] ?? 0);
}

/**
 * Where a row's AGE counts from. A problem whose process is gone: since it has been gone, the
 * first probe that found it so; when that was this monitor's first look at it (a monitor started
 * after the death, a tmux popup), the process ended earlier, at a moment not known here: the age
 * is a lower bound, and the registry's own `offline_since` (it saw the agent's connection end, which
 * the end of its process brings) is taken when earlier. Not `last_seen` nor Claude Code's
 * `updatedAt`: those are the last sign of life, after which the process may have run on for
 * hours, so a bound from them could overstate the age. A claim: since it was taken. Any other
 * row: since the registry has had it (`registered_at`, else first seen by ghostwatch).
 */
export function ageOrigin(f: Finding, ctx: AgeContext): AgeOrigin | undefined {
  if (f.kind === 'claim') {
    const at = f.entry.acquiredAt;
    return at === undefined ? undefined : { since: local(ctx, f.source, at), atLeast: false };
  }
  const dead = deadSinceOf(f);
  if (dead !== undefined) {
    if (!goneAtFirstProbeOf(f)) return { since: dead, atLeast: false };
    const offline = f.entry.offlineSince !== undefined ? local(ctx, f.source, f.entry.offlineSince) : undefined;
    return { since: offline !== undefined && offline < dead ? offline : dead, atLeast: true };
  }
  const e = f.entry;
  const since = e.registeredAt !== undefined ? local(ctx, f.source, e.registeredAt) : e.firstObservedAt;
  return since === undefined ? undefined : { since, atLeast: false };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** An age in a 4-cell column, floored: "<1m", "1m" … "59m", "1h" … "47h", "2d" …; "-" when unknown. */
export function formatAge(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < MINUTE) return '<1m';
  const m = Math.floor(ms / MINUTE);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** A lower bound: "≥6m" (and "≥0m" under a minute: "≥<1m" would read as nonsense). */
export function formatAtLeast(ms: number): string {
  return ms < MINUTE ? '≥0m' : `≥${formatAge(ms)}`;
}

/** The AGE cell: the floor of the age, "≥" before a lower bound. */
export function ageText(origin: AgeOrigin | undefined, now: number): string {
  if (origin === undefined) return '-';
  const ms = Math.max(0, now - origin.since);
  return origin.atLeast ? formatAtLeast(ms) : formatAge(ms);
}

/** How long until an age of `ms` reads differently in formatAge (it changes at whole units). */
export function untilAgeChanges(ms: number): number {
  if (!Number.isFinite(ms)) return Infinity;
  if (ms < MINUTE) return MINUTE - ms;
  if (ms < 48 * HOUR) {
    const unit = ms < HOUR ? MINUTE : HOUR;
    return unit - (ms % unit);
  }
  return DAY - (ms % DAY);
}

/**
 * The earliest local time after `now` at which a cell of these rows that shows an age (AGE, and a
 * stale row's "stale 3m" in STATUS) reads differently; undefined when none ever will.
 */
export function nextAgeChange(rows: readonly Finding[], ctx: AgeContext, now: number): number | undefined {
  let next = Infinity;
  const consider = (since: number | undefined): void => {
    if (since === undefined || !Number.isFinite(since)) return;
    next = Math.min(next, now + untilAgeChanges(Math.max(0, now - since)) + Math.max(0, since - now));
  };
  for (const f of rows) {
    consider(ageOrigin(f, ctx)?.since);
    consider(staleOf(f)?.since);
  }
  return Number.isFinite(next) ? next : undefined;
}

/** A sort key for the AGE column that does not move with the clock: the youngest first. */
export function ageSortKey(f: Finding, ctx: AgeContext): number {
  const origin = ageOrigin(f, ctx);
  return origin === undefined ? -Number.MAX_VALUE : -origin.since;
}

// The one rule for a time that comes from outside (a registry, a session file, another host): it
// is used only when it could be a moment of a running system, a finite number of ms within a
// hundred years of now. Anything else is an invalid time: kept to be shown as such, never evidence.
import { sanitize } from './sanitize.js';

/** How far from now a time may be and still be one: a hundred years (of 365.25 days). */
export const TIME_RANGE_MS = 100 * 365.25 * 86_400_000;

/** What the detail view and the reasons call a time that is none. */
export const INVALID_TIME = 'invalid time';

/** A time field a record or a host gave that is no time: which field, and its value as text (inert, short). */
export interface InvalidTime {
  readonly field: string;
  readonly value: string;
}

/** Epoch ms `value` is a time: a finite number within TIME_RANGE_MS of `now` (NaN, ±Infinity and non-numbers are not). */
export function isTime(value: unknown, now: number): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value - now) <= TIME_RANGE_MS;
}

/**
 * A time field as an adapter reads it: `ms` (what the field's `raw` value says, in epoch ms, as the
 * adapter converts it; undefined when it could not) when it is a time. A field that is there and is
 * no time is pushed on `invalid` and read as unknown; an absent one (undefined, null) is just absent.
 */
export function readTime(field: string, raw: unknown, ms: number | undefined, now: number, invalid: InvalidTime[]): number | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (isTime(ms, now)) return ms;
  invalid.push({ field, value: sanitize(raw, 60) });
  return undefined;
}

/** "pid_started_at 1e+300": each invalid time, for a reason or a detail line. */
export function invalidTimesText(times: readonly InvalidTime[]): string {
  return times.map((t) => `${t.field} ${t.value === '' ? '""' : t.value}`).join(', ');
}

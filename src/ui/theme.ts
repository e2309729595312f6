// Colours by meaning, and a text marker for every verdict so the table reads without colour
// (NO_COLOR, --no-color, a monochrome terminal). 16-colour palette names only.
import type { Verdict } from '../core/types.js';

export type Tone = 'problem' | 'warning' | 'ok' | 'info' | 'muted';

export const VERDICT_TONE: Readonly<Record<Verdict, Tone>> = {
  live: 'ok',
  held: 'ok',
  ghost: 'problem',
  zombie: 'problem',
  'stale-claim': 'problem',
  reused: 'warning',
  superseded: 'warning',
  pending: 'warning',
  offline: 'muted',
  remote: 'info',
  unverified: 'info',
};

export const TONE_COLOR: Readonly<Record<Tone, string>> = {
  problem: 'red',
  warning: 'yellow',
  ok: 'green',
  info: 'cyan',
  muted: 'gray',
};

/** '!' marks a problem, '?' what cannot be checked, '-' what the registry itself marks down. */
export function verdictMarker(verdict: Verdict, problem: boolean): string {
  if (problem) return '!';
  if (verdict === 'unverified' || verdict === 'remote') return '?';
  if (verdict === 'offline') return '-';
  return ' ';
}

/** Before the verdict of a row whose registry is not read now: the last known row, not evictable. */
export const STALE_MARKER = '~';

export const ACCENT = 'blue';

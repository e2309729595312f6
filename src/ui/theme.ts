// Colours by meaning, and a text marker for every verdict so the table reads without colour
// (NO_COLOR, --no-color, a monochrome terminal). 16-colour palette names only.
import { VERDICT_TRAITS, VERDICTS, type Verdict, type VerdictTone } from '../core/types.js';

/** What a verdict says, by meaning (core's VERDICT_TRAITS); TONE_COLOR says how it looks. */
export type Tone = VerdictTone;

export const VERDICT_TONE: Readonly<Record<Verdict, Tone>> = Object.fromEntries(VERDICTS.map((v) => [v, VERDICT_TRAITS[v].tone])) as Record<Verdict, Tone>;

export const TONE_COLOR: Readonly<Record<Tone, string>> = {
  problem: 'red',
  warning: 'yellow',
  ok: 'green',
  info: 'cyan',
  muted: 'gray',
};

/**
 * '!' marks a problem, '?' what cannot be checked, '-' what the registry itself marks down
 * (core's VERDICT_TRAITS). `problem` is the finding's own flag, which is the verdict's.
 */
export function verdictMarker(verdict: Verdict, problem: boolean = VERDICT_TRAITS[verdict].problem): string {
  if (problem) return '!';
  const marker = VERDICT_TRAITS[verdict].marker;
  return marker === '!' ? ' ' : marker;
}

/** Before the verdict of a row whose registry is not read now: the last known row, not evictable. */
export const STALE_MARKER = '~';

export const ACCENT = 'blue';

// The events pane's lines: pure, newest first, each with its local time and a tone. Every string
// from a registry is made inert by core's eventText.
import { eventText, eventTone, type WatchEvent } from '../core/events.js';
import { EVENTS_KEPT } from '../engine/types.js';
import { clockTime } from './text.js';
import type { Tone } from './theme.js';

export interface EventLine {
  /** Local wall-clock time, with the date when it is not today's. */
  readonly time: string;
  readonly text: string;
  readonly tone: Tone;
}

/** The heading of the pane, then one line per event, newest first. */
export function eventLines(events: readonly WatchEvent[] | undefined, now: number, settled: boolean): { title: string; lines: EventLine[] } {
  const all = events ?? [];
  const lines: EventLine[] = [];
  for (let i = all.length - 1; i >= 0; i--) {
    const e = all[i]!;
    lines.push({ time: clockTime(e.at, now), text: eventText(e), tone: eventTone(e) });
  }
  const title =
    all.length === 0
      ? settled
        ? 'events: nothing has happened since the monitor started'
        : 'events: waiting for the first full view of every registry'
      : `events: the last ${all.length === 1 ? 'one' : all.length}${all.length >= EVENTS_KEPT ? ` (${EVENTS_KEPT} are kept)` : ''}, newest first`;
  return { title, lines };
}

// Terminal concerns as hooks: the engine's snapshot, the pane's size, the clocks that redraw.
import { useStdout } from 'ink';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { Engine, EngineSnapshot } from '../engine/types.js';

export function useEngineSnapshot(engine: Engine): EngineSnapshot {
  return useSyncExternalStore(engine.subscribe, engine.getSnapshot);
}

export interface Size {
  readonly columns: number;
  readonly rows: number;
}

/** The pane's size, following resizes. `fixed` wins (tests, screenshots). */
export function useTerminalSize(fixed?: Size): Size {
  const { stdout } = useStdout();
  const read = (): Size => fixed ?? { columns: stdout.columns || 80, rows: stdout.rows || 24 };
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (fixed) return;
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => void stdout.off('resize', onResize);
  }, [stdout, fixed]);
  return size;
}

/**
 * "Now", floored to the minute and advanced once a minute: for the events pane's times ("3m
 * ago"). The table's ages follow their own timer (useTimerAt), set to the moment one changes.
 */
export function useMinuteClock(now: () => number): number {
  const floor = () => Math.floor(now() / 60_000) * 60_000;
  const [minute, setMinute] = useState(floor);
  useEffect(() => {
    let timer: NodeJS.Timeout;
    const schedule = () => {
      timer = setTimeout(() => {
        setMinute(floor());
        schedule();
      }, 60_000 - (now() % 60_000) + 5);
      timer.unref?.();
    };
    schedule();
    return () => clearTimeout(timer);
  }, [now]);
  return minute;
}

/**
 * Calls `due` at local time `at` (the next moment a shown age reads differently), and not before;
 * a new `at` replaces the timer, none sets none.
 */
export function useTimerAt(at: number | undefined, now: () => number, due: () => void): void {
  useEffect(() => {
    if (at === undefined || !Number.isFinite(at)) return;
    let timer: NodeJS.Timeout;
    // 5 ms past the moment, so the age computed then is past the unit boundary too; a timer that
    // fires before the clock says so waits again rather than draw the same frame.
    const arm = (): void => {
      timer = setTimeout(() => (now() >= at ? due() : arm()), Math.max(0, at - now()) + 5);
      timer.unref?.();
    };
    arm();
    return () => clearTimeout(timer);
  }, [at, now, due]);
}

/** Calls `expire` once `ms` after `value` last changed to something defined (a status-line message). */
export function useExpiry<T>(value: T | undefined, ms: number, expire: (value: T) => void): void {
  useEffect(() => {
    if (value === undefined) return;
    const timer = setTimeout(() => expire(value), ms);
    timer.unref?.();
    return () => clearTimeout(timer);
  }, [value, ms, expire]);
}

/**
 * "Now", redrawn once a second while `active` (a detail view's ages, a retry countdown), and
 * not at all otherwise: an idle table with every registry read sets no timer.
 */
export function useSecondTicks(active: boolean, now: () => number): number {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setTick((t) => t + 1), 1_000);
    timer.unref?.();
    return () => clearInterval(timer);
  }, [active]);
  return now();
}

/** How often state set from outside at any rate (usePacedState) is drawn at most: ~30 frames a second. */
export const PACED_FRAME_MS = 33;

/**
 * State that work outside React sets at its own rate (an eviction's progress: three steps per
 * entry, a thousand entries in a second or two), drawn at most once per `ms`: at once when the
 * last one drawn is older than that, else the latest value when it is. Keys need no such pacing
 * (their frames are drawn at once, render-options.ts); this is what keeps the data frames paced.
 * `setNow` sets it at once, dropping a value still waiting (the run's end).
 */
export function usePacedState<T>(initial: T, ms: number = PACED_FRAME_MS): [T, (value: T) => void, (value: T) => void] {
  const [value, setValue] = useState(initial);
  const waiting = useRef<{ readonly value: T } | undefined>(undefined);
  const timer = useRef<NodeJS.Timeout | undefined>(undefined);
  const drawnAt = useRef(Number.NEGATIVE_INFINITY);
  useEffect(() => () => clearTimeout(timer.current), []);
  const draw = useCallback((next: T) => {
    drawnAt.current = performance.now();
    setValue(() => next);
  }, []);
  const setPaced = useCallback(
    (next: T) => {
      if (timer.current !== undefined) {
        waiting.current = { value: next };
        return;
      }
      const wait = drawnAt.current + ms - performance.now();
      if (wait <= 0) {
        draw(next);
        return;
      }
      waiting.current = { value: next };
      timer.current = setTimeout(() => {
        timer.current = undefined;
        const latest = waiting.current;
        waiting.current = undefined;
        if (latest) draw(latest.value);
      }, wait);
    },
    [ms, draw],
  );
  const setNow = useCallback(
    (next: T) => {
      clearTimeout(timer.current);
      timer.current = undefined;
      waiting.current = undefined;
      draw(next);
    },
    [draw],
  );
  return [value, setPaced, setNow];
}

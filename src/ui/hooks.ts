// Terminal concerns as hooks: the engine's snapshot, the pane's size, the clocks that redraw.
import { useStdout } from 'ink';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { PUBLISH_GAP_MS, type Engine, type EngineSnapshot } from '../engine/types.js';

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

/**
 * State that work outside React sets at its own rate (an eviction's progress: three steps per
 * entry, a thousand entries in a second or two), drawn at most as often as the engine publishes
 * snapshots: a value is drawn at once unless one was drawn less than PUBLISH_GAP_MS ago; then the
 * latest is drawn when that time is up. Keys need no such pacing (their frames are drawn at once,
 * render-options.ts); this is what keeps the other data frames paced. `setNow` draws at once and
 * drops a value still waiting (the run's end).
 */
export function usePacedState<T>(initial: T): [T, (value: T) => void, (value: T) => void] {
  const [value, setValue] = useState(initial);
  /** Running while the last value drawn is younger than PUBLISH_GAP_MS. */
  const resting = useRef<NodeJS.Timeout | undefined>(undefined);
  const waiting = useRef<{ readonly value: T } | undefined>(undefined);
  useEffect(() => () => clearTimeout(resting.current), []);
  const rest = useCallback((): void => {
    resting.current = setTimeout(() => {
      resting.current = undefined;
      const latest = waiting.current;
      waiting.current = undefined;
      if (latest === undefined) return;
      setValue(() => latest.value);
      rest();
    }, PUBLISH_GAP_MS);
  }, []);
  const setPaced = useCallback(
    (next: T) => {
      if (resting.current !== undefined) {
        waiting.current = { value: next };
        return;
      }
      setValue(() => next);
      rest();
    },
    [rest],
  );
  const setNow = useCallback((next: T) => {
    clearTimeout(resting.current);
    resting.current = undefined;
    waiting.current = undefined;
    setValue(() => next);
  }, []);
  return [value, setPaced, setNow];
}

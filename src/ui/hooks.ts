// Terminal concerns as hooks: the engine's snapshot, the pane's size, a minute clock.
import { useStdout } from 'ink';
import { useEffect, useState, useSyncExternalStore } from 'react';
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
 * "Now", floored to the minute and advanced once a minute: ages in the table change at most
 * once a minute, so an idle monitor has nothing new to draw in between.
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

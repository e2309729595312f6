// A key's frame is drawn at once, also right after a frame of new data. Ink's frame limit
// (es-toolkit's throttle) restarts its wait at every call: at 30 frames a second a key typed
// within 33 ms of a data frame waited 33 ms after the key. Data that comes at its own rate (an
// eviction's progress) is paced by the App instead. Ink as the CLI renders it (its render
// options, off-screen, outside CI mode), on fake time: the clock moves only when the test says.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeStdin, FakeStdout, importInkOutsideCi, plainText } from '../../bench/offscreen.js';
import type { EvictRequest, EvictSummary } from '../../src/engine/types.js';
import { RENDER_OPTIONS } from '../../src/ui/render-options.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  vi.useRealTimers();
});

/** Turns of the (real) event loop: React runs effects in tasks of their own. */
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** The text of the cursor's row ('>' in the gutter). */
const cursorRow = (frame: string): string | undefined =>
  plainText(frame)
    .split('\n')
    .find((l) => l.startsWith('>'));

/** An eviction that reports a step every millisecond: 100 entries in 100 ms. */
class SteppingEngine extends StaticEngine {
  override async evict(request: EvictRequest): Promise<EvictSummary> {
    const finding = request.selection[0]!;
    for (let index = 1; index <= 100; index++) {
      request.onProgress?.({ index, total: 100, finding, phase: 'sending' });
      await new Promise((r) => setTimeout(r, 1));
    }
    return super.evict(request);
  }
}

/** The App rendered by Ink with the CLI's options into an off-screen terminal, on fake time. */
async function monitor(engine: StaticEngine) {
  const { ink, app } = await importInkOutsideCi();
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: FIXED_NOW });
  const stdout = new FakeStdout(120, 30);
  const stdin = new FakeStdin();
  const instance = ink.render(<app.App engine={engine} now={() => FIXED_NOW} home="/home/ana" onQuit={() => {}} />, {
    ...RENDER_OPTIONS,
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    debug: false,
  });
  cleanups.push(() => instance.unmount());
  await vi.advanceTimersByTimeAsync(1_000);
  // The keymap reads stdin from an effect, which React runs in a task of its own.
  for (let i = 0; i < 100 && stdin.listenerCount('data') === 0; i++) await turns(1);
  expect(stdin.listenerCount('data')).toBeGreaterThan(0);
  return { stdout, stdin };
}

describe('a key right after a frame of new data', () => {
  it('is drawn within 5 ms of fake time, not held for a 33 ms frame window', async () => {
    const engine = new StaticEngine();
    const { stdout, stdin } = await monitor(engine);
    const first = cursorRow(stdout.lastFrame);
    expect(first).toBeDefined();

    // New data: one row fewer at the bottom, so the frame changes and the cursor's row does not.
    const framesBefore = stdout.frames;
    engine.set(demoFindings().slice(0, -1));
    await vi.advanceTimersByTimeAsync(1);
    expect(stdout.frames).toBe(framesBefore + 1);
    expect(cursorRow(stdout.lastFrame)).toBe(first);

    stdin.write('j');
    await vi.advanceTimersByTimeAsync(5);
    const moved = cursorRow(stdout.lastFrame);
    expect(moved).toBeDefined();
    expect(moved).not.toBe(first);
  });
});

describe("an eviction's progress, a step every millisecond", () => {
  it('is drawn at most ~30 times a second, and its end at once', async () => {
    const { stdout, stdin } = await monitor(new SteppingEngine());
    /** One millisecond of fake time, and the real turns React may take meanwhile. */
    const tick = async (): Promise<void> => {
      await vi.advanceTimersByTimeAsync(1);
      await turns(2);
    };
    stdin.write('d');
    for (let i = 0; i < 50 && !/Evict 1 entry/.test(plainText(stdout.lastFrame)); i++) await tick();
    expect(plainText(stdout.lastFrame)).toMatch(/Evict 1 entry/);
    const framesBefore = stdout.frames;
    const shown = new Set<string>();
    stdout.onEveryFrame = (_at, text) => {
      const step = /evicting (\d+)\/100/.exec(plainText(text))?.[1];
      if (step) shown.add(step);
    };
    stdin.write('y');
    for (let ms = 0; ms < 100; ms++) await tick();
    // 100 steps in 100 ms: a frame every 33 ms (and the dialog closing), not one per step.
    expect(shown.size).toBeGreaterThanOrEqual(2);
    expect(stdout.frames - framesBefore).toBeLessThanOrEqual(6);
    for (let i = 0; i < 10; i++) await tick();
    expect(plainText(stdout.lastFrame)).toMatch(/evicted ghost c0ffee00-ghost/);
    expect(plainText(stdout.lastFrame)).not.toMatch(/evicting \d+\/100/);
  });
});

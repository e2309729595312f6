// A key's frame is drawn at once, also right after a frame of new data. Ink's frame limit
// (es-toolkit's throttle) restarts its wait at every call: at 30 frames a second a key typed
// within 33 ms of a data frame waited 33 ms after the key. Ink as the CLI renders it (its render
// options, off-screen, outside CI mode), on fake time: the clock moves only when the test says.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeStdin, FakeStdout, importInkOutsideCi, plainText } from '../../bench/offscreen.js';
import { RENDER_OPTIONS } from '../../src/ui/render-options.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  vi.useRealTimers();
});

/** React runs effects (the keymap's stdin listener among them) in a task of its own: let it. */
const turns = async (n = 3): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** The text of the cursor's row ('>' in the gutter). */
const cursorRow = (frame: string): string | undefined =>
  plainText(frame)
    .split('\n')
    .find((l) => l.startsWith('>'));

describe('a key right after a frame of new data', () => {
  it('is drawn within 5 ms of fake time, not held for a 33 ms frame window', async () => {
    const { ink, app } = await importInkOutsideCi();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: FIXED_NOW });
    const engine = new StaticEngine();
    const stdout = new FakeStdout(120, 30);
    const stdin = new FakeStdin();
    const instance = ink.render(<app.App engine={engine} now={() => FIXED_NOW} home="/home/ana" onQuit={() => {}} />, {
      ...RENDER_OPTIONS,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      debug: false,
    });
    cleanups.push(() => instance.unmount());
    await turns();
    await vi.advanceTimersByTimeAsync(1_000);
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

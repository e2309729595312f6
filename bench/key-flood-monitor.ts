// The monitor side of the flood figures, in a process of its own (its RSS is the figure): the
// real engine on a real HypivisorSource reading the flood registry named in argv, the real App
// rendered by Ink off-screen with the CLI's render options, and keys typed KEY_GAP_MS apart.
// A key's time is from its write to the first frame whose cursor row is another row: under the
// flood, frames that only redraw the rows the events changed keep the cursor on its row.
// Keys are typed first with the registry quiet (the same rows, no events: what a key costs on
// this machine now), then under the flood. Prints one JSON line: the key times' p50, p99 and max
// of both, the peak RSS under the flood, and what the engine did meanwhile.
import './production-env.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createElement } from 'react';
import { createEngine } from '../src/engine/index.js';
import { HypivisorSource } from '../src/sources/hypivisor/index.js';
import { RENDER_OPTIONS } from '../src/ui/render-options.js';
import { median, percentile } from './figures.js';
import { FakeStdin, FakeStdout, importInkOutsideCi, plainText } from './offscreen.js';
import { openClient } from './registrations.js';

const [url, nodesArg, rateArg, keysArg] = process.argv.slice(2);
if (!url) throw new Error('usage: key-flood-monitor.js <registry url> <nodes> <events a second> <keys>');
const NODES = Number(nodesArg);
const RATE = Number(rateArg);
const KEYS = Number(keysArg);
/** Keys typed before the flood starts: what a key costs with the same rows and no events. */
const QUIET_KEYS = 60;
/** The flood runs this long before keys are timed: the monitor is in its steady state by then. */
const FLOOD_WARMUP_MS = 5_000;
const COLUMNS = 120;
const ROWS = 40;
const KEY_GAP_MS = 40;
/** A key whose row has not moved by then counts as this long (and the run says so). */
const GIVE_UP_MS = 10_000;
const PAGE_DOWN = '\u001b[6~';
const PAGE_UP = '\u001b[5~';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The agent on the cursor's row ('>' in the gutter; its folder names it), or undefined when the frame has no cursor row. */
function cursorId(frame: string): string | undefined {
  const line = plainText(frame)
    .split('\n')
    .find((l) => l.startsWith('>'));
  return line ? /\bagent-\d+\b/.exec(line)?.[0] : undefined;
}

async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'gw-bench-flood-'));
const source = new HypivisorSource({ url });
const engine = createEngine({ sources: [source], hostName: hostname(), auditLogPath: join(dir, 'evictions.jsonl'), readOnly: true });
const { ink, app } = await importInkOutsideCi();
const stdout = new FakeStdout(COLUMNS, ROWS);
const stdin = new FakeStdin();
let shown: string | undefined;
let onRowMoved: ((at: number) => void) | undefined;
stdout.onEveryFrame = (at, text) => {
  const id = cursorId(text);
  if (id === undefined || id === shown) return;
  shown = id;
  onRowMoved?.(at);
};
const instance = ink.render(createElement(app.App, { engine, readOnly: true, home: '/home/dev', onQuit: () => {} }), {
  ...RENDER_OPTIONS,
  stdout: stdout as unknown as NodeJS.WriteStream,
  stdin: stdin as unknown as NodeJS.ReadStream,
  debug: false,
});
engine.start();
let peakRss = 0;
let sampling = false;
const rssTimer = setInterval(() => {
  if (sampling) peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 250);
const control = await openClient(`${url}?bench-control`);
try {
  await until('the init on screen', () => engine.getSnapshot().settled && engine.getSnapshot().findings.length >= NODES * 0.9 && shown !== undefined);
  const press = async (key: string): Promise<number> => {
    const t0 = performance.now();
    const moved = new Promise<number>((resolve) => {
      const timer = setTimeout(() => resolve(t0 + GIVE_UP_MS), GIVE_UP_MS);
      onRowMoved = (at) => {
        clearTimeout(timer);
        onRowMoved = undefined;
        resolve(at);
      };
    });
    stdin.write(key);
    const ms = (await moved) - t0;
    await sleep(KEY_GAP_MS);
    return ms;
  };
  const typeKeys = async (count: number): Promise<number[]> => {
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const key = i % 20 === 18 ? PAGE_DOWN : i % 20 === 19 ? PAGE_UP : i % 2 ? 'k' : 'j';
      times.push(await press(key));
    }
    return times;
  };
  const round = (n: number) => Math.round(n * 10) / 10;
  // Pin the cursor to a row, away from the top so that 'k' always has a row to go to.
  for (let i = 0; i < 3; i++) await press(PAGE_DOWN);
  const quiet = await typeKeys(QUIET_KEYS);
  const quietRssMb = round(process.memoryUsage().rss / 1024 / 1024);
  await control.call('bench_flood', { eventsPerSecond: RATE });
  await sleep(FLOOD_WARMUP_MS);
  sampling = true;
  const framesBefore = stdout.frames;
  const statsBefore = engine.stats();
  const eventsBefore = source.snapshot().state.counters.frames;
  const t0 = performance.now();
  const times = await typeKeys(KEYS);
  const seconds = (performance.now() - t0) / 1000;
  const stats = engine.stats();
  process.stdout.write(
    `${JSON.stringify({
      p50: round(median(times)),
      p99: round(percentile(times, 99)),
      max: round(Math.max(...times)),
      missed: times.filter((t) => t >= GIVE_UP_MS).length,
      quietP50: round(median(quiet)),
      quietP99: round(percentile(quiet, 99)),
      quietRssMb,
      rssMb: round(peakRss / 1024 / 1024),
      eventsPerS: Math.round((source.snapshot().state.counters.frames - eventsBefore) / seconds),
      framesPerS: round((stdout.frames - framesBefore) / seconds),
      recomputesPerS: round((stats.recomputes - statsBefore.recomputes) / seconds),
      publishesPerS: round((stats.publishes - statsBefore.publishes) / seconds),
      rows: engine.getSnapshot().findings.length,
    })}\n`,
  );
} finally {
  clearInterval(rssTimer);
  control.close();
  instance.unmount();
  instance.cleanup();
  await engine.stop();
  rmSync(dir, { recursive: true, force: true });
}

// The frame-diffing output layer (src/ui/frame-diff.ts, src/ui/frame-stream.ts): the bytes for
// each kind of change, a screen drawn by the diffs equal to the one Ink's whole-frame writes draw
// (for any sequence of frames, colours included), and, with real Ink rendering into the layer, a
// one-row change that writes that row alone.
import ansiEscapes from 'ansi-escapes';
import fc from 'fast-check';
import type * as Ink from 'ink';
import { createElement as h } from 'react';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { diffFrames, frameLines, screenFrame, sgrAfter } from '../../src/ui/frame-diff.js';
import { frameDiffingStdout } from '../../src/ui/frame-stream.js';
import { osc52 } from '../../src/ui/terminal.js';
import { ScreenModel } from '../support/screen-model.js';

const E = '\u001b[';
const frame = (...lines: string[]) => screenFrame(lines);

describe('diffFrames', () => {
  it.each([
    ['nothing known: every row, then everything below erased', null, frame('a', 'b'), 24, `${E}1;1H${E}Ka${E}2;1H${E}Kb${E}3;1H${E}J`],
    ['one row changed: that row alone, the cursor left below the frame', frame('a', 'b', 'c', 'd'), frame('a', 'b', 'X', 'd'), 24, `${E}3;1H${E}KX${E}5;1H`],
    ['no row changed: nothing', frame('a', 'b'), frame('a', 'b'), 24, ''],
    ['shorter: the rows it left erased', frame('a', 'b', 'c'), frame('a'), 24, `${E}2;1H${E}J`],
    ['longer: new rows, blank ones skipped (the rows below were erased)', frame('a'), frame('a', '', 'c'), 24, `${E}3;1H${E}Kc${E}4;1H`],
    ['a frame as tall as the screen: no cursor move past its end', frame('a', 'b'), frame('a', 'c'), 2, `${E}2;1H${E}Kc`],
    ['a changed row that was blank is erased, not left', frame('a', 'b'), frame('a', ''), 24, `${E}2;1H${E}K${E}3;1H`],
    ['self-contained colour rows need no reset', frame(`${E}31mred${E}39m`, 'x'), frame(`${E}32mgrn${E}39m`, 'x'), 24, `${E}1;1H${E}K${E}32mgrn${E}39m${E}3;1H`],
    ['a row left open is closed after it, the row after it starts in its state', frame(`${E}7mopen`, 'b'), frame(`${E}7mopen`, 'c'), 24, `${E}2;1H${E}K${E}0m${E}7mc${E}0m${E}3;1H`],
    ['a row whose inherited state changed is written though its text did not', frame(`${E}7mx`, 'b'), frame(`${E}1mx`, 'b'), 24, `${E}1;1H${E}K${E}1mx${E}0m${E}2;1H${E}K${E}0m${E}1mb${E}0m${E}3;1H`],
  ] as const)('%s', (_name, previous, next, rows, bytes) => {
    expect(diffFrames(previous, next, rows)).toBe(bytes);
  });

  it('frameLines drops the newline Ink ends a short frame with', () => {
    expect(frameLines('a\nb\n')).toEqual(['a', 'b']);
    expect(frameLines('a\nb')).toEqual(['a', 'b']);
  });

  it.each([
    ['', `${E}31mx${E}39m`, ''],
    ['', `${E}1;7mx${E}22m`, `${E}7m`],
    [`${E}7m`, `${E}0m`, ''],
    ['', `${E}38;5;9mx`, `${E}38;5;9m`],
    ['', `${E}38;2;1;2;3;1mx`, `${E}1;38;2;1;2;3m`],
    ['', `${E}41m${E}31m${E}49m`, `${E}31m`],
  ])('sgrAfter(%j, %j) is %j', (state, line, after) => expect(sgrAfter(state, line)).toBe(after));
});

// What Ink's standard renderer writes for a frame: erase the previous frame's lines, the text.
function standardBytes(previousLineCount: number, lines: readonly string[]): string {
  return ansiEscapes.eraseLines(previousLineCount) + lines.join('\n') + '\n';
}

describe('the diffs draw the screen the whole frames draw', () => {
  const cell = fc.constantFrom('a', 'b', ' ', '\u2026');
  const styled = fc.tuple(fc.array(cell, { maxLength: 6 }).map((c) => c.join('')), fc.constantFrom('', '1', '7', '31', '42'), fc.boolean()).map(([text, code, close]) => {
    if (code === '') return text;
    const closer = { '1': '22', '7': '27', '31': '39', '42': '49' }[code]!;
    return `${E}${code}m${text}${close ? `${E}${closer}m` : ''}`;
  });
  const line = fc.array(styled, { maxLength: 3 }).map((parts) => parts.join(''));
  const frames = fc.array(fc.array(line, { minLength: 1, maxLength: 7 }), { minLength: 1, maxLength: 12 });

  it('for any sequence of frames (rows changing, growing, shrinking, colours left open)', () => {
    fc.assert(
      fc.property(frames, (sequence) => {
        const whole = new ScreenModel(20, 8);
        const diffed = new ScreenModel(20, 8);
        let count = 0;
        let screen = null;
        for (const lines of sequence) {
          whole.write(`${E}0m${standardBytes(count, lines)}`);
          count = lines.length + 1;
          const next = screenFrame(lines, screen);
          diffed.write(diffFrames(screen, next, 8));
          screen = next;
          expect(diffed.dump()).toEqual(whole.dump());
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A terminal stand-in for Ink's output: it records each write (the real one is tested in tmux). */
function terminal(columns: number, rows: number): NodeJS.WriteStream & { writes: string[] } {
  const writes: string[] = [];
  const out = new Writable({
    decodeStrings: false,
    write(chunk: string, _e, cb) {
      writes.push(chunk);
      cb();
    },
  });
  return Object.assign(out, { isTTY: true, columns, rows, writes }) as unknown as NodeJS.WriteStream & { writes: string[] };
}

// Ink decides once, as it is first imported, that under CI (CI=true, as .ci/run runs) it draws
// nothing live: import it as under a terminal, which is what the monitor draws on.
let ink: typeof Ink;
beforeAll(async () => {
  const saved = { CI: process.env.CI, CONTINUOUS_INTEGRATION: process.env.CONTINUOUS_INTEGRATION };
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  try {
    ink = await import('ink');
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
  }
});

/** The lines of the frame the layer drew first on `tty` (its first whole draw, rows 1..n). */
const screenLinesOf = (tty: { writes: string[] }): string[] => {
  const drawn = tty.writes.find((w) => w.startsWith(`${E}1;1H`)) ?? '';
  return [...drawn.matchAll(/\u001b\[\d+;1H\u001b\[K(.*?)(?=\u001b\[\d+;1H|$)/gs)].map((m) => m[1]!);
};
const table = (rows: readonly string[]) =>
  h(
    ink.Box,
    { flexDirection: 'column' },
    rows.map((r, i) => h(ink.Text, { key: i, color: i === 0 ? 'green' : undefined }, r)),
  );
/** Until Ink has written and then been quiet for 60 ms (at most 3 s: a loaded machine is slow to the first frame). */
const flush = async (tty: { writes: string[] }) => {
  let seen = -1;
  for (const end = Date.now() + 3000; Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 60));
    if (tty.writes.length > 0 && tty.writes.length === seen) return;
    seen = tty.writes.length;
  }
};

describe('frameDiffingStdout with Ink rendering into it', () => {
  it('a one-row change writes that row alone; the screen equals the whole frame', async () => {
    const tty = terminal(40, 10);
    const stdout = frameDiffingStdout(tty);
    const rows = ['header', 'row one', 'row two', 'row three'];
    const app = ink.render(table(rows), { stdout, patchConsole: false, exitOnCtrlC: false, maxFps: 1000 });
    await flush(tty);
    const first = tty.writes.join('');
    expect(first).toContain(`${E}1;1H${E}K`);
    expect(first).toContain('row three');
    tty.writes.length = 0;

    app.rerender(table(['header', 'row one', 'row 2!', 'row three']));
    await flush(tty);
    const frameWrites = tty.writes.filter((w) => !w.startsWith(`${E}?2026`));
    expect(frameWrites).toEqual([`${E}3;1H${E}Krow 2!${E}5;1H`]);
    expect(tty.writes.join('')).toBe(`${E}?2026h${E}3;1H${E}Krow 2!${E}5;1H${E}?2026l`);

    // Bytes the layer does not know pass through whole; the next frame is drawn whole again.
    stdout.write(osc52('id-1'));
    expect(tty.writes.at(-1)).toBe(osc52('id-1'));
    tty.writes.length = 0;
    app.rerender(table(['header', 'row one', 'row 2!', 'row 3']));
    await flush(tty);
    const redraw = tty.writes.join('');
    for (const r of ['header', 'row one', 'row 2!', 'row 3']) expect(redraw).toContain(r);

    // A resize: the next frame is drawn whole, and Ink hears of the resize.
    tty.writes.length = 0;
    let heard = 0;
    stdout.on('resize', () => heard++);
    tty.emit('resize');
    await flush(tty);
    expect(heard).toBe(1);
    app.rerender(table(['header', 'row one']));
    await flush(tty);
    const after = tty.writes.join('');
    expect(after).toContain(`${E}1;1H${E}K`);
    expect(after).toContain(`${E}3;1H${E}J`);

    app.unmount();
    stdout.detach();
    expect(tty.listenerCount('resize')).toBe(0);
  });

  it('a kept first frame already on the screen: Ink draws over it only the rows that differ, and is told its first frame once', async () => {
    // What Ink draws first for these rows, seen once through a layer that knows nothing.
    const rows = ['header', 'row one', 'row two'];
    const probe = terminal(40, 10);
    const probeStdout = frameDiffingStdout(probe);
    const seen: (readonly string[])[] = [];
    const probeApp = ink.render(table(rows), { stdout: probeStdout, patchConsole: false, exitOnCtrlC: false, maxFps: 1000 });
    await flush(probe);
    probeApp.unmount();
    probeStdout.detach();
    // The same frame kept: Ink's first frame writes no row at all.
    const same = terminal(40, 10);
    const sameStdout = frameDiffingStdout(same, { shown: screenLinesOf(probe), onFirstFrame: (lines) => seen.push(lines) });
    const sameApp = ink.render(table(rows), { stdout: sameStdout, patchConsole: false, exitOnCtrlC: false, maxFps: 1000 });
    await flush(same);
    expect(screenLinesOf(probe).map((l) => l.replace(/\u001b\[[\d;]*m/g, '').trimEnd())).toEqual(rows);
    expect(same.writes.filter((w) => !/^\u001b\[\?(?:2026|25)[hl]$/.test(w))).toEqual([]);
    expect(seen).toEqual([screenLinesOf(probe)]);
    // Later frames are diffed as always, and the first frame is told once only.
    sameApp.rerender(table(['header', 'row one', 'row 2!']));
    await flush(same);
    expect(same.writes.join('')).toContain(`${E}3;1H${E}Krow 2!`);
    expect(seen).toHaveLength(1);
    sameApp.unmount();
    sameStdout.detach();

    // A kept frame that differs in one row: that row alone is rewritten.
    const other = terminal(40, 10);
    const stale = [...screenLinesOf(probe)];
    stale[1] = 'row uno';
    const otherStdout = frameDiffingStdout(other, { shown: stale });
    const otherApp = ink.render(table(rows), { stdout: otherStdout, patchConsole: false, exitOnCtrlC: false, maxFps: 1000 });
    await flush(other);
    expect(other.writes.filter((w) => !/^\u001b\[\?(?:2026|25)[hl]$/.test(w))).toEqual([`${E}2;1H${E}Krow one${E}4;1H`]);
    otherApp.unmount();
    otherStdout.detach();
  });

  it('cursor hide and show pass through and keep the screen known; other bytes make the next frame whole', () => {
    const tty = terminal(40, 10);
    const stdout = frameDiffingStdout(tty, { shown: ['a', 'b'] });
    stdout.write(`${E}?25l`);
    stdout.write('a\nb\n');
    expect(tty.writes).toEqual([`${E}?25l`]);
    stdout.write(`${E}?25h`);
    stdout.write(`${E}2K${E}1A${E}2K${E}Ga\nc\n`);
    expect(tty.writes.slice(1)).toEqual([`${E}?25h`, `${E}2;1H${E}Kc${E}3;1H`]);
    stdout.write(osc52('x'));
    stdout.write(`${E}2K${E}1A${E}2K${E}Ga\nc\n`);
    expect(tty.writes.at(-1)).toBe(`${E}1;1H${E}Ka${E}2;1H${E}Kc${E}3;1H${E}J`);
    stdout.detach();
  });

  it('forwards the size and TTY-ness of the terminal', () => {
    const tty = terminal(33, 7);
    const stdout = frameDiffingStdout(tty);
    expect([stdout.columns, stdout.rows, stdout.isTTY]).toEqual([33, 7, true]);
    (tty as { columns: number }).columns = 50;
    expect(stdout.columns).toBe(50);
    stdout.detach();
  });
});

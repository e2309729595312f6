// The alternate screen (src/ui/terminal.ts): entered at once, keys held in raw mode from then on
// (so nothing typed before the screen code loads is echoed over the frame), and left exactly once:
// the screen's own cleanup first, then line mode back, then the shell's screen.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { enterFullscreen } from '../../src/ui/terminal.js';

function fakeTerminal(): { stdout: NodeJS.WriteStream; stdin: NodeJS.ReadStream; log: string[] } {
  const log: string[] = [];
  const stdout = new Writable({
    decodeStrings: false,
    write(chunk: string, _e, cb) {
      log.push(`write ${JSON.stringify(chunk)}`);
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  const stdin = { isTTY: true, setRawMode: (on: boolean) => log.push(`raw ${on}`) } as unknown as NodeJS.ReadStream;
  return { stdout, stdin, log };
}

const ENTER = 'write "\\u001b[?1049h\\u001b[H\\u001b[?25l\\u001b[?2004h"';
const LEAVE = 'write "\\u001b[?2004l\\u001b[?25h\\u001b[?1049l"';

describe('enterFullscreen', () => {
  it('holds the keys from the start and gives line mode back on the way out, after the cleanup given later', () => {
    const { stdout, stdin, log } = fakeTerminal();
    const exitListeners = process.listenerCount('exit');
    const screen = enterFullscreen(stdout, undefined, stdin);
    expect(log).toEqual([ENTER, 'raw true']);
    screen.onRestore(() => log.push('unmount'));
    screen.restore();
    screen.restore();
    expect(log).toEqual([ENTER, 'raw true', 'unmount', 'raw false', LEAVE]);
    expect(process.listenerCount('exit')).toBe(exitListeners);
  });

  it('leaves raw mode alone when stdin is not a terminal, and runs the cleanup it was given', () => {
    const { stdout, log } = fakeTerminal();
    const pipe = { isTTY: false, setRawMode: () => log.push('raw?') } as unknown as NodeJS.ReadStream;
    const screen = enterFullscreen(stdout, () => log.push('cleanup'), pipe);
    screen.restore();
    expect(log).toEqual([ENTER, 'cleanup', LEAVE]);
  });
});

// The one place key presses are read: the terminal's bytes, chunk by chunk, from Ink's stdin,
// turned into presses by keys.ts (every byte a key: "jjj" in one read moves three rows), each
// through the keymap for the mode on top of the stack at that moment. A key the keymap does not
// list for that mode does nothing, so the footer and the help (drawn from the same keymap) say
// everything the keys do. At the filter prompt a chunk of several keys is a paste: its text is
// the filter's (Backspace edits it), and only its last key may be Enter or Esc (a pasted line break never runs a
// table key after it).
import { useStdin } from 'ink';
import { useEffect, useRef } from 'react';
import { keyCommand, type Command, type KeyCommand, type KeyPress, type Mode } from './keymap.js';
import { KeyReader } from './keys.js';
import type { Action } from './view-state.js';

/** What a key inside a chunk at the filter prompt may do: edit the text, nothing else. */
const EDITS: ReadonlySet<Command | undefined> = new Set(['filter.type', 'filter.backspace']);

/** The commands of one chunk's presses, each looked up in the mode the ones before it left. */
export function dispatchPresses(presses: readonly KeyPress[], modeNow: () => Mode, dispatch: (action: Action) => void): void {
  for (let i = 0; i < presses.length; i++) {
    const press = presses[i]!;
    const mode = modeNow();
    let bound: KeyCommand | undefined = keyCommand(press, mode);
    if (mode === 'filter' && presses.length > 1 && i < presses.length - 1 && !EDITS.has(bound?.command)) bound = undefined;
    if (bound) dispatch({ type: 'command', ...bound });
  }
}

export function useKeymap(modeNow: () => Mode, dispatch: (action: Action) => void): void {
  const { stdin, setRawMode, isRawModeSupported } = useStdin();
  const latest = useRef({ modeNow, dispatch });
  latest.current = { modeNow, dispatch };

  useEffect(() => {
    if (!isRawModeSupported) return;
    // Raw mode through Ink: it reads stdin (stdin.read) and each chunk it reads is a 'data' event here.
    setRawMode(true);
    const reader = new KeyReader();
    let waiting: NodeJS.Immediate | undefined;
    const run = (presses: readonly KeyPress[]) => dispatchPresses(presses, () => latest.current.modeNow(), (a) => latest.current.dispatch(a));
    const onData = (data: string | Buffer) => {
      if (waiting) clearImmediate(waiting);
      waiting = undefined;
      run(reader.push(typeof data === 'string' ? data : data.toString('utf8')));
      // A lone ESC (or a cut sequence) waits one turn for the rest; then it is what it is.
      if (reader.waiting) waiting = setImmediate(() => ((waiting = undefined), run(reader.flush())));
    };
    stdin.on('data', onData);
    return () => {
      stdin.off('data', onData);
      if (waiting) clearImmediate(waiting);
      setRawMode(false);
    };
  }, [stdin, setRawMode, isRawModeSupported]);
}

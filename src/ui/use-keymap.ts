// The one place a key press is read: Ink's useInput, through the keymap, for the mode on top of
// the stack. A key the keymap does not list for that mode does nothing, so the footer and the
// help (drawn from the same keymap) say everything the keys do.
import { useInput } from 'ink';
import { keyCommand, type Mode } from './keymap.js';
import type { Action } from './view-state.js';

export function useKeymap(modeNow: () => Mode, dispatch: (action: Action) => void): void {
  useInput((input, key) => {
    const bound = keyCommand({ ...key, input }, modeNow());
    if (bound) dispatch({ type: 'command', ...bound });
  });
}

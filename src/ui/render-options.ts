// How the monitor asks Ink to render, in one place: the CLI uses it, and the benches measure
// exactly what users get.
import type { RenderOptions } from 'ink';

/**
 * Our keymap owns Ctrl-C; Ink patching console would garble the alternate screen; at most 30
 * frames a second. Ink 6.8's incremental mode starts each redraw one row low after a frame that
 * ends in a newline (every frame shorter than the pane), so frames stack (seen in a tmux pane:
 * docs/performance.md): the standard mode erases and redraws in one write, and writes nothing at
 * all when the frame did not change.
 */
export const RENDER_OPTIONS = {
  exitOnCtrlC: false,
  patchConsole: false,
  maxFps: 30,
  incrementalRendering: false,
} as const satisfies RenderOptions;

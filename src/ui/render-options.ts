// How the monitor asks Ink to render, in one place: the CLI uses it, and the benches measure
// exactly what users get.
import type { RenderOptions } from 'ink';

/**
 * Our keymap owns Ctrl-C; Ink patching console would garble the alternate screen; at most 30
 * frames a second. Ink's standard renderer: each change erases and redraws the frame in one
 * synchronized update, an unchanged frame writes nothing. Ink 6.8's incremental mode draws every
 * frame after the first one row too low when the frame ends in a newline (all of ours: Ink adds
 * it to a frame shorter than the pane); fixed in Ink 7, which needs Node 22; the 6.x fix we
 * propose is docs/ink-6-incremental-newline.patch.
 */
export const RENDER_OPTIONS = {
  exitOnCtrlC: false,
  patchConsole: false,
  maxFps: 30,
  incrementalRendering: false,
} as const satisfies RenderOptions;

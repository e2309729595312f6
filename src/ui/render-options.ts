// How the monitor asks Ink to render, in one place: the CLI uses it, and the benches measure
// exactly what users get.
import type { RenderOptions } from 'ink';

/**
 * Our keymap owns Ctrl-C; Ink patching console would garble the alternate screen.
 *
 * Frames: a key's frame is drawn at once. Ink's frame limit (es-toolkit's throttle) restarts its
 * wait at every call, so at 30 frames a second a key typed within 33 ms of a frame of new data
 * waited 33 ms after the key before it was drawn (`key_flood_*`, docs/performance.md). Data frames
 * are paced before Ink: the engine publishes at most ~30 times a second, and less when a recompute
 * is costly; an eviction's progress is drawn at most as often (usePacedState). The limit left
 * (4 ms) only joins the commits of one turn (a chunk of keys, a snapshot and its rows) into a frame
 * and a trailing one.
 *
 * Ink's standard renderer: each change erases and redraws the frame in one
 * synchronized update, an unchanged frame writes nothing. Ink 6.8's incremental mode draws every
 * frame after the first one row too low when the frame ends in a newline (all of ours: Ink adds
 * it to a frame shorter than the pane); fixed in Ink 7, which needs Node 22; the 6.x fix we
 * propose is docs/ink-6-incremental-newline.patch.
 */
export const RENDER_OPTIONS = {
  exitOnCtrlC: false,
  patchConsole: false,
  maxFps: 250,
  incrementalRendering: false,
} as const satisfies RenderOptions;

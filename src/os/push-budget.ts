// What one ssh host may push unasked (its watchers' `+P` / `+L` lines), per second, and whether it
// keeps to it. A host past its budget is flooding: its pushes are dropped unread until it has kept
// to the budget for CALM_SECONDS whole seconds in a row. Pure: the caller gives the time.
//
// How it is sized. A real remote pushes only what reconcile can see change, so a quiet host sends
// about nothing (fleet_pushed_lines_per_s_per_host, bench fleet: 100 agents a host, ~0 lines/s).
// It sends the most in two cases, and the budget follows both instead of one fixed figure, so a
// host with thousands of agents is never called flooding while a small one that floods is caught
// within its first second:
// - a watch request: every watcher pushes one line per pid and port it was given (its first
//   reading). Each watch grants its targets' count of lines, in the second it is sent; the engine
//   arms again at most once per registry change (~30 a second in a registration storm), and each
//   is granted.
// - changes: a pid watcher runs kill -0 twice a second and a port watcher reads every 2 s, so no
//   real watcher can push more than PER_TARGET_LINES a second for each of its targets.
// On top of both, FLOOR_LINES a second whatever is watched. Bytes are held to BYTES_PER_LINE
// times the lines (the longest real pushed line, `+P <pid> error <160 characters>`, is ~180).
// A shell loop printing `+P` lines pushes 100,000 and more a second: over any of these budgets.

export const FLOOR_LINES = 1_000;
export const PER_TARGET_LINES = 2;
export const BYTES_PER_LINE = 256;
/** Whole seconds within the budget, in a row, before a flooding host is read again. */
export const CALM_SECONDS = 5;
const WINDOW_MS = 1_000;

export class PushBudget {
  private windowStart = 0;
  private lines = 0;
  private bytes = 0;
  /** Lines granted in this window (watch requests sent in it). */
  private granted = 0;
  /** Targets watched now: their steady allowance. */
  private targets = 0;
  private flooding = false;
  private calmWindows = 0;

  /** A new connection: nothing watched, nothing counted, not flooding; its first window starts now. */
  reset(nowMs: number): void {
    this.windowStart = nowMs;
    this.lines = this.bytes = this.granted = this.targets = this.calmWindows = 0;
    this.flooding = false;
  }

  /** Watchers of `targets` pids and ports were asked for: their first reading is granted now, and their steady allowance from now on. */
  watch(targets: number): void {
    this.targets = targets;
    this.granted += targets;
  }

  /** The lines allowed in the window now under way. */
  get lineLimit(): number {
    return FLOOR_LINES + PER_TARGET_LINES * this.targets + this.granted;
  }

  get byteLimit(): number {
    return this.lineLimit * BYTES_PER_LINE;
  }

  get over(): boolean {
    return this.flooding;
  }

  /** This window has had more than its budget already (read or not). */
  get spent(): boolean {
    return this.lines > this.lineLimit || this.bytes > this.byteLimit;
  }

  /** Until the window now under way ends, ms (at least 1). */
  msLeft(nowMs: number): number {
    return Math.max(1, this.windowStart + WINDOW_MS - nowMs);
  }

  /**
   * One pushed line of `length` characters: true when it is to be read; false when it is dropped
   * (the host is flooding, or has just gone past its budget with this line: `over` says so).
   */
  take(length: number): boolean {
    this.lines++;
    this.bytes += length;
    if (this.flooding) return false;
    if (!this.spent) return true;
    this.flooding = true;
    this.calmWindows = 0;
    return false;
  }

  /** What was gone past: "1200 lines/s" or "307200 bytes/s" (the limits of the window now). */
  exceeded(): string {
    return this.lines > this.lineLimit ? `${this.lineLimit} lines/s` : `${this.byteLimit} bytes/s`;
  }

  /**
   * Time passes: whole windows that ended are judged (a silent one is calm). True when a flooding
   * host has now been calm for CALM_SECONDS windows in a row: it is read again from here.
   */
  roll(nowMs: number): boolean {
    const ended = Math.floor((nowMs - this.windowStart) / WINDOW_MS);
    if (ended < 1) return false;
    const calm = !this.spent;
    // The window just ended, then any that passed with nothing in them.
    this.calmWindows = calm ? this.calmWindows + ended : ended - 1;
    this.windowStart += ended * WINDOW_MS;
    this.lines = this.bytes = this.granted = 0;
    if (!this.flooding || this.calmWindows < CALM_SECONDS) return false;
    this.flooding = false;
    this.calmWindows = 0;
    return true;
  }
}

// The one way a test waits for something real to happen (a process exits, a socket answers, a file
// appears, a frame is drawn): poll a condition until it gives a value, with a deadline that only
// guards against a hang and names what never came. It keeps the real setTimeout and Date.now from
// before any fake timers were installed, so it also works beside vi.useFakeTimers.
const realSetTimeout = globalThis.setTimeout;
const realNow = Date.now;

/** Resolves after `ms` of real time, whatever fake timers are installed. */
export const sleepMs = (ms: number): Promise<void> => new Promise((resolve) => realSetTimeout(resolve, ms));

/**
 * Polls `fn` every 10 ms until it gives a value other than undefined or false, and returns that
 * value; throws after `timeoutMs`, naming `what` (a function is asked only then, for the state it
 * found).
 */
export async function until<T>(
  fn: () => T | undefined | false | PromiseLike<T | undefined | false>,
  timeoutMs = 3_000,
  what: string | (() => string) = 'condition',
): Promise<T> {
  const end = realNow() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== false) return value;
    if (realNow() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await sleepMs(10);
  }
}

// Keys typed into an Ink app rendered by ink-testing-library, each taken when the screen answers
// it: the frame has moved on and held still for a moment. A fixed wait after each key is a race
// on a loaded machine (a CI run drew the table where a detail view should be); this is not.

interface Rendered {
  lastFrame(): string | undefined;
  readonly stdin: { write(data: string): unknown };
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The frame once it differs from `before` (any frame at all when `before` is undefined) and has
 * held still for two looks. A key that changes nothing gives up after `limitMs`.
 */
export async function nextFrame(r: Rendered, before: string | undefined, limitMs = 2_000): Promise<string> {
  const end = Date.now() + limitMs;
  let seen = r.lastFrame();
  while (Date.now() < end && (seen === before || seen === undefined || seen === '')) {
    await pause(10);
    seen = r.lastFrame();
  }
  for (;;) {
    await pause(20);
    const now = r.lastFrame();
    if (now === seen || Date.now() > end) return now ?? '';
    seen = now;
  }
}

/** The first frame, drawn and still. */
export function firstFrame(r: Rendered): Promise<string> {
  return nextFrame(r, undefined);
}

/** Each key in turn, the next one only once the screen has answered the last. */
export async function typeKeys(r: Rendered, keys: readonly string[]): Promise<string> {
  let frame = r.lastFrame() ?? '';
  for (const k of keys) {
    const before = r.lastFrame();
    r.stdin.write(k);
    frame = await nextFrame(r, before);
  }
  return frame;
}

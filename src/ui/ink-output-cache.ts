// Ink's per-frame caches, kept from one frame to the next. Ink draws every frame into a new Output
// (ink/build/output.js), whose caches (each line's styled characters, string widths) are new and
// empty: every line of every frame is tokenized again, character by character through an
// Intl.Segmenter, though a key press changes two or three of a table's 40 rows. At 120 columns
// that was ~10 ms of the ~15 ms of CPU a key costs (--cpu-prof of the key-to-frame bench). Each
// Output's get() here uses one long-lived set of caches instead: a line, or a width, met in this
// frame or the one before is not computed again. Two generations: what the last two frames did
// not use is dropped, so the memory stays that of two frames.
//
// A line not met in either frame (a page of new rows) is not sent through the Segmenter when it
// is made of printable ASCII, SGR sequences and characters that never join a neighbour into one
// grapheme: each character is then its own grapheme, and its styles those that Ink's own
// tokenizer gives a character after the same SGR sequences (asked once per sequence prefix).
//
// Nothing else changes: the values are Ink's own or equal to them (test/ui/ink-output-cache.test.ts
// holds them against Ink's), pure functions of their text, and Ink only reads them (it places the
// same character objects in its grid and turns the grid into text). If Ink's Output no longer has
// the shape this relies on, nothing is installed and Ink renders as it always did.
import { InkOutput } from './ink-output.js';

/** Ink's OutputCaches: three maps and the methods that fill them. */
interface InkCaches {
  readonly widths: Map<string, number>;
  readonly blockWidths: Map<string, number>;
  readonly styledChars: Map<string, unknown>;
  getStyledChars(line: string): unknown;
  getStringWidth(text: string): number;
  getWidestLine(text: string): number;
}

type CachesClass = new () => InkCaches;

/** One cell of Ink's grid, as ansi-tokenize's styledCharsFromTokens makes it. */
interface StyledChar {
  readonly type: 'char';
  readonly value: string;
  readonly fullWidth: boolean;
  readonly styles: unknown[];
}

/** An SGR sequence as Ink's tokenizer reads one: digits and semicolons between CSI and m. */
const SGR = /\u001b\[[0-9;]*m/y;
const NO_STYLES: readonly unknown[] = [];
/** Bound of the small side maps (style prefixes, characters): far above what a screen uses. */
const MAX_KEPT = 4096;

/** Hangul jamo and syllables: L, V, T, LV and LVT join each other into one grapheme. */
function isHangul(code: number): boolean {
  return (code >= 0x1100 && code <= 0x11ff) || (code >= 0xa960 && code <= 0xa97f) || (code >= 0xac00 && code <= 0xd7ff);
}

function isInkCaches(value: unknown): value is InkCaches {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    c['widths'] instanceof Map &&
    c['blockWidths'] instanceof Map &&
    c['styledChars'] instanceof Map &&
    typeof c['getStyledChars'] === 'function' &&
    typeof c['getStringWidth'] === 'function' &&
    typeof c['getWidestLine'] === 'function'
  );
}

/** The value of `key` in `current`, else the one the frame before kept (carried over), else computed into `current`. */
function lookup<V>(key: string, current: Map<string, V>, previous: Map<string, V>, compute: () => V): V {
  const v = current.get(key);
  if (v !== undefined) return v;
  const kept = previous.get(key);
  if (kept === undefined) return compute();
  current.set(key, kept);
  return kept;
}

/** Caches that outlive one frame: `nextFrame()` starts a generation, and the one before it stays readable. */
export class FrameCaches {
  private current: InkCaches;
  private previous: InkCaches;
  /** Lines tokenized (not found in this frame or the one before). */
  misses = 0;
  /** The styles after a line's SGR sequences so far, by those sequences. */
  private readonly sgrStyles = new Map<string, readonly unknown[]>();
  /** Characters outside printable ASCII: full width, or null (not simple). */
  private readonly simpleChars = new Map<number, boolean | null>();
  constructor(private readonly make: CachesClass) {
    this.current = new make();
    this.previous = new make();
  }
  nextFrame(): void {
    this.previous = this.current;
    this.current = new this.make();
  }
  getStyledChars(line: string): unknown {
    return lookup(line, this.current.styledChars, this.previous.styledChars, () => {
      this.misses++;
      const chars = this.simpleStyledChars(line) ?? this.current.getStyledChars(line);
      this.current.styledChars.set(line, chars);
      return chars;
    });
  }
  /**
   * The styled characters of a line of printable ASCII, SGR sequences and simple characters, as
   * Ink's tokenizer makes them; undefined for any other line (Ink's tokenizer then reads it).
   */
  simpleStyledChars(line: string): StyledChar[] | undefined {
    const chars: StyledChar[] = [];
    let sgr = '';
    let styles: readonly unknown[] | undefined = NO_STYLES;
    for (let i = 0; i < line.length; i++) {
      const code = line.charCodeAt(i);
      if (code === 0x1b) {
        SGR.lastIndex = i;
        const m = SGR.exec(line);
        if (m === null) return undefined;
        sgr += m[0];
        styles = undefined;
        i += m[0].length - 1;
        continue;
      }
      let fullWidth = false;
      if (code < 0x20 || code > 0x7e) {
        const simple = this.simpleChar(code);
        if (simple === undefined) return undefined;
        fullWidth = simple;
      }
      styles ??= this.stylesAfter(sgr);
      if (styles === undefined) return undefined;
      chars.push({ type: 'char', value: line[i]!, fullWidth, styles: styles as unknown[] });
    }
    return chars;
  }
  /** The styles Ink gives a character after the SGR sequences `sgr`. */
  private stylesAfter(sgr: string): readonly unknown[] | undefined {
    let styles = this.sgrStyles.get(sgr);
    if (styles === undefined) {
      const chars = this.current.getStyledChars(`${sgr}a`) as StyledChar[];
      if (!Array.isArray(chars) || chars.length !== 1 || !Array.isArray(chars[0]?.styles)) return undefined;
      styles = chars[0].styles;
      if (this.sgrStyles.size >= MAX_KEPT) this.sgrStyles.clear();
      this.sgrStyles.set(sgr, styles);
    }
    return styles;
  }
  /**
   * For a character outside printable ASCII: whether Ink's tokenizer calls it full width, or
   * undefined when it may join a neighbour into one grapheme (or is a control, a surrogate or
   * Hangul, whose jamo join each other): then the line is not simple. A character that stays
   * alone between two letters is neither Extend, ZWJ, SpacingMark nor Prepend (Unicode's grapheme
   * rules), and without those, no two such characters join.
   */
  private simpleChar(code: number): boolean | undefined {
    if (code < 0xa0 || (code >= 0xd800 && code <= 0xdfff) || isHangul(code)) return undefined;
    if (this.simpleChars.has(code)) return this.simpleChars.get(code) ?? undefined;
    const c = String.fromCharCode(code);
    const chars = this.current.getStyledChars(`a${c}a`) as StyledChar[];
    const alone = Array.isArray(chars) && chars.length === 3 && chars[0]?.value === 'a' && chars[1]?.value === c && chars[2]?.value === 'a';
    const answer = alone ? chars[1]!.fullWidth === true : null;
    if (this.simpleChars.size >= MAX_KEPT) this.simpleChars.clear();
    this.simpleChars.set(code, answer);
    return answer ?? undefined;
  }
  getStringWidth(text: string): number {
    return lookup(text, this.current.widths, this.previous.widths, () => this.current.getStringWidth(text));
  }
  getWidestLine(text: string): number {
    return lookup(text, this.current.blockWidths, this.previous.blockWidths, () => this.current.getWidestLine(text));
  }
}

interface OutputPrototype {
  get(this: { caches: unknown }): unknown;
}

const INSTALLED = Symbol.for('ghostwatch.frameCaches');

/**
 * Gives every Output of `Output` (Ink's class) the long-lived caches. Returns them, or undefined
 * when Output is not as expected (then nothing is changed). Installing twice installs once.
 */
export function installFrameCaches(Output: unknown): FrameCaches | undefined {
  if (typeof Output !== 'function') return undefined;
  const proto = (Output as { prototype: OutputPrototype & { [INSTALLED]?: FrameCaches } }).prototype;
  if (proto[INSTALLED] !== undefined) return proto[INSTALLED];
  const original = proto.get;
  if (typeof original !== 'function') return undefined;
  let sample: unknown;
  try {
    sample = (new (Output as new (o: { width: number; height: number }) => { caches: unknown })({ width: 0, height: 0 })).caches;
  } catch {
    return undefined;
  }
  if (!isInkCaches(sample)) return undefined;
  const caches = new FrameCaches((sample as object).constructor as CachesClass);
  Object.defineProperty(proto, INSTALLED, { value: caches });
  proto.get = function get(this: { caches: unknown }) {
    caches.nextFrame();
    this.caches = caches;
    return original.call(this);
  };
  return caches;
}

/** Ink's own Output, with the caches: the monitor, the tests and the benches all render through it. */
export const inkFrameCaches = installFrameCaches(InkOutput);

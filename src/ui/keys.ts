// Bytes from the terminal to key presses: every byte of a chunk is a key ("jjj" in one read is
// three presses), escape sequences inside a chunk are named keys (arrows, PgUp, Home...) or, when
// not known, one press that no binding takes, and a bracketed paste (ESC[200~ ... ESC[201~) is one
// press of text. Pure: the input hook (use-keymap.ts) feeds it chunks; a sequence cut at the end of
// a chunk is kept until the next one (or given up by `flush`).
import type { KeyPress } from './keymap.js';

const ESC = '\u001b';
const PASTE_START = `${ESC}[200~`;
const PASTE_END = `${ESC}[201~`;

/** CSI and SS3 sequences of the keys the keymap names; modifiers (";2" and so on) are dropped first. */
const SEQUENCE_KEYS: Readonly<Record<string, Omit<KeyPress, 'input'>>> = {
  A: { upArrow: true },
  B: { downArrow: true },
  C: {},
  D: {},
  H: { home: true },
  F: { end: true },
  '1~': { home: true },
  '7~': { home: true },
  '4~': { end: true },
  '8~': { end: true },
  '5~': { pageUp: true },
  '6~': { pageDown: true },
  '3~': { delete: true },
  Z: {},
};

/** A press no binding takes: a sequence that is not one of our keys (F-keys, Alt-x, focus reports). */
const NOTHING: KeyPress = { input: '' };

function controlPress(code: number): KeyPress {
  if (code === 0x0d || code === 0x0a) return { input: '', return: true };
  if (code === 0x09) return { input: '', tab: true };
  if (code === 0x7f || code === 0x08) return { input: '', backspace: true };
  if (code === 0x1b) return { input: '', escape: true };
  if (code >= 0x01 && code <= 0x1a) return { input: String.fromCharCode(code + 0x60), ctrl: true };
  return NOTHING;
}

/** How a CSI or SS3 sequence at `at` ends: its length, or 0 when the chunk ends inside it. */
function sequenceLength(text: string, at: number): number {
  const kind = text[at + 1];
  if (kind === 'O') return at + 2 < text.length ? 3 : 0;
  // CSI: parameter and intermediate bytes (0x20-0x3f), then one final byte (0x40-0x7e). A second
  // '[' right after the first is the Linux console's F-key spelling (ESC [ [ A).
  let i = at + 2;
  if (text[i] === '[') i++;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x40 && c <= 0x7e) return i - at + 1;
    if (c < 0x20 || c > 0x3f) return i - at; // not a sequence after all: what came before is one
  }
  return 0;
}

function sequencePress(seq: string): KeyPress {
  if (seq[1] === 'O') {
    const key = SEQUENCE_KEYS[seq[2]!];
    return key ? { input: '', ...key } : NOTHING;
  }
  const body = seq.slice(2);
  const final = body.slice(-1);
  const params = body.slice(0, -1).split(';')[0] ?? '';
  const key = SEQUENCE_KEYS[final === '~' ? `${params}~` : final];
  // ESC[1;5A and its like (a modifier with an arrow) are still the arrow; ESC[Z is Shift-Tab: nothing.
  return key && (final === '~' || params === '' || params === '1') ? { input: '', ...key } : NOTHING;
}

export interface KeyChunk {
  readonly presses: readonly KeyPress[];
  /** The chunk's end was inside a sequence: it waits for the next chunk (or `flush`). */
  readonly pending: string;
}

/**
 * The presses of one chunk, in order, with what is left over (a sequence the chunk ends inside).
 * A lone ESC at the very end is left over too: it may start a sequence whose rest is on its way.
 */
export function parseKeys(chunk: string): KeyChunk {
  const presses: KeyPress[] = [];
  let i = 0;
  while (i < chunk.length) {
    const code = chunk.codePointAt(i)!;
    if (code !== 0x1b) {
      const ch = String.fromCodePoint(code);
      if (code < 0x20 || code === 0x7f) presses.push(controlPress(code));
      else if (code >= 0x80 && code <= 0x9f) presses.push(NOTHING); // C1 controls: never text
      else presses.push({ input: ch });
      i += ch.length;
      continue;
    }
    if (chunk.startsWith(PASTE_START, i)) {
      const end = chunk.indexOf(PASTE_END, i + PASTE_START.length);
      if (end === -1) return { presses, pending: chunk.slice(i) };
      presses.push({ input: pastedText(chunk.slice(i + PASTE_START.length, end)), paste: true });
      i = end + PASTE_END.length;
      continue;
    }
    const next = chunk[i + 1];
    if (next === undefined) return { presses, pending: chunk.slice(i) };
    if (next === '[' || next === 'O') {
      const n = sequenceLength(chunk, i);
      if (n === 0) return { presses, pending: chunk.slice(i) };
      presses.push(sequencePress(chunk.slice(i, i + n)));
      i += n;
      continue;
    }
    if (next === ESC) {
      // ESC ESC: Esc pressed twice, or Alt with a sequence; either way the first is an Esc.
      presses.push(controlPress(0x1b));
      i += 1;
      continue;
    }
    // ESC and one character: Alt (Meta) with that key. No binding uses Alt: nothing.
    presses.push(NOTHING);
    i += 1 + String.fromCodePoint(chunk.codePointAt(i + 1)!).length;
  }
  return { presses, pending: '' };
}

/**
 * What a paste means as text: its printable characters; line breaks and tabs become spaces, every
 * other control character and escape sequence is dropped.
 */
export function pastedText(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const code = text.codePointAt(i)!;
    if (code === 0x1b && (text[i + 1] === '[' || text[i + 1] === 'O')) {
      const n = sequenceLength(text, i);
      i += n === 0 ? text.length - i : n;
      continue;
    }
    const ch = String.fromCodePoint(code);
    i += ch.length;
    if (code === 0x0a || code === 0x0d || code === 0x09) out += out.endsWith(' ') ? '' : ' ';
    else if (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code <= 0x9f)) out += ch;
  }
  return out;
}

/** Presses across chunks: a sequence cut by a chunk boundary is completed by the next chunk. */
export class KeyReader {
  private pending = '';

  push(chunk: string): readonly KeyPress[] {
    const { presses, pending } = parseKeys(this.pending + chunk);
    this.pending = pending;
    return presses;
  }

  /** Something waits for the rest of a sequence. */
  get waiting(): boolean {
    return this.pending !== '';
  }

  /**
   * Nothing more came: a lone ESC was the Esc key; any other unfinished sequence is given up
   * (an unfinished paste is kept as its text, never as keys).
   */
  flush(): readonly KeyPress[] {
    const rest = this.pending;
    this.pending = '';
    if (rest === ESC) return [controlPress(0x1b)];
    if (rest.startsWith(PASTE_START)) return [{ input: pastedText(rest.slice(PASTE_START.length)), paste: true }];
    return rest === '' ? [] : [NOTHING];
  }
}

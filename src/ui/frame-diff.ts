// Frame diffing, pure: the lines of the frame on the screen and the lines of the next one give
// the bytes that turn one into the other, touching only the rows that changed. The frame is drawn
// from the top-left of the alternate screen (row 1, column 1), one frame line a screen row.
//
// Each written row is absolute: cursor to (row, 1), erase the row (CSI K at column 1, before the
// text: erasing after a line that fills the width would, on xterm, eat its last cell while the
// cursor waits to wrap), then the line. Rows the frame no longer reaches are erased to the end of
// the screen, and the cursor is left where Ink's own renderer leaves it: column 1 of the row below
// the frame.
//
// Colours: a row written alone must look as it did in the whole frame. Ink closes every style at
// the end of each line (ansi-tokenize's styledCharsToString), so its rows are self-contained; for
// any other text the SGR state a row starts in is carried from the rows above it, re-created
// before the row, and reset after a row that leaves one open (an erase fills with the current
// background).

const CSI = '\u001b[';
const RESET = '\u001b[0m';

/** A frame as the screen holds it: its lines and the SGR state each line starts in ('' = none). */
export interface ScreenFrame {
  readonly lines: readonly string[];
  readonly enters: readonly string[];
  /** The SGR state each line leaves open. */
  readonly exits: readonly string[];
}

/** The lines of Ink's frame text (which ends with a newline when shorter than the screen). */
export function frameLines(text: string): string[] {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body.split('\n');
}

/**
 * The frame with the SGR state each of its lines starts in and leaves open. A line that is the
 * same as in `previous`, entered in the same state, is not read again (most lines of a frame).
 */
export function screenFrame(lines: readonly string[], previous: ScreenFrame | null = null): ScreenFrame {
  const enters: string[] = [];
  const exits: string[] = [];
  let state = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    enters.push(state);
    if (previous !== null && previous.lines[i] === line && previous.enters[i] === state) state = previous.exits[i]!;
    else if (line.includes('\u001b')) state = sgrAfter(state, line);
    exits.push(state);
  }
  return { lines, enters, exits };
}

/**
 * The bytes that turn `previous` into `next` on a screen `rows` tall. `previous` null: what the
 * screen holds is not known (the first frame, after a resize or after bytes the layer did not
 * write), so every row is written and everything below the frame is erased.
 */
export function diffFrames(previous: ScreenFrame | null, next: ScreenFrame, rows: number): string {
  let out = '';
  const count = next.lines.length;
  for (let i = 0; i < count; i++) {
    const line = next.lines[i]!;
    const enter = next.enters[i]!;
    if (previous !== null) {
      if (i < previous.lines.length) {
        if (previous.lines[i] === line && previous.enters[i] === enter) continue;
      } else if (line === '' && enter === '') {
        continue; // a row below the old frame is blank already
      }
    }
    out += `${CSI}${i + 1};1H${CSI}K`;
    if (enter !== '') out += `${RESET}${enter}`;
    out += line;
    if (next.exits[i] !== '') out += RESET;
  }
  const shorter = previous === null || previous.lines.length > count;
  if (out === '' && !shorter) return '';
  if (count < rows) out += `${CSI}${count + 1};1H${shorter ? `${CSI}J` : ''}`;
  return out;
}

// SGR state: one slot per independent attribute, in a fixed order, so equal states are equal strings.
const SLOTS = ['bold', 'dim', 'italic', 'underline', 'blink', 'inverse', 'hidden', 'strike', 'overline', 'fg', 'bg', 'ul'] as const;
type Slot = (typeof SLOTS)[number];
const SET: Record<string, Slot> = { '1': 'bold', '2': 'dim', '3': 'italic', '4': 'underline', '21': 'underline', '5': 'blink', '6': 'blink', '7': 'inverse', '8': 'hidden', '9': 'strike', '53': 'overline' };
const UNSET: Record<string, readonly Slot[]> = {
  '22': ['bold', 'dim'],
  '23': ['italic'],
  '24': ['underline'],
  '25': ['blink'],
  '27': ['inverse'],
  '28': ['hidden'],
  '29': ['strike'],
  '55': ['overline'],
  '39': ['fg'],
  '49': ['bg'],
  '59': ['ul'],
};
const EXTENDED: Record<string, Slot> = { '38': 'fg', '48': 'bg', '58': 'ul' };

/** The SGR state after `line`, entered in `state` (both as one SGR sequence, '' for none). */
export function sgrAfter(state: string, line: string): string {
  const slots = new Map<Slot, string>();
  const apply = (params: string): void => {
    const list = params.split(';');
    for (let i = 0; i < list.length; i++) {
      const p = list[i]!;
      const head = p.split(':')[0]!;
      if (head === '' || head === '0') slots.clear();
      else if (SET[head] !== undefined) slots.set(SET[head], p);
      else if (UNSET[head] !== undefined) for (const s of UNSET[head]) slots.delete(s);
      else if (EXTENDED[head] !== undefined) {
        if (p.includes(':')) slots.set(EXTENDED[head], p);
        else {
          const take = list[i + 1] === '5' ? 2 : list[i + 1] === '2' ? 4 : 0;
          slots.set(EXTENDED[head], list.slice(i, i + 1 + take).join(';'));
          i += take;
        }
      } else {
        const n = Number(head);
        if ((n >= 30 && n <= 37) || (n >= 90 && n <= 97)) slots.set('fg', p);
        else if ((n >= 40 && n <= 47) || (n >= 100 && n <= 107)) slots.set('bg', p);
      }
    }
  };
  if (state !== '') apply(state.slice(2, -1));
  for (const m of line.matchAll(/\u001b\[([\d;:]*)m/g)) apply(m[1]!);
  const codes = SLOTS.filter((s) => slots.has(s)).map((s) => slots.get(s)!);
  return codes.length === 0 ? '' : `${CSI}${codes.join(';')}m`;
}

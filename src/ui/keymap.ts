// The keymap is data: one table from command to keys and words. The input hook, the footer and
// the help overlay all read it, so they can never disagree with each other.

export type Mode = 'table' | 'filter' | 'detail' | 'help' | 'confirm' | 'confirm-force' | 'evicting';

export type Command =
  | 'nav.up'
  | 'nav.down'
  | 'nav.pageUp'
  | 'nav.pageDown'
  | 'nav.top'
  | 'nav.bottom'
  | 'filter.start'
  | 'filter.clear'
  | 'sort.prev'
  | 'sort.next'
  | 'sort.reverse'
  | 'mark.toggle'
  | 'mark.problems'
  | 'mark.none'
  | 'evict.selected'
  | 'evict.problems'
  | 'view.problems'
  | 'view.details'
  | 'view.tab'
  | 'view.help'
  | 'view.back'
  | 'app.refresh'
  | 'app.quit'
  | 'confirm.yes'
  | 'confirm.force'
  | 'confirm.no';

/** What Ink's useInput reports, reduced to what bindings look at. */
export interface KeyPress {
  readonly input: string;
  readonly upArrow?: boolean;
  readonly downArrow?: boolean;
  readonly pageUp?: boolean;
  readonly pageDown?: boolean;
  readonly home?: boolean;
  readonly end?: boolean;
  readonly return?: boolean;
  readonly escape?: boolean;
  readonly tab?: boolean;
  readonly ctrl?: boolean;
}

type KeyName = 'up' | 'down' | 'pageUp' | 'pageDown' | 'home' | 'end' | 'enter' | 'esc' | 'tab';

export interface KeySpec {
  /** A named key, or a printable character, or a Ctrl combination. */
  readonly key?: KeyName;
  readonly char?: string;
  readonly ctrl?: string;
}

export interface Binding {
  readonly command: Command;
  readonly keys: readonly KeySpec[];
  /** Short word for the footer; omitted bindings only appear in help. */
  readonly footer?: string;
  readonly description: string;
  readonly modes: readonly Mode[];
  /** Changes registry state: turned into an explanation in --read-only. */
  readonly evicts?: boolean;
}

const BROWSE: Mode[] = ['table'];
const ANYWHERE: Mode[] = ['table', 'detail', 'help'];

export const KEYMAP: readonly Binding[] = [
  { command: 'nav.up', keys: [{ key: 'up' }, { char: 'k' }], description: 'move up', modes: ['table', 'detail', 'help'] },
  { command: 'nav.down', keys: [{ key: 'down' }, { char: 'j' }], footer: 'move', description: 'move down', modes: ['table', 'detail', 'help'] },
  { command: 'nav.pageUp', keys: [{ key: 'pageUp' }, { ctrl: 'b' }], description: 'page up', modes: ['table', 'detail', 'help'] },
  { command: 'nav.pageDown', keys: [{ key: 'pageDown' }, { ctrl: 'f' }], description: 'page down', modes: ['table', 'detail', 'help'] },
  { command: 'nav.top', keys: [{ char: 'g' }, { key: 'home' }], description: 'first row', modes: ['table', 'detail', 'help'] },
  { command: 'nav.bottom', keys: [{ char: 'G' }, { key: 'end' }], description: 'last row', modes: ['table', 'detail', 'help'] },
  { command: 'view.details', keys: [{ key: 'enter' }], footer: 'details', description: 'details and evidence of the current row', modes: BROWSE },
  { command: 'filter.start', keys: [{ char: '/' }], footer: 'filter', description: 'filter rows (Esc clears)', modes: BROWSE },
  { command: 'filter.clear', keys: [{ key: 'esc' }], description: 'clear the filter', modes: ['filter'] },
  { command: 'view.problems', keys: [{ char: 'p' }], footer: 'problems', description: 'problems only / all rows', modes: BROWSE },
  { command: 'sort.prev', keys: [{ char: '<' }], description: 'sort by the previous column', modes: BROWSE },
  { command: 'sort.next', keys: [{ char: '>' }], footer: 'sort', description: 'sort by the next column', modes: BROWSE },
  { command: 'sort.reverse', keys: [{ char: 'r' }], description: 'reverse the sort', modes: BROWSE },
  { command: 'mark.toggle', keys: [{ char: ' ' }], footer: 'mark', description: 'mark / unmark the current row', modes: BROWSE },
  { command: 'mark.problems', keys: [{ char: 'a' }], description: 'mark every evictable problem', modes: BROWSE },
  { command: 'mark.none', keys: [{ char: 'U' }], description: 'unmark all', modes: BROWSE },
  { command: 'evict.selected', keys: [{ char: 'd' }, { ctrl: 'd' }], footer: 'evict', description: 'evict the marked rows, or the current row', modes: ['table', 'detail'], evicts: true },
  { command: 'evict.problems', keys: [{ char: 'X' }], description: 'evict every problem', modes: BROWSE, evicts: true },
  { command: 'view.tab', keys: [{ key: 'tab' }], footer: 'claims', description: 'switch between sessions and claims', modes: BROWSE },
  { command: 'app.refresh', keys: [{ char: 'R' }], description: 'probe and re-sync now', modes: ANYWHERE },
  { command: 'view.help', keys: [{ char: '?' }], footer: 'help', description: 'this help', modes: ANYWHERE },
  { command: 'view.back', keys: [{ key: 'esc' }, { char: 'q' }], footer: 'back', description: 'back to the table', modes: ['detail', 'help'] },
  { command: 'app.quit', keys: [{ char: 'q' }, { ctrl: 'c' }], footer: 'quit', description: 'quit', modes: BROWSE },
  { command: 'confirm.yes', keys: [{ char: 'y' }], footer: 'yes', description: 'confirm', modes: ['confirm', 'confirm-force'] },
  { command: 'confirm.force', keys: [{ char: 'f' }], footer: 'force too', description: 'also evict the entries that need force', modes: ['confirm-force'] },
  { command: 'confirm.no', keys: [{ char: 'n' }, { key: 'esc' }, { key: 'enter' }], footer: 'no', description: 'cancel (the default)', modes: ['confirm', 'confirm-force'] },
];

function matches(spec: KeySpec, press: KeyPress): boolean {
  if (spec.ctrl !== undefined) return press.ctrl === true && press.input === spec.ctrl;
  if (spec.char !== undefined) return press.ctrl !== true && press.input === spec.char;
  switch (spec.key) {
    case 'up':
      return press.upArrow === true;
    case 'down':
      return press.downArrow === true;
    case 'pageUp':
      return press.pageUp === true;
    case 'pageDown':
      return press.pageDown === true;
    case 'home':
      return press.home === true;
    case 'end':
      return press.end === true;
    case 'enter':
      return press.return === true;
    case 'esc':
      return press.escape === true;
    case 'tab':
      return press.tab === true;
    default:
      return false;
  }
}

/** The command a key press means in a mode, if any. */
export function commandFor(press: KeyPress, mode: Mode): Command | undefined {
  // Ctrl-C always quits, whatever is on screen.
  if (press.ctrl === true && press.input === 'c') return 'app.quit';
  for (const b of KEYMAP) {
    if (b.modes.includes(mode) && b.keys.some((k) => matches(k, press))) return b.command;
  }
  return undefined;
}

// ASCII only: arrows are East-Asian "ambiguous" width and can be drawn two cells wide.
const KEY_LABELS: Record<KeyName, string> = {
  up: 'Up',
  down: 'Down',
  pageUp: 'PgUp',
  pageDown: 'PgDn',
  home: 'Home',
  end: 'End',
  enter: 'Enter',
  esc: 'Esc',
  tab: 'Tab',
};

export function keyLabel(spec: KeySpec): string {
  if (spec.ctrl !== undefined) return `Ctrl-${spec.ctrl.toUpperCase()}`;
  if (spec.char === ' ') return 'Space';
  if (spec.char !== undefined) return spec.char;
  return KEY_LABELS[spec.key as KeyName];
}

export function bindingKeys(b: Binding): string {
  return b.keys.map(keyLabel).join(' ');
}

/** Footer entries for a mode: "key word" pairs, in keymap order. */
export function footerFor(mode: Mode): { keys: string; word: string; evicts: boolean }[] {
  return KEYMAP.filter((b) => b.footer !== undefined && b.modes.includes(mode)).map((b) => ({
    keys: b.command === 'nav.down' ? 'j/k' : keyLabel(b.keys[0]!),
    word: b.footer!,
    evicts: b.evicts === true,
  }));
}

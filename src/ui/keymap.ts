// The keymap is data: one table from command to keys, words and the modes it applies in. The
// input hook, the footer and the help overlay all read it, so they can never disagree: a key the
// table does not list for the mode on top of the stack does nothing.

/**
 * A view that takes the keys while it is on top of the mode stack (view-state.ts): the table at
 * the bottom, then what is opened over it (filter, detail, events, help, the confirm dialog).
 */
export type Mode = 'table' | 'filter' | 'detail' | 'events' | 'help' | 'confirm' | 'confirm-force' | 'evicting' | 'cancelling' | 'confirm-leftovers' | 'ending';

export const MODES: readonly Mode[] = ['table', 'filter', 'detail', 'events', 'help', 'confirm', 'confirm-force', 'evicting', 'cancelling', 'confirm-leftovers', 'ending'];

export type Command =
  | 'nav.up'
  | 'nav.down'
  | 'nav.pageUp'
  | 'nav.pageDown'
  | 'nav.top'
  | 'nav.bottom'
  | 'filter.start'
  | 'filter.type'
  | 'filter.backspace'
  | 'filter.accept'
  | 'filter.clear'
  | 'filter.next'
  | 'filter.prev'
  | 'sort.prev'
  | 'sort.next'
  | 'sort.reverse'
  | 'mark.toggle'
  | 'mark.problems'
  | 'mark.none'
  | 'evict.selected'
  | 'evict.problems'
  | 'evict.cancel'
  | 'leftovers.end'
  | 'view.problems'
  | 'view.details'
  | 'view.tab'
  | 'view.events'
  | 'view.help'
  | 'view.back'
  | 'pane.jump'
  | 'row.copy'
  | 'app.refresh'
  | 'app.quit'
  | 'confirm.yes'
  | 'confirm.force'
  | 'confirm.no';

/** One key, as keys.ts reads it from the terminal's bytes, reduced to what bindings look at. */
export interface KeyPress {
  readonly input: string;
  /** Text that came as a bracketed paste: only a binding that takes text takes it. */
  readonly paste?: boolean;
  readonly upArrow?: boolean;
  readonly downArrow?: boolean;
  readonly pageUp?: boolean;
  readonly pageDown?: boolean;
  readonly home?: boolean;
  readonly end?: boolean;
  readonly return?: boolean;
  readonly escape?: boolean;
  readonly tab?: boolean;
  readonly backspace?: boolean;
  readonly delete?: boolean;
  readonly ctrl?: boolean;
}

type KeyName = 'up' | 'down' | 'pageUp' | 'pageDown' | 'home' | 'end' | 'enter' | 'esc' | 'tab' | 'backspace';

export interface KeySpec {
  /** A named key, or a printable character, or a Ctrl combination, or any text typed. */
  readonly key?: KeyName;
  readonly char?: string;
  readonly ctrl?: string;
  /** Any text that is not a named key or a Ctrl combination (typed or pasted): the command gets it. */
  readonly text?: true;
  /** tmux's default prefix (Ctrl-B): inside tmux it never reaches us, so the help leaves it out there. */
  readonly tmuxPrefix?: true;
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
  /** Of use only for evicting (marks): in --read-only it says why it does nothing, and the footer leaves it out. */
  readonly forEviction?: boolean;
}

const BROWSE: Mode[] = ['table'];
const SCROLLS: Mode[] = ['table', 'detail', 'events', 'help'];
/** Everywhere but during an eviction or while leftovers are ended (there Ctrl-C cancels first). */
const ANY_BUT_EVICTING: Mode[] = MODES.filter((m) => m !== 'evicting' && m !== 'cancelling' && m !== 'ending');
const DIALOG: Mode[] = ['confirm', 'confirm-force', 'confirm-leftovers'];
/** The confirm dialog, asking or running: its list scrolls. */
const DIALOG_SCROLLS: Mode[] = [...DIALOG, 'evicting', 'cancelling', 'ending'];
const SCROLLS_ALL: Mode[] = [...SCROLLS, ...DIALOG_SCROLLS];

export const KEYMAP: readonly Binding[] = [
  { command: 'nav.up', keys: [{ key: 'up' }, { char: 'k' }], description: 'move up', modes: SCROLLS },
  { command: 'nav.down', keys: [{ key: 'down' }, { char: 'j' }], footer: 'move', description: 'move down', modes: SCROLLS },
  { command: 'nav.up', keys: [{ key: 'up' }, { char: 'k' }], description: 'scroll the list of entries up (PgUp a page)', modes: DIALOG_SCROLLS },
  { command: 'nav.down', keys: [{ key: 'down' }, { char: 'j' }], description: 'scroll the list of entries down (PgDn a page)', modes: DIALOG_SCROLLS },
  // b as in less: Ctrl-B is tmux's prefix and never reaches a program inside tmux.
  { command: 'nav.pageUp', keys: [{ key: 'pageUp' }, { ctrl: 'b', tmuxPrefix: true }, { char: 'b' }], description: 'page up', modes: SCROLLS_ALL },
  { command: 'nav.pageDown', keys: [{ key: 'pageDown' }, { ctrl: 'f' }], description: 'page down', modes: SCROLLS_ALL },
  { command: 'nav.top', keys: [{ char: 'g' }, { key: 'home' }], description: 'first row', modes: SCROLLS },
  { command: 'nav.bottom', keys: [{ char: 'G' }, { key: 'end' }], description: 'last row', modes: SCROLLS },
  { command: 'view.details', keys: [{ key: 'enter' }], footer: 'details', description: 'details and evidence of the current row', modes: BROWSE },
  { command: 'filter.start', keys: [{ char: '/' }], footer: 'filter', description: 'filter rows (Esc clears)', modes: BROWSE },
  { command: 'filter.accept', keys: [{ key: 'enter' }], footer: 'keep', description: 'keep the filter, back to the table', modes: ['filter'] },
  { command: 'filter.clear', keys: [{ key: 'esc' }], footer: 'clear', description: 'clear the filter', modes: ['filter'] },
  { command: 'filter.clear', keys: [{ key: 'esc' }], description: 'clear a kept filter', modes: BROWSE },
  { command: 'filter.next', keys: [{ char: 'n' }], description: 'next row matching the filter', modes: BROWSE },
  { command: 'filter.prev', keys: [{ char: 'N' }], description: 'previous row matching the filter', modes: BROWSE },
  { command: 'filter.backspace', keys: [{ key: 'backspace' }], description: 'delete the last character of the filter', modes: ['filter'] },
  { command: 'filter.type', keys: [{ text: true }], description: 'what you type (or paste) is the filter', modes: ['filter'] },
  { command: 'view.problems', keys: [{ char: 'p' }], footer: 'problems', description: 'problems only / all rows', modes: BROWSE },
  { command: 'sort.prev', keys: [{ char: '<' }], description: 'sort by the previous column', modes: BROWSE },
  { command: 'sort.next', keys: [{ char: '>' }], footer: 'sort', description: 'sort by the next column', modes: BROWSE },
  { command: 'sort.reverse', keys: [{ char: 'r' }], description: 'reverse the sort', modes: BROWSE },
  { command: 'mark.toggle', keys: [{ char: ' ' }], footer: 'mark', description: 'mark / unmark the current row (for evicting)', modes: BROWSE, forEviction: true },
  { command: 'mark.problems', keys: [{ char: 'a' }], description: 'mark every evictable problem', modes: BROWSE, forEviction: true },
  { command: 'mark.none', keys: [{ char: 'U' }], description: 'unmark all', modes: BROWSE },
  { command: 'evict.selected', keys: [{ char: 'd' }, { ctrl: 'd' }], footer: 'evict', description: 'evict the marked rows, or the current row', modes: ['table', 'detail'], evicts: true },
  { command: 'evict.problems', keys: [{ char: 'X' }], description: 'evict every problem shown (the filter and problems-only apply)', modes: BROWSE, evicts: true },
  { command: 'evict.cancel', keys: [{ key: 'esc' }, { ctrl: 'c' }, { char: 'q' }], footer: 'cancel', description: 'cancel the eviction after the entry being sent', modes: ['evicting'] },
  {
    command: 'leftovers.end',
    keys: [{ char: 'K' }],
    footer: 'end leftovers',
    description: 'end the processes a dead agent left running (asks first; SIGTERM, then SIGKILL after a grace)',
    modes: ['table', 'detail'],
    evicts: true,
  },
  { command: 'evict.cancel', keys: [{ key: 'esc' }, { ctrl: 'c' }, { char: 'q' }], footer: 'cancel', description: 'stop ending leftovers: no more SIGTERM, no SIGKILL', modes: ['ending'] },
  { command: 'app.quit', keys: [{ ctrl: 'c' }], footer: 'quit', description: 'quit once the entry being sent is done (nothing more is sent)', modes: ['cancelling'] },
  { command: 'view.tab', keys: [{ key: 'tab' }], footer: 'claims', description: 'switch between sessions and claims', modes: BROWSE },
  { command: 'view.events', keys: [{ char: 'e' }], footer: 'events', description: 'what happened: the last 200 events, newest first', modes: BROWSE },
  { command: 'pane.jump', keys: [{ char: 'o' }], description: "go to the agent's tmux pane (outside tmux: how to attach)", modes: ['table', 'detail'] },
  { command: 'row.copy', keys: [{ char: 'c' }], description: "copy the row's id to the clipboard (OSC 52)", modes: ['table', 'detail'] },
  { command: 'app.refresh', keys: [{ char: 'R' }], description: 'probe and re-sync now', modes: SCROLLS },
  { command: 'view.help', keys: [{ char: '?' }], footer: 'help', description: 'this help', modes: SCROLLS },
  { command: 'view.back', keys: [{ key: 'esc' }, { char: 'q' }], footer: 'back', description: 'close this view (back to the one under it)', modes: ['detail', 'events', 'help'] },
  { command: 'app.quit', keys: [{ char: 'q' }, { ctrl: 'c' }], footer: 'quit', description: 'quit', modes: BROWSE },
  { command: 'app.quit', keys: [{ ctrl: 'c' }], description: 'quit, from any view but a running eviction', modes: ANY_BUT_EVICTING.filter((m) => m !== 'table') },
  { command: 'confirm.yes', keys: [{ char: 'y' }], footer: 'yes', description: 'confirm', modes: DIALOG },
  { command: 'confirm.force', keys: [{ char: 'f' }], footer: 'force too', description: 'also evict the entries that need force', modes: ['confirm-force'] },
  { command: 'confirm.no', keys: [{ char: 'n' }, { key: 'esc' }, { key: 'enter' }], footer: 'no', description: 'cancel (the default)', modes: DIALOG },
];

const NAMED: Record<KeyName, (p: KeyPress) => boolean> = {
  up: (p) => p.upArrow === true,
  down: (p) => p.downArrow === true,
  pageUp: (p) => p.pageUp === true,
  pageDown: (p) => p.pageDown === true,
  home: (p) => p.home === true,
  end: (p) => p.end === true,
  enter: (p) => p.return === true,
  esc: (p) => p.escape === true,
  tab: (p) => p.tab === true,
  // Ink reports the Backspace key of most terminals (DEL, 0x7f) as `delete`: both delete backwards.
  backspace: (p) => p.backspace === true || p.delete === true,
};

function isNamed(p: KeyPress): boolean {
  return Object.values(NAMED).some((named) => named(p));
}

function matches(spec: KeySpec, press: KeyPress): boolean {
  if (spec.text === true) return press.ctrl !== true && press.input !== '' && !isNamed(press);
  if (press.paste === true) return false;
  if (spec.ctrl !== undefined) return press.ctrl === true && press.input === spec.ctrl;
  if (spec.char !== undefined) return press.ctrl !== true && press.input === spec.char;
  return spec.key !== undefined && NAMED[spec.key](press);
}

/** The binding a key press means in a mode, if any: the first that lists it. */
export function bindingFor(press: KeyPress, mode: Mode): Binding | undefined {
  return KEYMAP.find((b) => b.modes.includes(mode) && b.keys.some((k) => matches(k, press)));
}

/** What the input hook dispatches for a key press: its command, and the text if the binding takes text. */
export interface KeyCommand {
  readonly command: Command;
  readonly text?: string;
}

export function keyCommand(press: KeyPress, mode: Mode): KeyCommand | undefined {
  const b = bindingFor(press, mode);
  if (!b) return undefined;
  return b.keys.some((k) => k.text === true && matches(k, press)) ? { command: b.command, text: press.input } : { command: b.command };
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
  backspace: 'Backspace',
};

export function keyLabel(spec: KeySpec): string {
  if (spec.ctrl !== undefined) return `Ctrl-${spec.ctrl.toUpperCase()}`;
  if (spec.text === true) return 'text';
  if (spec.char === ' ') return 'Space';
  if (spec.char !== undefined) return spec.char;
  return KEY_LABELS[spec.key as KeyName];
}

/** Where the keys are read: inside tmux ($TMUX), its prefix key never reaches us. */
export interface KeyPlace {
  readonly inTmux?: boolean | undefined;
}

/** The keys of a binding as the help shows them ("PgUp Ctrl-B b"); inside tmux without its prefix. */
export function bindingKeys(b: Binding, place: KeyPlace = {}): string {
  return b.keys
    .filter((k) => !(place.inTmux === true && k.tmuxPrefix === true))
    .map(keyLabel)
    .join(' ');
}

/** The keys of a command in a mode, as the help shows them ("q Ctrl-C"): for text that names a key. */
export function keysOf(command: Command, mode: Mode): string {
  const b = KEYMAP.find((x) => x.command === command && x.modes.includes(mode));
  return b ? bindingKeys(b) : '';
}

/** Footer entries for a mode: "key word" pairs, in keymap order. */
export function footerFor(mode: Mode): { command: Command; keys: string; word: string; evicts: boolean; forEviction: boolean }[] {
  return KEYMAP.filter((b) => b.footer !== undefined && b.modes.includes(mode)).map((b) => ({
    command: b.command,
    keys: b.command === 'nav.down' ? 'j/k' : keyLabel(b.keys[0]!),
    word: b.footer!,
    evicts: b.evicts === true,
    forEviction: b.forEviction === true,
  }));
}

/**
 * The help's sections, one per mode a person meets (lazygit's way): what moves in every list
 * first, then the table, the filter prompt, the detail view, events and help, the evict dialog.
 * `every`: the bindings that apply in all of `modes`; the later sections within those modes leave
 * them out. `openedBy`: the keys that open the view, said in its title.
 */
interface HelpGroup {
  readonly title: string;
  readonly modes: readonly Mode[];
  readonly every?: true;
  readonly openedBy?: readonly Command[];
}

const HELP_GROUPS: readonly HelpGroup[] = [
  { title: 'in every list (table, details, events, help)', modes: SCROLLS, every: true },
  { title: 'table', modes: BROWSE },
  { title: 'filter prompt', modes: ['filter'], openedBy: ['filter.start'] },
  { title: 'detail view', modes: ['detail'], openedBy: ['view.details'] },
  { title: 'events and this help', modes: ['events', 'help'], openedBy: ['view.events', 'view.help'] },
  { title: 'evict dialog', modes: DIALOG_SCROLLS, openedBy: ['evict.selected', 'evict.problems'] },
];

/** The help's sections, each with its title and bindings; every binding is in one at least. */
export function helpGroups(): { title: string; bindings: Binding[] }[] {
  const taken: { modes: readonly Mode[]; bindings: Set<Binding> }[] = [];
  return HELP_GROUPS.map((g) => {
    const applies = (b: Binding) => (g.every ? g.modes.every((m) => b.modes.includes(m)) : g.modes.some((m) => b.modes.includes(m)));
    const shownAbove = (b: Binding) => taken.some((t) => t.bindings.has(b) && g.modes.every((m) => t.modes.includes(m)));
    // In the order of the group's modes (the dialog's keys before those of the eviction it starts), then keymap order.
    const first = (b: Binding) => g.modes.findIndex((m) => b.modes.includes(m));
    const bindings = KEYMAP.filter((b) => applies(b) && !shownAbove(b)).sort((a, b) => first(a) - first(b));
    if (g.every) taken.push({ modes: g.modes, bindings: new Set(bindings) });
    const opened = g.openedBy?.map((c) => keysOf(c, 'table')).join(', ');
    return { title: opened ? `${g.title} (${opened})` : g.title, bindings };
  });
}

// The key reader as a table: byte chunks as a terminal sends them, and the presses they are.
// Every byte of a chunk is a key; sequences inside a chunk are keys; pastes are text.
import { describe, expect, it } from 'vitest';
import { keyCommand, type KeyPress } from '../../src/ui/keymap.js';
import { KeyReader, parseKeys, pastedText } from '../../src/ui/keys.js';

const ESC = '\u001b';
const up: KeyPress = { input: '', upArrow: true };
const down: KeyPress = { input: '', downArrow: true };
const esc: KeyPress = { input: '', escape: true };
const enter: KeyPress = { input: '', return: true };
const none: KeyPress = { input: '' };
const ch = (c: string): KeyPress => ({ input: c });
const ctrl = (c: string): KeyPress => ({ input: c, ctrl: true });

describe('parseKeys: one chunk, every key in it', () => {
  it.each<[string, string, KeyPress[]]>([
    ['one letter', 'j', [ch('j')]],
    ['three letters in one read', 'jjj', [ch('j'), ch('j'), ch('j')]],
    ['qq over SSH', 'qq', [ch('q'), ch('q')]],
    ['arrows inside a chunk', `j${ESC}[Ak${ESC}[B`, [ch('j'), up, ch('k'), down]],
    ['two arrows back to back', `${ESC}[B${ESC}[B`, [down, down]],
    ['SS3 arrows (application cursor mode)', `${ESC}OA${ESC}OB`, [up, down]],
    ['PgUp PgDn Home End, both spellings', `${ESC}[5~${ESC}[6~${ESC}[H${ESC}[F${ESC}[1~${ESC}[4~${ESC}OH${ESC}OF`, [
      { input: '', pageUp: true }, { input: '', pageDown: true }, { input: '', home: true }, { input: '', end: true },
      { input: '', home: true }, { input: '', end: true }, { input: '', home: true }, { input: '', end: true },
    ]],
    ['an arrow with a modifier is still the arrow', `${ESC}[1;5A`, [up]],
    ['Delete', `${ESC}[3~`, [{ input: '', delete: true }]],
    ['unknown sequences are one press each, bound to nothing', `${ESC}[15~${ESC}OP${ESC}[Z${ESC}[C${ESC}[I`, [none, none, none, none, none]],
    ['Alt-letter is nothing, and eats only its letter', `${ESC}aj`, [none, ch('j')]],
    ['Esc Esc then an arrow', `${ESC}${ESC}[A`, [esc, up]],
    ['Enter (CR and LF), Tab, Backspace (DEL and BS)', '\r\n\t\u007f\b', [enter, enter, { input: '', tab: true }, { input: '', backspace: true }, { input: '', backspace: true }]],
    ['Ctrl-letters', '\u0003\u0004\u0002\u0006', [ctrl('c'), ctrl('d'), ctrl('b'), ctrl('f')]],
    ['Ctrl-C twice in one read', '\u0003\u0003', [ctrl('c'), ctrl('c')]],
    ['NUL, C1 controls and the other C0 controls are nothing', '\u0000\u009b\u001c', [none, none, none]],
    ['wide and astral characters are one key each', 'é東😀', [ch('é'), ch('東'), ch('😀')]],
    ['a bracketed paste is one press of its text', `x${ESC}[200~foo bar${ESC}[201~y`, [ch('x'), { input: 'foo bar', paste: true }, ch('y')]],
    ['a paste keeps no control bytes or sequences', `${ESC}[200~a\u0007b${ESC}[31mc\r\nd${ESC}[201~`, [{ input: 'abc d', paste: true }]],
    ['a CSI broken by a control byte ends there', `${ESC}[1\rj`, [none, enter, ch('j')]],
  ])('%s', (_name, chunk, presses) => {
    expect(parseKeys(chunk)).toEqual({ presses, pending: '' });
  });

  it.each<[string, string, KeyPress[], string]>([
    ['a lone ESC waits: it may start a sequence', `j${ESC}`, [ch('j')], ESC],
    ['a CSI cut by the chunk waits', `k${ESC}[1;`, [ch('k')], `${ESC}[1;`],
    ['an SS3 cut by the chunk waits', `${ESC}O`, [], `${ESC}O`],
    ['a paste without its end waits', `${ESC}[200~abc`, [], `${ESC}[200~abc`],
  ])('%s', (_name, chunk, presses, pending) => {
    expect(parseKeys(chunk)).toEqual({ presses, pending });
  });
});

describe('KeyReader: across chunks', () => {
  it('completes a sequence cut between two chunks', () => {
    const r = new KeyReader();
    expect(r.push(`j${ESC}[`)).toEqual([ch('j')]);
    expect(r.waiting).toBe(true);
    expect(r.push('Bk')).toEqual([down, ch('k')]);
    expect(r.waiting).toBe(false);
  });
  it('a lone ESC with nothing after it is the Esc key', () => {
    const r = new KeyReader();
    expect(r.push(ESC)).toEqual([]);
    expect(r.flush()).toEqual([esc]);
    expect(r.flush()).toEqual([]);
  });
  it('an unfinished sequence is given up as nothing; an unfinished paste as its text', () => {
    const r = new KeyReader();
    r.push(`${ESC}[12`);
    expect(r.flush()).toEqual([none]);
    r.push(`${ESC}[200~half\u0001`);
    expect(r.flush()).toEqual([{ input: 'half', paste: true }]);
  });
  it('a paste across chunks is one press', () => {
    const r = new KeyReader();
    expect(r.push(`${ESC}[200~ab`)).toEqual([]);
    expect(r.push(`cd${ESC}[201~q`)).toEqual([{ input: 'abcd', paste: true }, ch('q')]);
  });
});

describe('presses mean keymap commands', () => {
  it('jjj is three moves, qq two quits, an arrow in a chunk a move', () => {
    expect(parseKeys('jjj').presses.map((p) => keyCommand(p, 'table')?.command)).toEqual(['nav.down', 'nav.down', 'nav.down']);
    expect(parseKeys('qq').presses.map((p) => keyCommand(p, 'table')?.command)).toEqual(['app.quit', 'app.quit']);
    expect(parseKeys(`k${ESC}[B`).presses.map((p) => keyCommand(p, 'table')?.command)).toEqual(['nav.up', 'nav.down']);
  });
  it('a paste is text at the filter prompt and no key anywhere else', () => {
    const paste = parseKeys(`${ESC}[200~Xy${ESC}[201~`).presses[0]!;
    expect(keyCommand(paste, 'filter')?.command).toBe('filter.type');
    for (const mode of ['table', 'confirm', 'detail'] as const) expect(keyCommand(paste, mode)?.command).toBeUndefined();
  });
  it('pastedText keeps printable text only', () => {
    expect(pastedText(`a${ESC}[2Jb${ESC}]0;x\u0007c\u009bd\te`)).toBe('ab]0;xcd e');
  });
});

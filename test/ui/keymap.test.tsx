// The keymap's promise: every key handled anywhere is in the one keymap that also draws the
// footer and the help. Checked three ways: no file of src/ui reads a key but the input hook; the
// real App, in every mode, does nothing at all for a key the keymap does not list for that mode;
// and every key the keymap lists is a key a terminal can send (as keys.ts reads the terminal's bytes).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { EndLeftoversRequest, EndLeftoversSummary } from '../../src/engine/end-leftovers.js';
import type { EvictRequest, EvictSummary } from '../../src/engine/types.js';
import { App } from '../../src/ui/app.js';
import { helpLines } from '../../src/ui/help.js';
import { bindingFor, bindingKeys, footerFor, KEYMAP, MODES, type KeyPress, type Mode } from '../../src/ui/keymap.js';
import { KeyReader } from '../../src/ui/keys.js';
import { FIXED_NOW, leftoverSnapshot, StaticEngine } from '../support/ui-fixtures.js';

const dir = join(import.meta.dirname, '../../src/ui');
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f));
const code = (file: string) =>
  readFileSync(join(dir, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

describe('one place reads keys', () => {
  it('useInput (or raw stdin) is used by the input hook alone', () => {
    // keys.ts turns bytes into presses, but reads nothing itself.
    const readers = files.filter((f) => /\buseInput\b|\buseStdin\b|stdin\.on\(/.test(code(f)));
    expect(readers).toEqual(['use-keymap.ts']);
  });
  it.each(files.filter((f) => f !== 'keymap.ts'))('%s reads no key flag: only the keymap matches keys', (file) => {
    expect(code(file)).not.toMatch(/\bkey\.\w+|\.(upArrow|downArrow|leftArrow|rightArrow|escape|return)\b|(?<!filter)\.backspace\b|(?<!nav)\.page(Up|Down)\b|\binput\s*===/);
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A lone ESC waits a turn (it could start a sequence): each key goes in its own turn. */
const turn = () => new Promise((r) => setImmediate(r));

/** Text as a terminal sends a paste (bracketed): one press. */
const PASTE = '\u001b[200~paste\u001b[201~';

/** Every sequence a key of a keyboard sends here, one chunk each: printable ASCII, Ctrl-letters, named keys. */
const SEQUENCES: readonly string[] = [
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 26 }, (_, i) => String.fromCharCode(1 + i)),
  ...['\u001b[A', '\u001b[B', '\u001b[C', '\u001b[D', '\u001b[5~', '\u001b[6~', '\u001b[H', '\u001b[F', '\u001b[1~', '\u001b[4~', '\u001b[2~', '\u001b[3~'],
  ...['\u001b', '\u007f', '\u001bOP', '\u001b[15~', '\u001ba', 'é', '東', PASTE],
];

/** What the App's reader makes of each sequence sent alone: the real presses the keymap sees. */
function readPresses(sequences: readonly string[]): Map<string, KeyPress> {
  const out = new Map<string, KeyPress>();
  for (const s of sequences) {
    const reader = new KeyReader();
    const presses = [...reader.push(s), ...reader.flush()];
    if (presses.length === 1) out.set(s, presses[0]!);
  }
  return out;
}

/** An engine whose evictions (and K runs) wait until released: the App stays in the `evicting` (`ending`) mode. The ghost has leftovers. */
class HeldEngine extends StaticEngine {
  private releaseAll: (() => void)[] = [];
  constructor() {
    const { findings, fields } = leftoverSnapshot({ departed: false });
    super(findings, fields);
  }
  override async evict(request: EvictRequest): Promise<EvictSummary> {
    await new Promise<void>((r) => this.releaseAll.push(r));
    return super.evict(request);
  }
  override async endLeftovers(request: EndLeftoversRequest): Promise<EndLeftoversSummary> {
    const done = super.endLeftovers(request); // recorded at once; answered once released
    await new Promise<void>((r) => this.releaseAll.push(r));
    return done;
  }
  release(): void {
    for (const r of this.releaseAll.splice(0)) r();
  }
}

/** Keys that bring the App from the table into each mode (the demo's first row is a ghost). */
const INTO: Record<Mode, readonly string[]> = {
  table: [],
  filter: ['/', 'g'],
  detail: ['j', '\r'],
  events: ['e'],
  help: ['j', '\r', '?'],
  confirm: ['d'],
  'confirm-force': ['G', 'k', 'k', ' ', 'g', ' ', 'd', 'y'],
  evicting: ['d', 'y'],
  cancelling: ['d', 'y', '\u001b'],
  'confirm-leftovers': ['K'],
  ending: ['K', 'y'],
};

describe('the App does nothing for a key the keymap does not list for the mode on top', () => {
  it.each(MODES.map((m) => [m]))('%s', async (mode) => {
    const presses = readPresses(SEQUENCES);
    expect(presses.size).toBeGreaterThan(120);
    const unbound = [...presses].filter(([, p]) => bindingFor(p, mode) === undefined).map(([s]) => s);
    expect(unbound.length).toBeGreaterThan(mode === 'filter' ? 10 : 60);

    const engine = new HeldEngine();
    let quits = 0;
    const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={{ columns: 120, rows: 30 }} onQuit={() => quits++} />);
    try {
      await sleep(30);
      for (const k of INTO[mode]) {
        r.stdin.write(k);
        await sleep(10);
      }
      await sleep(30);
      const before = r.lastFrame();
      const drawn = r.frames.length;
      const evictions = engine.evictions.length;
      for (const s of unbound) {
        r.stdin.write(s);
        await turn();
      }
      await sleep(60);
      // Every frame drawn meanwhile, not only the last: a key could open a view that a later key closes.
      for (const frame of [...r.frames.slice(drawn), r.lastFrame()]) expect(frame, `a key not in the keymap for ${mode} changed the screen`).toBe(before);
      expect([quits, engine.refreshes, engine.evictions.length, engine.endings.length]).toEqual([0, 0, evictions, mode === 'ending' ? 1 : 0]);
    } finally {
      engine.release();
      r.unmount();
    }
  }, 30_000);
});

describe('every binding is a key a terminal sends, in the footer or the help', () => {
  it('each key of each binding, as the App reads it, means that binding in its modes', async () => {
    const typed: Record<string, string> = { up: '\u001b[A', down: '\u001b[B', pageUp: '\u001b[5~', pageDown: '\u001b[6~', home: '\u001b[H', end: '\u001b[F', enter: '\r', esc: '\u001b', tab: '\t', backspace: '\u007f' };
    const sequences = KEYMAP.flatMap((b) => b.keys.map((k) => (k.key ? typed[k.key]! : k.ctrl ? String.fromCharCode(k.ctrl.charCodeAt(0) - 96) : (k.char ?? PASTE))));
    const presses = readPresses(sequences);
    for (const b of KEYMAP) {
      for (const k of b.keys) {
        const seq = k.key ? typed[k.key]! : k.ctrl ? String.fromCharCode(k.ctrl.charCodeAt(0) - 96) : (k.char ?? PASTE);
        const press = presses.get(seq);
        expect(press, `${b.command}: ${JSON.stringify(seq)} reaches the App`).toBeDefined();
        // The first binding of a mode that lists the key wins: it must be this one (no key means two things).
        for (const mode of b.modes) expect(bindingFor(press!, mode), `${mode}: ${bindingKeys(b)}`).toBe(b);
      }
    }
  });

  it('the help lists every binding; each footer entry is a binding of its mode', () => {
    const help = helpLines();
    for (const b of KEYMAP) expect(help).toContainEqual({ label: bindingKeys(b), value: b.description });
    for (const mode of MODES) {
      const words = KEYMAP.filter((b) => b.footer !== undefined && b.modes.includes(mode)).map((b) => b.footer);
      expect(footerFor(mode).map((f) => f.word)).toEqual(words);
    }
  });

  it('while filtering, the footer shows the filter keys, not the table keys that do not apply', () => {
    expect(footerFor('filter').map((f) => `${f.keys} ${f.word}`)).toEqual(['Enter keep', 'Esc clear']);
  });

  it('Ctrl-C quits from every mode but a running eviction, which it cancels first (a second one quits)', () => {
    for (const mode of MODES) expect(bindingFor({ input: 'c', ctrl: true }, mode)?.command).toBe(mode === 'evicting' || mode === 'ending' ? 'evict.cancel' : 'app.quit');
  });
});

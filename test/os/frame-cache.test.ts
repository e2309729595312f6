// The kept first frame (src/os/frame-cache.ts), on real files in a temp folder: one frame per key,
// the newest eight kept, no secret in the file, nothing read through a symlink or written into a
// folder others may write, and a file someone else wrote can at most colour a row (a line with
// any other control byte makes the whole file count as empty).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildHashOf, firstFrameKey, firstFramePath, readFirstFrame, writeFirstFrame } from '../../src/os/frame-cache.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-frame-cache-'));
  path = join(dir, 'cache', 'ghostwatch', 'first-frames.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const E = '\u001b[';
const FRAME = [`${E}1mghostwatch${E}22m  hypivisor ${E}33mconnecting${E}39m`, `${E}1m  VERDICT  SESSION${E}22m`, '  waiting for the registry and the first probe…', ''];
const base = {
  build: 'a'.repeat(64),
  columns: 120,
  rows: 40,
  settings: { kinds: ['hypivisor'], target: { url: 'ws://127.0.0.1:31415/ws', token: 'sekrit-token-1', ca: '-----BEGIN CERTIFICATE-----pem' }, readOnly: false },
  prefs: { prefs: { tab: 'sessions', sortColumn: 'age', sortReverse: false, problemsOnly: false } },
  env: { TERM: 'xterm-256color', LANG: 'en_US.UTF-8', HOME: '/home/x', SHLVL: '1' },
  host: 'vm',
};

describe('firstFrameKey', () => {
  it.each([
    ['another build', { build: 'b'.repeat(64) }],
    ['another width', { columns: 121 }],
    ['another height', { rows: 41 }],
    ['another registry', { settings: { ...base.settings, target: { ...base.settings.target, url: 'ws://127.0.0.1:1/ws' } } }],
    ['read-only', { settings: { ...base.settings, readOnly: true } }],
    ['another sort kept', { prefs: { prefs: { ...base.prefs.prefs, sortColumn: 'pid' } } }],
    ['a view file said to be ignored', { prefs: { warning: 'view settings ignored: not valid JSON' } }],
    ['another host', { host: 'vm2' }],
    ['colours forced off', { env: { ...base.env, FORCE_COLOR: '0' } }],
    ['another terminal', { env: { ...base.env, TERM: 'screen' } }],
    ['another locale', { env: { ...base.env, LANG: 'C' } }],
    ['LC_ALL set', { env: { ...base.env, LC_ALL: 'C' } }],
  ] as const)('differs for %s', (_what, change) => {
    expect(firstFrameKey({ ...base, ...change } as typeof base)).not.toBe(firstFrameKey(base));
  });

  it('is the same for a token, a CA or an environment that draw nothing', () => {
    const same = firstFrameKey({
      ...base,
      settings: { ...base.settings, target: { ...base.settings.target, token: 'another', ca: 'another pem' } },
      env: { ...base.env, HOME: '/elsewhere', SHLVL: '3' },
    });
    expect(same).toBe(firstFrameKey(base));
    expect(firstFrameKey(base)).not.toContain('sekrit');
    expect(firstFrameKey(base)).not.toContain('CERTIFICATE');
  });
});

describe('readFirstFrame and writeFirstFrame', () => {
  const key = firstFrameKey(base);

  it('a frame kept is read back for its key only; the file is 0600 in a 0700 folder and holds no token', () => {
    expect(readFirstFrame(path, key)).toBeUndefined();
    expect(writeFirstFrame(path, key, FRAME)).toBe(true);
    expect(readFirstFrame(path, key)).toEqual(FRAME);
    expect(readFirstFrame(path, firstFrameKey({ ...base, columns: 80 }))).toBeUndefined();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).not.toContain('sekrit');
  });

  it('keeps the frames of the last eight keys, the newest first; a key written again moves to the front', () => {
    const keyOf = (columns: number) => firstFrameKey({ ...base, columns });
    for (let c = 80; c < 90; c++) expect(writeFirstFrame(path, keyOf(c), [`frame ${c}`])).toBe(true);
    expect(readFirstFrame(path, keyOf(81))).toBeUndefined();
    expect(readFirstFrame(path, keyOf(82))).toEqual(['frame 82']);
    writeFirstFrame(path, keyOf(82), ['frame 82 again']);
    writeFirstFrame(path, keyOf(90), ['frame 90']);
    expect(readFirstFrame(path, keyOf(82))).toEqual(['frame 82 again']);
    expect(readFirstFrame(path, keyOf(83))).toBeUndefined();
    const kept = JSON.parse(readFileSync(path, 'utf8')) as { key: string }[];
    expect(kept.map((e) => e.key)).toEqual([90, 82, 89, 88, 87, 86, 85, 84].map(keyOf));
  });

  it.each([
    ['a cursor move', `${E}5;1Hover there`],
    ['a screen clear', `${E}2Jgone`],
    ['an OSC 52 clipboard write', '\u001b]52;c;aGk=\u0007'],
    ['a bell', 'ring\u0007'],
    ['a C1 control', 'x\u009b31m'],
    ['a carriage return', 'a\rb'],
  ])('a file holding %s is not drawn, and such a frame is not kept', (_what, line) => {
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(path, JSON.stringify([{ key, lines: ['fine', line] }]));
    expect(readFirstFrame(path, key)).toBeUndefined();
    expect(writeFirstFrame(path, key, ['fine', line])).toBe(false);
  });

  it('nothing is read through a symlink, nor from what is not a list of frames', () => {
    const real = join(dir, 'elsewhere.json');
    writeFileSync(real, JSON.stringify([{ key, lines: FRAME }]));
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    symlinkSync(real, path);
    expect(readFirstFrame(path, key)).toBeUndefined();
    rmSync(path);
    for (const text of ['{}', 'not json', JSON.stringify([{ key, lines: 'x' }]), JSON.stringify([{ key: 1, lines: [] }])]) {
      writeFileSync(path, text);
      expect(readFirstFrame(path, key)).toBeUndefined();
    }
  });

  it('never writes into a folder others may write', () => {
    const folder = join(path, '..');
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o777);
    expect(writeFirstFrame(path, key, FRAME)).toBe(false);
    chmodSync(folder, 0o700);
    expect(writeFirstFrame(path, key, FRAME)).toBe(true);
  });
});

describe('firstFramePath and buildHashOf', () => {
  it('lives beside the code cache and is off with it', () => {
    const home = () => '/home/u';
    expect(firstFramePath({}, home)).toBe('/home/u/.cache/ghostwatch/first-frames.json');
    expect(firstFramePath({ XDG_CACHE_HOME: '/xdg' }, home)).toBe('/xdg/ghostwatch/first-frames.json');
    expect(firstFramePath({ XDG_CACHE_HOME: 'relative' }, home)).toBe('/home/u/.cache/ghostwatch/first-frames.json');
    expect(firstFramePath({ GHOSTWATCH_CODE_CACHE: '0' }, home)).toBeUndefined();
    expect(firstFramePath({}, () => '')).toBeUndefined();
    expect(
      firstFramePath({}, () => {
        throw new Error('no home');
      }),
    ).toBeUndefined();
  });

  it('reads the bundle file hash line, and nothing from another file', () => {
    const bundled = join(dir, 'monitor.js');
    writeFileSync(bundled, `//gw-build ${'c0ffee'.repeat(10)}abcd\n(async function(){})\n`);
    expect(buildHashOf(bundled)).toBe(`${'c0ffee'.repeat(10)}abcd`);
    const plain = join(dir, 'plain.js');
    writeFileSync(plain, 'export const x = 1;\n');
    expect(buildHashOf(plain)).toBeUndefined();
    expect(buildHashOf(join(dir, 'missing.js'))).toBeUndefined();
  });
});

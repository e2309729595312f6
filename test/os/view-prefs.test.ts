// The monitor's kept view choices: written atomically under the XDG state dir, read back; a file
// that is not what ghostwatch wrote (corrupt, hostile, a symlink, huge) is ignored with one line.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultViewPrefsPath, loadViewPrefs, saveViewPrefs } from '../../src/os/view-prefs.js';
import { ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-prefs-'));
  chmodSync(dir, 0o755); // uid 65534 plants below it
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('view prefs', () => {
  it('live in $XDG_STATE_HOME/ghostwatch/view.json and come back as written', () => {
    const path = defaultViewPrefsPath({ XDG_STATE_HOME: dir });
    expect(path).toBe(join(dir, 'ghostwatch', 'view.json'));
    expect(loadViewPrefs(path)).toEqual({});
    expect(saveViewPrefs(path, { tab: 'sessions', sortColumn: 'age', sortReverse: true, problemsOnly: true })).toBeUndefined();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadViewPrefs(path)).toEqual({ prefs: { tab: 'sessions', sortColumn: 'age', sortReverse: true, problemsOnly: true } });
    saveViewPrefs(path, { tab: 'claims', sortColumn: undefined, sortReverse: false, problemsOnly: false });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ tab: 'claims', sortColumn: null, sortReverse: false, problemsOnly: false });
  });

  it.each([
    ['not JSON', '{"tab":', /not valid JSON/],
    ['an array', '[1,2]', /not an object/],
    ['a hostile column', JSON.stringify({ sortColumn: '\u001b]0;pwned\u0007' }), /sortColumn is not a column name/],
    ['an unknown tab', JSON.stringify({ tab: 'x' }), /tab is not/],
    ['a string for a flag', JSON.stringify({ problemsOnly: 'yes' }), /problemsOnly is not true or false/],
    ['too large', `{"pad":"${'x'.repeat(10_000)}"}`, /larger than/],
  ])('%s is ignored with one line', (_what, body, why) => {
    const path = join(dir, 'view.json');
    writeFileSync(path, body);
    const r = loadViewPrefs(path);
    expect(r.prefs).toBeUndefined();
    expect(r.warning).toMatch(why);
    expect(r.warning).not.toMatch(/[\n\u001b\u0007]/);
  });

  it('a symlink is not followed, a folder is not read', () => {
    const target = join(dir, 'elsewhere.json');
    writeFileSync(target, JSON.stringify({ problemsOnly: true }));
    const link = join(dir, 'view.json');
    symlinkSync(target, link);
    expect(loadViewPrefs(link).warning).toMatch(/symbolic link/);
    mkdirSync(join(dir, 'folder'));
    expect(loadViewPrefs(join(dir, 'folder')).warning).toMatch(/not a regular file/);
  });

  it('a place it cannot write says why in one line and throws nothing', () => {
    writeFileSync(join(dir, 'file'), '');
    expect(saveViewPrefs(join(dir, 'file', 'ghostwatch', 'view.json'), { tab: 'sessions', sortColumn: undefined, sortReverse: false, problemsOnly: false })).toMatch(/view settings not kept/);
  });
});

const planting = plantingRequirement();
const withOtherUser = planting === undefined || process.env.CI === 'true' ? describe : describe.skip;

withOtherUser('view prefs another user could have written', () => {
  const planted = JSON.stringify({ tab: 'claims', sortColumn: 'age', sortReverse: true, problemsOnly: true });

  it.each(PLANTINGS)('view.json $how: ignored, defaults, one warning', ({ plant, why }) => {
    if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
    const path = plant(join(dir, 'ghostwatch'), 'view.json', planted);
    const r = loadViewPrefs(path);
    expect(r.prefs).toBeUndefined();
    expect(r.warning).toMatch(new RegExp(`^view settings ${path} ignored: `));
    expect(r.warning).toMatch(why);
    expect(r.warning).not.toMatch(/\n/);
  });

  it('our own 0600 view.json in our 0700 folder is still read', () => {
    const path = ownFile(join(dir, 'ghostwatch'), 'view.json', planted);
    expect(loadViewPrefs(path)).toEqual({ prefs: { tab: 'claims', sortColumn: 'age', sortReverse: true, problemsOnly: true } });
  });
});

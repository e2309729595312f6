// `ghostwatch restore` never acts on a trash note another user planted: the built CLI, a real
// trash under a temp XDG_STATE_HOME, a note of uid 65534 naming where its file should go. The note
// is passed over with one warning and nothing is written there; a note of ours is restored.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { OTHER_UID, plantingRequirement } from '../support/planted-files.js';
import { BUILT } from '../support/tmux.js';

const planting = plantingRequirement();
const withOtherUser = (planting === undefined && BUILT) || process.env.CI === 'true' ? describe : describe.skip;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-restore-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A trash entry as ghostwatch writes one (version 2: a note beside a folder holding the file), in `state`'s trash. */
function trashEntry(state: string, id: string, originalPath: string): { note: string; entry: string } {
  const trash = join(state, 'ghostwatch', 'trash');
  mkdirSync(trash, { recursive: true, mode: 0o700 });
  const entry = join(trash, `2026-11-27T00-00-00-000Z-${id}`);
  mkdirSync(entry, { mode: 0o700 });
  writeFileSync(join(entry, 'session.json'), '{"planted": "content"}', { mode: 0o600 });
  const note = `${entry}.meta.json`;
  const body = { version: 2, source: 'claude', kind: 'session', id, originalPath, trashName: `2026-11-27T00-00-00-000Z-${id}`, trashedAt: '2026-11-27T00:00:00.000Z', files: [{ name: 'session.json', originalPath }] };
  writeFileSync(note, JSON.stringify(body), { mode: 0o600 });
  return { note, entry };
}

withOtherUser('restore and a trash note another user planted', () => {
  const env = (state: string) => ({ PATH: process.env.PATH, HOME: dir, XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(dir, 'none'), NO_COLOR: '1' });

  it('a note of uid 65534 is not acted on: one warning, "nothing in the trash", no file written where it says', async () => {
    if (planting !== undefined || !BUILT) throw new Error(`CI=true and this test ${planting ?? 'needs a built dist/ (npm run build)'}`);
    const state = join(dir, 'state-planted');
    const target = join(dir, 'where-the-note-says.json');
    const { note } = trashEntry(state, 'planted', target);
    chownSync(note, OTHER_UID, OTHER_UID);
    const r = await runCli(['restore', 'planted'], env(state));
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      `ghostwatch: warning: the trash note ${note} is passed over: it belongs to uid 65534, not to uid 0 (the user running ghostwatch)`,
      'ghostwatch: nothing in the trash for "planted" (ghostwatch restore lists it)',
    ]);
    expect(existsSync(target)).toBe(false);
    const listed = await runCli(['restore'], env(state));
    expect(listed.stdout).toMatch(/^the trash is empty/);
  });

  it('a note of ours (0600, in our 0700 trash) is restored', async () => {
    const state = join(dir, 'state-ours');
    const target = join(dir, 'ours.json');
    trashEntry(state, 'ours', target);
    chmodSync(join(state, 'ghostwatch'), 0o700);
    const r = await runCli(['restore', 'ours'], env(state));
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readFileSync(target, 'utf8')).toBe('{"planted": "content"}');
  });
});

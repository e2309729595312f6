// The launcher keeps no compiled code between runs. Node's compile cache (module.enableCompileCache)
// lives in the shared temp folder, in a folder another user can make first, and Node loads the
// bytecode it finds there with no check of its owner: root would run code that user wrote. Here
// uid 65534 makes $TMPDIR/node-compile-cache first (0777, as anyone can in /tmp) and the built CLI
// runs twice as root: nothing of it may land there. Node 20 has no compile cache; Node 22.1+ (CI's
// second run, on Node 24) wrote and read back a folder of entries there before.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { OTHER_UID, plantingRequirement } from '../support/planted-files.js';
import { BUILT } from '../support/tmux.js';

const planting = plantingRequirement();
const runs = (planting === undefined && BUILT) || process.env.CI === 'true';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-launcher-'));
  chmodSync(dir, 0o1777); // a temp folder like /tmp: anyone may make a folder in it
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(runs)('the launcher', () => {
  it(`keeps no compile cache: a node-compile-cache folder uid ${OTHER_UID} made first in the temp folder stays empty (node ${process.version})`, async () => {
    if (planting !== undefined || !BUILT) throw new Error(`CI=true and this test ${planting ?? 'needs a built dist/ (npm run build)'}`);
    const planted = join(dir, 'node-compile-cache');
    execFileSync('setpriv', [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', 'sh', '-c', 'umask 0; mkdir "$1"', 'sh', planted]);
    const env = { PATH: process.env.PATH, HOME: join(dir, 'home'), TMPDIR: dir, XDG_CONFIG_HOME: join(dir, 'none'), XDG_STATE_HOME: join(dir, 'state'), NO_COLOR: '1' };
    for (let run = 0; run < 2; run++) {
      const r = await runCli(['check', '--source', 'claude', '--claude-dir', join(dir, 'no-claude'), '--json'], env);
      expect(r.stderr).toBe('');
    }
    expect(readdirSync(planted)).toEqual([]);
  });
});

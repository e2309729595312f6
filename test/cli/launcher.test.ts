// The launcher keeps compiled code between runs only where no one else can write. Node's compile
// cache (module.enableCompileCache) defaults to the shared temp folder, in a folder another user
// can make first, and Node loads the bytecode it finds there with no check of its owner: root
// would run code that user wrote. Here uid 65534 makes $TMPDIR/node-compile-cache first (0777, as
// anyone can in /tmp) and the built CLI runs twice as root: nothing of it may land there. Node 20
// has no compile cache; on Node 22.1+ (CI's second run, on Node 24) the cache is in
// $XDG_CACHE_HOME/ghostwatch/compile-cache, 0700, and not used at all when that folder is not ours.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import module from 'node:module';
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
    // Where it does keep it: its own folder, 0700, on a Node that has a compile cache.
    const own = join(dir, 'home/.cache/ghostwatch/compile-cache');
    if (typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function') {
      expect(readdirSync(own).length).toBeGreaterThan(0);
      expect(statSync(own).mode & 0o777).toBe(0o700);
    } else expect(existsSync(own)).toBe(false);
  });

  it(`uses no compile cache in a cache folder uid ${OTHER_UID} owns`, async () => {
    if (planting !== undefined || !BUILT) throw new Error(`CI=true and this test ${planting ?? 'needs a built dist/ (npm run build)'}`);
    const cache = join(dir, 'their-cache');
    mkdirSync(cache);
    chmodSync(cache, 0o1777);
    execFileSync('setpriv', [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', 'sh', '-c', 'umask 0; mkdir -p "$1/ghostwatch/compile-cache"', 'sh', cache]);
    const env = { PATH: process.env.PATH, HOME: join(dir, 'home2'), TMPDIR: dir, XDG_CACHE_HOME: cache, XDG_CONFIG_HOME: join(dir, 'none'), XDG_STATE_HOME: join(dir, 'state2'), NO_COLOR: '1' };
    const r = await runCli(['--version'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(readdirSync(join(cache, 'ghostwatch/compile-cache'))).toEqual([]);
  });
});

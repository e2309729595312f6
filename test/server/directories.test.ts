// list_directories and spawn_agent, Pi-DE's spawn dialog, against a temp $HOME: the folder browser
// stays inside home, and spawn refuses what is not a folder inside it and starts nothing then (what
// it starts and how it answers: spawn.test.ts).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveOptionsFrom } from '../../src/cli/serve.js';
import { UsageError } from '../../src/cli/args.js';
import { SPAWN_DISABLED } from '../../src/server/index.js';
import { cleanup, connectPastInit, roundTrip, serve, sleepMs, type RawClient } from './helpers.js';

let root: string;
let home: string;
let outside: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'gw-dirs-')));
  home = join(root, 'home');
  outside = join(root, 'outside');
  for (const dir of ['home/beta', 'home/alpha', 'home/.hidden', 'home/Zed', 'home/alpha/inner', 'home2/x', 'outside/secret']) {
    mkdirSync(join(root, dir), { recursive: true });
  }
  writeFileSync(join(home, 'file.txt'), 'x');
  symlinkSync(join(home, 'alpha'), join(home, 'link-in'));
  symlinkSync(outside, join(home, 'link-out'));
  symlinkSync(join(home, 'nowhere'), join(home, 'dangling'));
  symlinkSync(join(home, 'file.txt'), join(home, 'link-file'));
});

afterEach(async () => {
  await cleanup();
  rmSync(root, { recursive: true, force: true });
});

async function client(opts: Parameters<typeof serve>[0] = {}): Promise<RawClient> {
  const server = await serve({ homeDir: home, ...opts });
  return connectPastInit(server.url);
}

const call = (method: string, params?: unknown): string => JSON.stringify({ id: 'q', method, ...(params === undefined ? {} : { params }) });

describe('list_directories', () => {
  it('lists $HOME by default: visible directories, links only when they stay inside, sorted as bytes', async () => {
    const a = await client();
    const expected = { id: 'q', result: { current: home, directories: ['Zed', 'alpha', 'beta', 'link-in'] } };
    await roundTrip(a, call('list_directories'), expected);
    await roundTrip(a, call('list_directories', { path: 7 }), expected);
    await roundTrip(a, call('list_directories', { path: `${home}/alpha/..` }), expected);
    await roundTrip(a, call('list_directories', { path: join(home, 'link-in') }), { id: 'q', result: { current: join(home, 'alpha'), directories: ['inner'] } });
  });

  it('refuses anything that resolves outside $HOME, with hypivisor error strings', async () => {
    const a = await client();
    const outsideError = { id: 'q', error: 'Path resolves outside home directory' };
    await roundTrip(a, call('list_directories', { path: outside }), outsideError);
    await roundTrip(a, call('list_directories', { path: join(home, 'link-out') }), outsideError);
    await roundTrip(a, call('list_directories', { path: `${home}/../outside` }), outsideError);
    await roundTrip(a, call('list_directories', { path: join(root, 'home2') }), outsideError); // a prefix is not inside
    await roundTrip(a, call('list_directories', { path: join(home, 'missing') }), { id: 'q', error: 'Invalid path: No such file or directory (os error 2)' });
    await roundTrip(a, call('list_directories', { path: '' }), { id: 'q', error: 'Invalid path: No such file or directory (os error 2)' });
    await roundTrip(a, call('list_directories', { path: join(home, 'file.txt') }), { id: 'q', error: 'Cannot read directory: Not a directory (os error 20)' });
  });

  it('follows a $HOME that is itself a symlink', async () => {
    const linkedHome = join(root, 'home-link');
    symlinkSync(home, linkedHome);
    const a = await client({ homeDir: linkedHome });
    await roundTrip(a, call('list_directories', { path: join(linkedHome, 'beta') }), { id: 'q', result: { current: join(home, 'beta'), directories: [] } });
  });
});

describe('spawn_agent', () => {
  let record: string;
  let script: string;

  beforeEach(() => {
    record = join(root, 'spawned.txt');
    script = join(root, 'fake-pi.sh');
    writeFileSync(script, `#!/bin/sh\nprintf '%s\\n%s\\n' "$(pwd)" "$HYPIVISOR_WS" >> '${record}'\n`);
    chmodSync(script, 0o755);
  });

  it('is refused unless serve was started with --allow-spawn', async () => {
    const a = await client({ spawnCommand: script });
    await roundTrip(a, call('spawn_agent', { path: join(home, 'alpha') }), { id: 'q', error: SPAWN_DISABLED });
    await sleepMs(200);
    expect(existsSync(record)).toBe(false);
  });

  it('refuses paths outside $HOME without creating anything there, and reports hypivisor errors', async () => {
    const a = await client({ allowSpawn: true, spawnCommand: script });
    const outsideError = { id: 'q', error: 'Path resolves outside home directory' };
    await roundTrip(a, call('spawn_agent', { path: outside }), outsideError);
    await roundTrip(a, call('spawn_agent', { path: join(home, 'link-out') }), outsideError);
    await roundTrip(a, call('spawn_agent', { path: home, new_folder: '../outside/created' }), outsideError);
    await roundTrip(a, call('spawn_agent', { path: home, new_folder: join(outside, 'abs') }), outsideError);
    expect(existsSync(join(outside, 'created'))).toBe(false);
    expect(existsSync(join(outside, 'abs'))).toBe(false);
    await roundTrip(a, call('spawn_agent', { path: join(home, 'missing') }), { id: 'q', error: 'Path does not exist' });
    await roundTrip(a, call('spawn_agent'), { id: 'q', error: 'Missing params' });
    await roundTrip(a, call('spawn_agent', { path: join(home, 'file.txt') }), { id: 'q', error: 'Failed to spawn: Not a directory (os error 20)' });
    await sleepMs(200);
    expect(existsSync(record)).toBe(false);
  });
});

describe('serve flags', () => {
  it('--allow-spawn and --spawn-command reach the server options; --spawn-command alone is refused', () => {
    expect(serveOptionsFrom([])).toMatchObject({ allowSpawn: false, spawnCommand: 'pi' });
    expect(serveOptionsFrom(['--allow-spawn', '--spawn-command', '/opt/pi'])).toMatchObject({ allowSpawn: true, spawnCommand: '/opt/pi' });
    expect(() => serveOptionsFrom(['--spawn-command', '/opt/pi'])).toThrow(UsageError);
    expect(() => serveOptionsFrom(['--allow-spawn', '--spawn-command', ' '])).toThrow('--spawn-command needs a command');
  });
});

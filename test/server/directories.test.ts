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

/** The distinct error strings `method` answers for these paths (or params); fails on a result. */
async function errorsOf(a: RawClient, method: string, asked: readonly unknown[]): Promise<string[]> {
  const errors = new Set<string>();
  for (const one of asked) {
    a.send(call(method, typeof one === 'string' ? { path: one } : one));
    const reply = JSON.parse(await a.reply()) as { error?: string };
    expect(reply, JSON.stringify(one)).toHaveProperty('error');
    errors.add(reply.error!);
  }
  return [...errors];
}

describe('list_directories', () => {
  it('lists $HOME by default: visible directories, links only when they stay inside, sorted as bytes', async () => {
    const a = await client();
    const expected = { id: 'q', result: { current: home, directories: ['Zed', 'alpha', 'beta', 'link-in'] } };
    await roundTrip(a, call('list_directories'), expected);
    await roundTrip(a, call('list_directories', { path: 7 }), expected);
    await roundTrip(a, call('list_directories', { path: `${home}/alpha/..` }), expected);
    await roundTrip(a, call('list_directories', { path: join(home, 'link-in') }), { id: 'q', result: { current: join(home, 'alpha'), directories: ['inner'] } });
  });

  it('refuses anything that resolves outside $HOME or does not exist with one answer: nothing outside is told apart', async () => {
    symlinkSync(join(outside, 'nothing'), join(home, 'dangling-out'));
    const a = await client();
    const paths = [
      outside,
      join(outside, 'secret'),
      join(outside, 'missing'),
      join(outside, 'secret', 'missing'),
      join(home, 'link-out'),
      join(home, 'link-out', 'secret'),
      join(home, 'link-out', 'missing'),
      join(home, 'dangling-out'),
      `${home}/../outside`,
      join(root, 'home2'), // a prefix is not inside
      join(home, 'missing'),
      '',
    ];
    expect(await errorsOf(a, 'list_directories', paths)).toEqual(['Path does not exist or resolves outside home directory']);
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

  it('refuses paths outside $HOME or missing with one answer, without creating anything there', async () => {
    const a = await client({ allowSpawn: true, spawnCommand: script });
    const paths = [outside, join(outside, 'secret'), join(outside, 'missing'), join(home, 'link-out'), join(home, 'link-out', 'missing'), join(home, 'missing')];
    const folders = ['../outside/created', '../outside/secret', join(outside, 'abs')].map((new_folder) => ({ path: home, new_folder }));
    expect(await errorsOf(a, 'spawn_agent', [...paths.map((path) => ({ path })), ...folders])).toEqual([
      'Path does not exist or resolves outside home directory',
    ]);
    expect(existsSync(join(outside, 'created'))).toBe(false);
    expect(existsSync(join(outside, 'abs'))).toBe(false);
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

// Files a person names (config, --token-file, --ca-file) are read bounded: a FIFO, a folder or a
// huge file is one clear line (exit 2 for a file named by a flag; a config file is not used, the
// defaults apply), never a hang or a swallowed gigabyte.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBoundedSync, UnsafePath } from '../../src/os/safe-file.js';
import { runCli } from '../support/cli.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-bounded-'));
  execFileSync('mkfifo', [join(dir, 'fifo')]);
  writeFileSync(join(dir, 'huge'), '');
  truncateSync(join(dir, 'huge'), 2 * 1024 ** 3); // sparse: costs no disk
  mkdirSync(join(dir, 'folder'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ ...process.env, HYPI_TOKEN: '', XDG_STATE_HOME: join(dir, 'state'), NO_COLOR: '1', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' });

describe('files named by the person', () => {
  it.each([
    ['a FIFO', 'fifo', /not a regular file/],
    ['a folder', 'folder', /not a regular file/],
    ['a 2 GiB file', 'huge', /larger than/],
  ])('a config file that is %s: not used, one warning line, the defaults apply', async (_what, name, why) => {
    const configHome = join(dir, `config-${name}`);
    mkdirSync(join(configHome, 'ghostwatch'), { recursive: true });
    const config = join(configHome, 'ghostwatch', 'config.json');
    if (name === 'fifo') execFileSync('mkfifo', ['-m', '600', config]);
    else if (name === 'folder') mkdirSync(config);
    else {
      writeFileSync(config, '', { mode: 0o600 });
      truncateSync(config, 2 * 1024 ** 3);
    }
    const r = await runCli(['check'], { ...env(), HOME: configHome, XDG_CONFIG_HOME: configHome });
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^ghostwatch: warning: the config file ${config} is not used: `));
    expect(r.stderr).toMatch(why);
    expect(r.code).toBe(0);
  });

  it.each([
    ['check', 'fifo'],
    ['serve', 'fifo'],
    ['check', 'huge'],
    ['serve', 'huge'],
  ])('%s --token-file %s: one line, exit 2', async (command, name) => {
    const r = await runCli([command, '--token-file', join(dir, name), ...(command === 'serve' ? ['--port', '0'] : [])], { ...env(), XDG_CONFIG_HOME: join(dir, 'none') });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/token-file/);
    expect(r.stderr).toMatch(/not a regular file|larger than/);
  });

  it('readBoundedSync refuses a symlink when asked, and reads a small file whole', () => {
    writeFileSync(join(dir, 'small'), 'token\n');
    execFileSync('ln', ['-sf', join(dir, 'small'), join(dir, 'link')]);
    expect(readBoundedSync(join(dir, 'small'), 100).toString()).toBe('token\n');
    expect(readBoundedSync(join(dir, 'link'), 100).toString()).toBe('token\n');
    expect(() => readBoundedSync(join(dir, 'link'), 100, { noFollow: true })).toThrow(UnsafePath);
    expect(() => readBoundedSync(join(dir, 'small'), 3)).toThrow(/larger than 3 bytes/);
  });
});

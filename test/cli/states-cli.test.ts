// Through the real entry (bin/ghostwatch.js): `--no-color` before or after the command, config
// errors naming the config key, `--version` aligned in the help, "..." under a non-UTF-8 locale,
// and `check` not cutting reasons when its output is piped.
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { isUtf8Locale } from '../../src/core/sanitize.js';
import { runCli, type CliRun } from '../support/cli.js';
import { killAndReap, spawnSleep } from '../support/processes.js';
import { BUILT } from '../support/tmux.js';

let server: RegistryServer;
let state: string;
let config: string;
const sockets: WebSocket[] = [];
const kids: ChildProcess[] = [];
const LONG_ID = `ghost-${'x'.repeat(60)}-end`;

function gw(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(LC_ALL|LC_CTYPE|LANG)$/.test(k)));
  return runCli(args, { ...base, LANG: 'C.UTF-8', XDG_STATE_HOME: state, XDG_CONFIG_HOME: config, HYPIVISOR_WS: server.url, HYPI_TOKEN: '', ...env });
}

async function register(params: Record<string, unknown>): Promise<void> {
  const ws = new WebSocket(server.url);
  sockets.push(ws);
  await new Promise((r) => ws.once('open', r));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: 'r', method: 'register', params: { machine: hostname(), cwd: '/tmp', status: 'active', ...params } }));
  await done;
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function registerGhost(id: string): Promise<void> {
  const c = spawnSleep(60);
  kids.push(c);
  await new Promise((r) => c.once('spawn', r));
  const ws = new WebSocket(server.url);
  sockets.push(ws);
  await new Promise((r) => ws.once('open', r));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: 'r', method: 'register', params: { id, machine: hostname(), cwd: '/tmp', port: 6301, status: 'active', pid: c.pid } }));
  await done;
  await killAndReap(c);
}

describe('the locale decides the ellipsis', () => {
  it.each([
    [{ LANG: 'en_US.UTF-8' }, true],
    [{ LANG: 'C' }, false],
    [{ LC_ALL: 'C', LANG: 'en_US.UTF-8' }, false],
    [{ LC_CTYPE: 'de_DE.utf8', LANG: 'C' }, true],
    [{ LC_ALL: '', LC_CTYPE: 'POSIX', LANG: 'en_US.UTF-8' }, false],
    [{}, false],
  ])('%o: UTF-8 %s', (env, utf8) => expect(isUtf8Locale(env)).toBe(utf8));

  it('"..." takes its three cells in every cut: text, paths, ids, sanitize', async () => {
    const { useAsciiEllipsis, sanitize } = await import('../../src/core/sanitize.js');
    const { truncate, shortenPath, fit } = await import('../../src/ui/text.js');
    useAsciiEllipsis(true);
    try {
      expect(truncate('abcdef', 5)).toBe('ab...');
      expect(fit('abcdef', 5)).toBe('ab...');
      expect(truncate('abcdef', 2)).toBe('..');
      expect(shortenPath('/srv/a/b/c/d/very-long-project-name', undefined, 14)).toBe('/...oject-name');
      expect(sanitize('x'.repeat(20), 10)).toBe('xxxxxxx...');
    } finally {
      useAsciiEllipsis(false);
    }
    expect(truncate('abcdef', 5)).toBe('abcd…');
  });
});

describe.runIf(BUILT)('the CLI, end to end', () => {
  beforeEach(async () => {
    state = mkdtempSync(join(tmpdir(), 'gw-state-'));
    config = mkdtempSync(join(tmpdir(), 'gw-config-'));
    server = await startRegistryServer({ port: 0, log: () => {} });
    await registerGhost(LONG_ID);
    // Judged by its port: a reason long enough to pass the 120 columns of a terminal.
    await register({ id: 'pid-zero', pid: 0, port: await closedPort() });
  });
  afterEach(async () => {
    for (const w of sockets.splice(0)) w.terminate();
    await server.close();
    rmSync(state, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  });
  afterAll(() => {
    for (const c of kids) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('--no-color is taken before the command as well as after it', async () => {
    const before = await gw(['--no-color', 'check']);
    const after = await gw(['check', '--no-color']);
    expect(before.stderr).toBe('');
    expect(before.code).toBe(1);
    expect(after.code).toBe(1);
    expect(before.stdout.replace(/\d+ ?ms|\d+s/g, '')).toBe(after.stdout.replace(/\d+ ?ms|\d+s/g, ''));
    // Still a usage error for a command that is not one.
    expect((await gw(['--no-color', 'nonsense'])).stderr).toMatch(/unknown command "nonsense"/);
  });

  it('piped, check prints every reason whole; a cut id ends in "…" under UTF-8 and "..." under LANG=C', async () => {
    const utf8 = await gw(['check']);
    expect(utf8.stdout).toMatch(/pid \d+ is gone \(ESRCH\)/);
    const zero = utf8.stdout.split('\n').find((l) => /pid-zero/.test(l))!;
    expect(zero).toMatch(/pid 0 and negative pids address process groups; nothing listens on port \d+$/);
    expect(zero.length).toBeGreaterThan(120);
    for (const line of utf8.stdout.split('\n')) expect(line.endsWith('…')).toBe(false);
    expect(utf8.stdout).toMatch(/ghost-x+…/);
    const c = await gw(['check'], { LANG: 'C' });
    expect(c.stdout).toMatch(/ghost-x+\.\.\./);
    expect(c.stdout).not.toMatch(/…/);
    const all = await gw(['check'], { LC_ALL: 'C', LANG: 'en_US.UTF-8' });
    expect(all.stdout).not.toMatch(/…/);
  });

  it('a bad value in the config file names its key there, a bad flag names the flag', async () => {
    mkdirSync(join(config, 'ghostwatch'));
    const file = join(config, 'ghostwatch', 'config.json');
    writeFileSync(file, JSON.stringify({ interval: 0.001 }));
    const fromFile = await gw(['check']);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toBe(`ghostwatch: "interval" in ${file} needs a number of seconds from 0.05 to 60\n`);
    const fromFlag = await gw(['check', '--interval', '0.001']);
    expect(fromFlag.stderr).toBe('ghostwatch: --interval needs a number of seconds from 0.05 to 60\n');
    writeFileSync(file, JSON.stringify({ source: ['nope'] }));
    expect((await gw(['check'])).stderr).toMatch(/unknown "source" in .*config\.json "nope"/);
    // The registry's own settings too: the URL, the token file, the payload limit.
    writeFileSync(file, JSON.stringify({ registry: 'not a url' }));
    expect((await gw(['check'], { HYPIVISOR_WS: '' })).stderr).toBe(`ghostwatch: "registry" in ${file} is not a URL: "not a url"\n`);
    writeFileSync(file, JSON.stringify({ 'token-file': join(config, 'absent') }));
    expect((await gw(['check'])).stderr).toMatch(new RegExp(`^ghostwatch: "token-file" in ${file.replace(/[.]/g, '\\.')} .*absent: cannot read it`));
    writeFileSync(file, JSON.stringify({ 'max-payload': 10 }));
    expect((await gw(['check'])).stderr).toBe(`ghostwatch: "max-payload" in ${file} needs a whole number of bytes, at least 1024\n`);
    expect((await gw(['check', '--max-payload', '10'])).stderr).toBe('ghostwatch: --max-payload needs a whole number of bytes, at least 1024\n');
  });

  it('--version is aligned with the other options in --help', async () => {
    const help = (await gw(['--help'])).stdout.split('\n');
    const options = help.filter((l) => /^ {2}--[a-z]/.test(l));
    const starts = options.map((l) => /^ {2}--\S+(?: [A-Z=]+)? +/.exec(l)![0].length);
    expect(new Set(starts).size).toBe(1);
    expect(options.some((l) => /--version +print the version/.test(l))).toBe(true);
  });
});

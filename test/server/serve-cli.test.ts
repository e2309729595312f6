// `ghostwatch serve` as a real process: the listening line, a clean close on SIGTERM with the
// state file flushed, one line and exit 2 when the port is taken, and the help text.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, connectPastInit, node, refusal, registerText, roundTrip, serve } from './helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'ghostwatch.js');
const built = existsSync(join(root, 'dist', 'src', 'cli', 'main.js'));
if (!built) console.warn('serve-cli tests skipped: dist/ is missing; run `npm run build` first');

interface Run {
  readonly child: ChildProcess;
  stderr: string;
  stdout: string;
  readonly exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-serve-'));
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HYPI_TOKEN: '', ...env },
  });
  children.push(child);
  const result: Run = {
    child,
    stderr: '',
    stdout: '',
    exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (result.stderr += chunk));
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (result.stdout += chunk));
  return result;
}

/** Waits for the listening line and returns the URL in it. */
async function listening(r: Run): Promise<string> {
  const end = Date.now() + 5000;
  for (;;) {
    const m = /^ghostwatch serve: listening on (ws:\/\/\S+)$/m.exec(r.stderr);
    if (m?.[1]) return m[1];
    if (Date.now() > end || r.child.exitCode !== null) throw new Error(`no listening line; stderr: ${r.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!built)('ghostwatch serve (built CLI)', () => {
  it('listens, serves, and on SIGTERM closes cleanly with the state file flushed (exit 0)', async () => {
    const stateFile = join(dir, 'registry.json');
    const r = run(['serve', '--port', '0', '--state-file', stateFile, '--ttl', '5']);
    const url = await listening(r);
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws$/);
    const agent = await connectPastInit(url);
    await roundTrip(agent, registerText('r', node('n1', { pid: 4242 })), { id: 'r', result: { status: 'registered' } });
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
    expect((await agent.closed).code).toBe(1001);
    const snap = JSON.parse(readFileSync(stateFile, 'utf8')) as { version: number; nodes: { id: string; status: string }[] };
    expect(snap.version).toBe(1);
    expect(snap.nodes.map((n) => [n.id, n.status])).toEqual([['n1', 'offline']]);
    expect(r.stderr).toContain('serve: joined n1 box:9000 pid 4242');
  });

  it('exits 2 with one line when the port is in use', async () => {
    const taken = await serve();
    const r = run(['serve', '--port', String(taken.port)]);
    expect(await r.exit).toBe(2);
    expect(r.stderr).toBe(`ghostwatch serve: cannot listen: 127.0.0.1 port ${taken.port} is already in use\n`);
  });

  it('takes the token from --token-file (trimmed), never from a flag', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, '  s3cret/token \n');
    const r = run(['serve', '--port', '0', '--token-file', tokenFile, '--quiet']);
    const url = await listening(r);
    expect((await refusal(url)).status).toBe(401);
    const client = await connectPastInit(`${url}?token=${encodeURIComponent('s3cret/token')}`);
    await roundTrip(client, '{"id":"p","method":"ping"}', { id: 'p', result: { status: 'healthy', nodes: 0, version: '0.1.0' } });
    r.child.kill('SIGINT');
    expect(await r.exit).toBe(0);
    expect(r.stderr).toBe(`ghostwatch serve: listening on ${url}\n`); // --quiet: nothing else
    const flag = run(['serve', '--token', 'x']);
    expect(await flag.exit).toBe(2);
    expect(flag.stderr).toBe('ghostwatch serve: unknown option --token\n');
  });

  it('takes the token from HYPI_TOKEN when there is no --token-file', async () => {
    const r = run(['serve', '--port', '0', '--quiet'], { HYPI_TOKEN: 'from-env' });
    const url = await listening(r);
    expect((await refusal(`${url}?token=wrong`)).status).toBe(401);
    await connectPastInit(`${url}?token=from-env`);
    r.child.kill('SIGHUP');
    expect(await r.exit).toBe(0);
  });

  it('--help prints usage with examples and exits 0; the main help lists serve', async () => {
    const help = run(['serve', '--help']);
    expect(await help.exit).toBe(0);
    expect(help.stdout).toContain('Usage: ghostwatch serve [options]');
    expect(help.stdout).toContain('--state-file PATH');
    expect(help.stdout).toContain('Examples:');
    const main = run(['--help']);
    expect(await main.exit).toBe(0);
    expect(main.stdout).toMatch(/^\s+serve\s+run the embedded registry/m);
  });

  it.each([
    [['serve', '--port', '70000'], '--port needs a whole number from 0 to 65535, got 70000'],
    [['serve', '--ttl', '0'], '--ttl needs a number of seconds above 0'],
    [['serve', 'extra'], 'serve takes no arguments, got "extra"'],
  ])('rejects %j with one line and exit 2', async (args, said) => {
    const r = run(args);
    expect(await r.exit).toBe(2);
    expect(r.stderr).toBe(`ghostwatch serve: ${said}\n`);
  });
});

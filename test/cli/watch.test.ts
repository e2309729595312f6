// The monitor's command line, run as a real process: without a terminal it prints one report.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { runCli, type CliRun } from '../support/cli.js';
import { killAndReap, spawnSleep } from '../support/processes.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runCli(args, { ...process.env, XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'gw-cli-')), HYPIVISOR_WS: '', HYPI_TOKEN: '', ...env });
}

let server: RegistryServer;
let clean: RegistryServer;
const kids: ChildProcess[] = [];
const sockets: WebSocket[] = [];

async function register(s: RegistryServer, id: string, pid: number): Promise<void> {
  const ws = new WebSocket(s.url);
  sockets.push(ws);
  await new Promise((r) => ws.once('open', r));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: 'r', method: 'register', params: { id, machine: hostname(), cwd: '/tmp', port: 6000 + sockets.length, status: 'active', pid } }));
  await done;
}

describe.runIf(built)('ghostwatch without a terminal', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    clean = await startRegistryServer({ port: 0, log: () => {} });
    const live = spawnSleep(60);
    const dead = spawnSleep(60);
    kids.push(live, dead);
    await register(server, 'alive-1', live.pid!);
    await register(clean, 'alive-2', live.pid!);
    await register(server, 'dead-1', dead.pid!);
    await killAndReap(dead);
  });
  afterAll(async () => {
    for (const w of sockets) w.terminate();
    for (const k of kids) k.kill('SIGKILL');
    await server?.close();
    await clean?.close();
  });

  it('prints one report, problems first, a summary last, and exits 1 on problems', async () => {
    const r = await run(['--registry', server.url]);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^source hypivisor ws:\/\/127\.0\.0\.1:\d+\/ws: connected$/);
    const body = lines.filter((l) => /session/.test(l));
    expect(body[0]).toMatch(/^!ghost\s+session\s+dead-1\s+\d+\s+pid \d+ is gone \(ESRCH\)$/);
    expect(body[1]).toMatch(/^ live\s+session\s+alive-1/);
    expect(lines.at(-1)).toBe('1 live, 1 ghost (1 problem)');
    expect(r.stderr).toContain('not a terminal: printed one report instead of the live view');
    expect(r.stdout).not.toMatch(/\u001b/); // no escape sequences in a pipe
  });

  it('exits 0 when there is no problem, 2 when the registry is unreachable', async () => {
    expect((await run(['--registry', clean.url])).code).toBe(0);
    const down = await run(['--registry', 'ws://127.0.0.1:9/ws']);
    expect(down.code).toBe(2);
    expect(down.stdout).toBe('');
    expect(down.stderr).toMatch(/hypivisor at ws:\/\/127\.0\.0\.1:9\/ws: connection refused: nothing listens/);
  });

  it('rejects bad flags and values in one line with exit 2', async () => {
    for (const [args, message] of [
      [['--frobnicate'], 'ghostwatch: unknown option --frobnicate'],
      [['--interval', 'soon'], 'ghostwatch: --interval needs a non-negative number, got "soon"'],
      [['--interval', '0'], 'ghostwatch: --interval needs a number of seconds from 0.05 to 60'],
      [['--source', 'zookeeper'], 'ghostwatch: unknown --source "zookeeper" (choose from hypivisor, agentctl, claude)'],
      [['--source', 'claude,zookeeper'], 'ghostwatch: unknown --source "zookeeper" (choose from hypivisor, agentctl, claude)'],
      [['--source', ','], 'ghostwatch: --source needs a registry: hypivisor, agentctl or claude'],
      [['--registry', 'http://x/ws'], 'ghostwatch: the registry URL must start with ws:// or wss://, got "http://"'],
      [['bogus'], 'ghostwatch: unknown command "bogus" (try --help)'],
    ] as const) {
      const r = await run([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim()).toBe(message);
    }
  });

  it('--help lists the commands and the monitor options; watch --help shows the keys', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/watch\s+the live monitor/);
    expect(help.stdout).toMatch(/serve\s+run the embedded registry/);
    expect(help.stdout).toMatch(/--read-only/);
    const watch = await run(['watch', '--help']);
    expect(watch.stdout).toMatch(/Keys: j\/k move/);
  });
});

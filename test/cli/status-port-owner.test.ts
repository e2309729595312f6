// `status` judges a pid-less entry as `check` does: by the process serving its port (issue 12 §4).
// An entry registered an hour ago whose port is served by a process started just now is `reused`
// in both; before, status looked only at the loopback connect and said `gw ok`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { node, startScriptedRegistry, type ScriptedRegistry } from '../support/scripted-registry.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
let registry: ScriptedRegistry;
let dir: string;
const listener = spawn(process.execPath, ['-e', "require('net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { stdio: ['ignore', 'pipe', 'ignore'] });

describe.runIf(built && process.platform === 'linux')('status and check agree on a pid-less entry', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-status-owner-'));
    const port = Number(await new Promise<string>((r) => listener.stdout!.once('data', (d: Buffer) => r(d.toString().trim()))));
    const now = Math.floor(Date.now() / 1000);
    const nodes = [node('old-session', { machine: hostname(), port, registered_at: now - 3600, last_seen: now })];
    registry = await startScriptedRegistry({ init: () => ({ event: 'init', nodes, protocol_version: '1', claims: [] }) });
  });
  afterAll(async () => {
    listener.kill('SIGKILL');
    await registry?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('both say reused, naming the process that serves the port', async () => {
    const env = { ...process.env, HOME: dir, HYPIVISOR_WS: registry.url, HYPI_TOKEN: '', XDG_CONFIG_HOME: join(dir, 'none'), XDG_STATE_HOME: dir, NO_COLOR: '1' };
    const check = await runCli(['check', '--json'], env);
    const finding = (JSON.parse(check.stdout) as { findings: { id: string; verdict: string; reason: string }[] }).findings[0];
    expect(finding).toMatchObject({ id: 'old-session', verdict: 'reused', reason: expect.stringContaining(`served by pid ${listener.pid}`) });
    expect((await runCli(['status'], env)).stdout).toBe('gw 1 reused\n');
  });
});

// Every monitor flag and config key through the real CLI entry (argv → behaviour), against a
// scripted registry on 127.0.0.1 with real children: each assertion fails when its flag or key
// is ignored, read in the wrong unit, or loses its place in flags > environment > file.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stageZombie } from '../../src/demo/zombie.js';
import { spawnSleep } from '../support/processes.js';
import { runCli, type CliRun } from '../support/cli.js';
import { node, startScriptedRegistry, type ScriptedRegistry } from '../support/scripted-registry.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
const CLOSED = 'ws://127.0.0.1:9/ws';
const ALIAS = 'gw-alias-box';

let registry: ScriptedRegistry;
let dir: string;
let configFile: string;
const kids: ChildProcess[] = [];

function gw(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return runCli(args, {
    ...process.env,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    // No other registry of this machine's user: the test's registry is all there is.
    HOME: join(dir, 'home'),
    HYPIVISOR_WS: registry.url,
    HYPI_TOKEN: '',
    NO_COLOR: '1',
    ...env,
  });
}

function config(keys: Record<string, unknown>): void {
  writeFileSync(configFile, JSON.stringify(keys));
}

/** `check --json` → id → verdict. */
async function verdicts(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Record<string, string>> {
  const r = await gw(['check', '--json', '--timeout', '5', ...args], env);
  expect(r.stderr).toBe('');
  const out: { findings: { id: string; verdict: string }[] } = JSON.parse(r.stdout);
  return Object.fromEntries(out.findings.map((f) => [f.id, f.verdict]));
}

describe.runIf(built)('every monitor flag and config key, end to end', () => {
  beforeAll(async () => {
    const live = spawnSleep(120);
    const placeholder = spawnSleep(120);
    // A zombie, not a killed-and-reaped pid: a reaped pid can be recycled by any process on a busy
    // machine before the test looks (it was, once, in CI); an unreaped one cannot.
    const dead = await stageZombie();
    kids.push(live, placeholder, dead.parent);
    const now = Math.floor(Date.now() / 1000);
    // Registered in the second the placeholder started (within the start tolerance: not `reused`).
    const registeredAt = now;
    const nodes = [
      node('alive', { machine: hostname(), pid: live.pid, last_seen: now }),
      // A zombie on another name of this host: `remote` unless that name is an alias.
      node('on-alias', { machine: ALIAS, pid: dead.pid, last_seen: now }),
      // A live placeholder, at least 2.5 s old when checked: `pending` past a TTL of 1 s, live under 600 s.
      node('pending-old', { machine: hostname(), pid: placeholder.pid, port: 4001, registered_at: registeredAt, last_seen: now }),
    ];
    registry = await startScriptedRegistry({ init: () => ({ event: 'init', nodes, protocol_version: '1', claims: [] }) });
    await new Promise((r) => setTimeout(r, registeredAt * 1000 + 2_500 - Date.now()));
  });
  beforeEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = mkdtempSync(join(tmpdir(), 'gw-flags-'));
    mkdirSync(join(dir, 'config/ghostwatch'), { recursive: true });
    configFile = join(dir, 'config/ghostwatch/config.json');
  });
  afterAll(async () => {
    for (const k of kids) k.kill('SIGKILL');
    await registry?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('--host-alias: an entry on the alias is checked locally (check, status); the file key too', async () => {
    expect((await verdicts([]))['on-alias']).toBe('remote');
    expect((await verdicts(['--host-alias', ALIAS]))['on-alias']).toBe('zombie');
    expect((await verdicts(['--host-alias', 'other', `--host-alias=${ALIAS}`]))['on-alias']).toBe('zombie');
    expect((await gw(['status', '--host-alias', ALIAS])).stdout).toBe('gw 1 zombie\n');
    expect((await gw(['status'])).stdout).toBe('gw ok\n');
    config({ 'host-alias': ALIAS });
    expect((await verdicts([]))['on-alias']).toBe('zombie');
    config({ 'host-alias': ['x', ALIAS] });
    expect((await gw(['status', '--format', 'json'])).stdout).toMatch(/"problems":1,/);
    // A flag replaces the file's list.
    expect((await verdicts(['--host-alias', 'other']))['on-alias']).toBe('remote');
  });

  it('--pending-ttl is in seconds: 1 s makes a 2.5 s old placeholder pending, 600 s does not (check, status, file)', async () => {
    expect((await verdicts([]))['pending-old']).toBe('live');
    expect((await verdicts(['--pending-ttl', '1']))['pending-old']).toBe('pending');
    // Read as milliseconds, 600 would be 0.6 s: pending.
    expect((await verdicts(['--pending-ttl', '600']))['pending-old']).toBe('live');
    expect((await gw(['status'])).stdout).toBe('gw ok\n');
    expect((await gw(['status', '--pending-ttl', '1'])).stdout).toBe('gw 1 pending\n');
    expect((await gw(['status', '--pending-ttl', '600'])).stdout).toBe('gw ok\n');
    config({ 'pending-ttl': 1 });
    expect((await verdicts([]))['pending-old']).toBe('pending');
    expect((await gw(['status'])).stdout).toBe('gw 1 pending\n');
    // The flag wins over the file.
    expect((await verdicts(['--pending-ttl', '600']))['pending-old']).toBe('live');
    const zero = await gw(['check', '--pending-ttl', '0']);
    expect([zero.code, zero.stderr]).toEqual([2, 'ghostwatch: --pending-ttl needs a positive number of seconds\n']);
  });

  it('--registry over HYPIVISOR_WS over the file\'s "registry"', async () => {
    config({ registry: registry.url });
    expect((await gw(['check'], { HYPIVISOR_WS: '' })).code).toBe(0);
    const env = await gw(['check', '--timeout', '2'], { HYPIVISOR_WS: CLOSED });
    expect([env.code, env.stderr]).toEqual([2, expect.stringMatching(/^ghostwatch: hypivisor at ws:\/\/127\.0\.0\.1:9\/ws: connection refused/)]);
    expect((await gw(['check', '--registry', registry.url], { HYPIVISOR_WS: CLOSED })).code).toBe(0);
    config({ registry: CLOSED });
    expect((await gw(['status', '--registry', registry.url], { HYPIVISOR_WS: '' })).stdout).toBe('gw ok\n');
    expect((await gw(['status', '--timeout', '0.5'], { HYPIVISOR_WS: '' })).stdout).toBe('gw ?\n');
  });

  it('--token-file over HYPI_TOKEN over the file\'s "token-file"', async () => {
    const flagToken = join(dir, 'flag-token');
    const fileToken = join(dir, 'file-token');
    writeFileSync(flagToken, 'from-flag\n');
    writeFileSync(fileToken, 'from-file\n');
    const tokenOfLastRun = (): string | null => new URL(registry.upgrades.at(-1)!, 'ws://x').searchParams.get('token');
    await gw(['check', '--token-file', flagToken], { HYPI_TOKEN: 'from-env' });
    expect(tokenOfLastRun()).toBe('from-flag');
    await gw(['status', '--token-file', flagToken]);
    expect(tokenOfLastRun()).toBe('from-flag');
    config({ 'token-file': fileToken });
    await gw(['check']);
    expect(tokenOfLastRun()).toBe('from-file');
    await gw(['check'], { HYPI_TOKEN: 'from-env' });
    expect(tokenOfLastRun()).toBe('from-env');
    await gw(['check', '--token-file', flagToken], { HYPI_TOKEN: 'from-env' });
    expect(tokenOfLastRun()).toBe('from-flag');
  });

  it('--source, --claude-dir, --claude-sessions-dir: only the named registries are read (flags and file)', async () => {
    const claude = join(dir, 'claude');
    const claims = join(dir, 'claims');
    mkdirSync(join(claude, 'projects'), { recursive: true });
    mkdirSync(claims);
    const names = (r: CliRun): string[] => JSON.parse(r.stdout).sources.map((s: { name: string; url: string }) => `${s.name} ${s.url}`);
    // Named, hypivisor must answer: here it is unreachable, exit 2. Not named, it is looked for: absent, exit 0.
    expect((await gw(['check', '--timeout', '2', '--source', 'hypivisor'], { HYPIVISOR_WS: CLOSED })).code).toBe(2);
    expect((await gw(['check', '--timeout', '2'], { HYPIVISOR_WS: CLOSED })).code).toBe(0);
    const flags = await gw(['check', '--json', '--source', 'claude', '--claude-dir', claude, '--claude-sessions-dir', claims], { HYPIVISOR_WS: CLOSED });
    expect(flags.code).toBe(0);
    const read = names(flags);
    expect(read.length).toBeGreaterThan(0);
    expect(read.join('\n')).not.toMatch(/hypivisor/);
    expect(read.join('\n')).toContain(claude);
    expect(read.join('\n')).toContain(claims);
    config({ source: 'claude', 'claude-dir': claude, 'claude-sessions-dir': claims });
    const file = await gw(['check', '--json'], { HYPIVISOR_WS: CLOSED });
    expect([file.code, names(file)]).toEqual([0, read]);
    // The flag wins over the file: hypivisor again, and its entries.
    expect((await verdicts(['--source', 'hypivisor']))['alive']).toBe('live');
    const bad = await gw(['check', '--source', 'hypivisor,nope']);
    expect([bad.code, bad.stderr]).toEqual([2, 'ghostwatch: unknown --source "nope" (choose from hypivisor, agentctl, claude)\n']);
  });

  it('--interval and the file\'s "interval" are checked in seconds', async () => {
    const tooFast = await gw(['check', '--interval', '0.01']);
    expect([tooFast.code, tooFast.stderr]).toEqual([2, 'ghostwatch: --interval needs a number of seconds from 0.05 to 60\n']);
    expect((await gw(['check', '--interval', '61'])).code).toBe(2);
    config({ interval: 100 });
    // The value came from the file: the error names its key there, not a flag that was never given.
    expect((await gw(['check'])).stderr).toMatch(/^ghostwatch: "interval" in \S+config\.json needs a number of seconds from 0\.05 to 60\n$/);
    expect((await gw(['check', '--interval', '1'])).code).toBe(0);
  });
});

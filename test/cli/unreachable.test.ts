// `check` when a registry it was told to read cannot be read: exit 2 and one line naming the
// cause, never "no entries (0 problems)"; with several sources, the others' rows are still
// reported. (Not named, the same registry is looked for and found absent: test/cli/discovery.test.ts.)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../support/cli.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
let dir: string;
let closedUrl: string;

/** Named with --source: a registry that must answer. */
function gw(args: string[]): Promise<CliRun> {
  const env = { ...process.env, HOME: join(dir, 'home'), XDG_STATE_HOME: join(dir, 'state'), XDG_CONFIG_HOME: join(dir, 'config'), HYPIVISOR_WS: closedUrl, HYPI_TOKEN: '', NO_COLOR: '1' };
  return runCli(args.includes('--source') ? args : [...args, '--source', 'hypivisor'], env);
}

describe.runIf(built)('check against a registry that cannot be read', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-unreach-'));
    // A port that was just ours and is closed now: nothing listens there.
    const s = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    closedUrl = `ws://127.0.0.1:${(s.address() as AddressInfo).port}/ws`;
    await new Promise((r) => s.close(r));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 2 with one line naming the cause, and no "no entries"', async () => {
    const r = await gw(['check', '--timeout', '3']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^ghostwatch: hypivisor at ${closedUrl}: connection refused: `))]);
    expect(r.stdout + r.stderr).not.toMatch(/no entries/);
  });

  it("never shows a URL's password, in the line or in the JSON", async () => {
    const withPassword = closedUrl.replace('ws://', 'ws://ana:hunter2@');
    for (const args of [['check'], ['check', '--json']]) {
      const r = await runCli([...args, '--timeout', '3', '--registry', withPassword], { ...process.env, XDG_CONFIG_HOME: join(dir, 'none'), NO_COLOR: '1' });
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toContain('hunter2');
      expect(r.stdout + r.stderr).toContain('ana:***@');
    }
  });

  it('--json: connected false, the cause and the error, exit 2', async () => {
    const r = await gw(['check', '--json', '--timeout', '3']);
    expect(r.code).toBe(2);
    const out = JSON.parse(r.stdout);
    expect(out.sources).toEqual([expect.objectContaining({ name: 'hypivisor', connected: false, status: 'unreachable', cause: 'connection refused', error: expect.stringContaining('ECONNREFUSED'), eviction: { available: false, why: expect.stringContaining('not connected') } })]);
  });

  it('--json: every source has its eviction field, whatever its state (a daemon that never answers, a refused registry, a folder)', async () => {
    const claudeDir = join(dir, 'claude-every');
    mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
    // agentctl's socket accepts and never answers: the source is still waiting for its first read.
    const socketPath = join(dir, 'deaf-agentctl.sock');
    const held: import('node:net').Socket[] = [];
    const deaf = createServer((c) => void held.push(c)).listen(socketPath);
    await new Promise((r) => deaf.once('listening', r));
    try {
      const r = await gw(['check', '--json', '--timeout', '2', '--source', 'hypivisor', '--source', 'agentctl', '--agentctl-socket', socketPath, '--source', 'claude', '--claude-dir', claudeDir]);
      const out = JSON.parse(r.stdout) as { sources: { name: string; eviction?: { available: boolean; why?: string } }[] };
      expect(out.sources.map((s) => s.name).sort()).toEqual(['agentctl', 'claude', 'claude-sessions', 'claude-view', 'hypivisor']);
      for (const s of out.sources) expect(s.eviction, s.name).toMatchObject({ available: expect.any(Boolean) });
      expect(out.sources.find((s) => s.name === 'agentctl')!.eviction).toMatchObject({ available: false, why: expect.stringMatching(/no answer from agentctl's daemon yet/) });
    } finally {
      for (const c of held) c.destroy();
      await new Promise((r) => deaf.close(r));
    }
  });

  it('with several sources, the one down is named and the others are reported', async () => {
    const claudeDir = join(dir, '.claude');
    const claimsDir = join(dir, '.claude-sessions');
    mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
    mkdirSync(claimsDir, { recursive: true });
    const now = new Date().toISOString();
    writeFileSync(join(claimsDir, 'remote.json'), readFileSync(join(ROOT, 'test/fixtures/claude/claude-sessions/remote.json'), 'utf8').replaceAll('{{NOW_ISO}}', now));
    const r = await gw(['check', '--timeout', '3', '--source', 'hypivisor', '--source', 'claude', '--claude-dir', claudeDir, '--claude-sessions-dir', claimsDir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('dddd0000-0000-4000-8000-00000000000d');
    expect(r.stdout).not.toMatch(/source hypivisor/);
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/\(0 problems\); not read: hypivisor$/);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^ghostwatch: hypivisor at .*: connection refused/)]);
  });
});

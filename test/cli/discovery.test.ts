// With no registry named, every command reads what this host has: Claude Code's folders
// ($CLAUDE_CONFIG_DIR, ~/.claude, --claude-dir profiles), agentctl's files, hypivisor if it
// answers; what is not there is said, not an error. Named (--source, --registry), a registry
// must answer (exit 2 as before). Real files in temp homes, real processes for the pids.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, watchingEveryRegistry } from '../../src/cli/settings.js';
import { killAndReap, spawnSleep } from '../support/processes.js';
import { runCli, type CliRun } from '../support/cli.js';
import { claudeRecord } from '../support/claude-records.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
const roots: string[] = [];
let closedUrl: string;

function tempRoot(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-discover-'));
  roots.push(dir);
  return dir;
}

/** Field 22 of /proc/<pid>/stat (after the last ')'), as Claude Code writes it in procStart. */
function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** `<folder>/sessions/<pid>.json` written as Claude Code 2.1.197 writes it (protocols.md §4). */
function sessionFile(folder: string, pid: number, sessionId: string, start: string): void {
  mkdirSync(join(folder, 'sessions'), { recursive: true });
  const now = Date.now();
  const record = claudeRecord(pid, sessionId, { startedAt: now, procStart: start, updatedAt: now, statusUpdatedAt: now }, now);
  writeFileSync(join(folder, 'sessions', `${pid}.json`), JSON.stringify(record));
}

const live = spawnSleep(600);
const livePid = live.pid as number;
let deadPid: number;
let deadStart: string;

/** The CLI in a home of its own; hypivisor (not named) at an address where nothing listens. */
function gw(home: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const { CLAUDE_CONFIG_DIR: _ignored, ...base } = process.env;
  return runCli(args, {
    ...base,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.local/state'),
    HYPIVISOR_WS: closedUrl,
    HYPI_TOKEN: '',
    NO_COLOR: '1',
    ...env,
  });
}

interface CheckJson {
  lookedFor?: { found: { name: string; where: string }[]; absent: { name: string; where: string }[] };
  sources: { name: string; url: string; status: string }[];
  findings: { source: string; id: string; verdict: string }[];
}

describe.runIf(built)('every registry on this host, with none named', () => {
  beforeAll(async () => {
    const doomed = spawnSleep(600);
    deadPid = doomed.pid as number;
    await new Promise((r) => setTimeout(r, 50));
    deadStart = procStart(deadPid);
    await killAndReap(doomed); // SIGKILL: Claude Code leaves its file behind
    // A port that was just ours and is closed now: nothing listens there.
    const s = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => s.once('listening', r));
    closedUrl = `ws://127.0.0.1:${(s.address() as AddressInfo).port}/ws`;
    await new Promise((r) => s.close(r));
  });
  afterAll(() => {
    live.kill('SIGKILL');
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  it('finds ~/.claude/sessions with no flag: exit 0 for a live session, 1 once a ghost is there', async () => {
    const home = tempRoot();
    sessionFile(join(home, '.claude'), livePid, 'live-one', procStart(livePid));
    const ok = await gw(home, ['check']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const lines = ok.stdout.split('\n');
    expect(lines[0]).toBe(
      `registries on this host (none named): found claude; not here: hypivisor (${closedUrl}), agentctl (${home}/.agentctl/agentctl.sock), ` +
        `claude-view (${home}/.claude/live-monitor-pids.json), claude-sessions (${home}/.claude-sessions)`,
    );
    // One registry found: no SOURCE column, as with one named.
    expect(ok.stdout).toMatch(new RegExp(`^ live\\s+session live-one\\s+${livePid}`, 'm'));

    sessionFile(join(home, '.claude'), deadPid, 'dead-one', deadStart);
    const ghost = await gw(home, ['check', '--json']);
    expect(ghost.code).toBe(1);
    const json = JSON.parse(ghost.stdout) as CheckJson;
    expect(json.findings.map((f) => [f.source, f.id, f.verdict]).sort()).toEqual([
      ['claude', 'dead-one', 'ghost'],
      ['claude', 'live-one', 'live'],
    ]);
    expect(json.lookedFor?.found).toEqual([{ name: 'claude', where: join(home, '.claude/sessions') }]);
    expect(json.sources.find((s) => s.name === 'hypivisor')).toMatchObject({ status: 'absent', url: closedUrl });
    // status and reap read the same registries.
    expect(await gw(home, ['status'])).toMatchObject({ code: 1, stdout: 'gw 1 ghost\n' });
    const reap = await gw(home, ['reap', '--yes']);
    expect(reap.stdout).toMatch(new RegExp(`^evicted\\s+session dead-one pid ${deadPid}: moved `, 'm'));
    expect(existsSync(join(home, '.claude/sessions', `${deadPid}.json`))).toBe(false);
    expect(reap.code).toBe(0);
  });

  it('nothing at all: exit 0, and a line saying what was looked for where', async () => {
    const home = tempRoot();
    const r = await gw(home, ['check']);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(
      `registries on this host (none named): found none; not here: hypivisor (${closedUrl}), agentctl (${home}/.agentctl/agentctl.sock), ` +
        `claude (${home}/.claude), claude-sessions (${home}/.claude-sessions)\n\nno entries (0 problems)\n`,
    );
    expect(await gw(home, ['status'])).toMatchObject({ code: 0, stdout: 'gw -\n' });
    expect(await gw(home, ['status', '--format', 'plain'])).toMatchObject({ code: 0, stdout: expect.stringMatching(/^no registry on this host; looked for hypivisor \(/) });
    expect(await gw(home, ['reap', '--yes'])).toMatchObject({ code: 0, stdout: 'nothing to reap\n' });
  });

  it('a registry named keeps the strict rule: --source hypivisor with nothing listening is exit 2, as is --registry', async () => {
    const home = tempRoot();
    sessionFile(join(home, '.claude'), livePid, 'live-one', procStart(livePid));
    for (const named of [['--source', 'hypivisor'], ['--registry', closedUrl]]) {
      const r = await gw(home, ['check', ...named]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^ghostwatch: hypivisor at ${closedUrl}: connection refused`));
      // Only what was named is read: the Claude folder is not.
      expect(r.stdout).not.toContain('live-one');
    }
    expect(await gw(home, ['status', '--source', 'hypivisor'])).toMatchObject({ code: 2, stdout: 'gw ?\n' });
  });

  it('reads $CLAUDE_CONFIG_DIR, and ~/.claude beside it when both are there, each source named by its folder', async () => {
    const home = tempRoot();
    const profile = join(home, 'work-profile');
    sessionFile(profile, deadPid, 'in-profile', deadStart);
    const only = JSON.parse((await gw(home, ['check', '--json'], { CLAUDE_CONFIG_DIR: profile })).stdout) as CheckJson;
    expect(only.findings.map((f) => [f.source, f.id, f.verdict])).toEqual([['claude', 'in-profile', 'ghost']]);
    expect(only.sources.find((s) => s.name === 'claude')?.url).toBe(join(profile, 'sessions'));

    sessionFile(join(home, '.claude'), livePid, 'in-home', procStart(livePid));
    const both = await gw(home, ['check', '--json'], { CLAUDE_CONFIG_DIR: profile });
    expect(both.code).toBe(1);
    const json = JSON.parse(both.stdout) as CheckJson;
    expect(json.sources.filter((s) => s.name.startsWith('claude')).map((s) => [s.name, s.url])).toEqual([
      ['claude', join(profile, 'sessions')],
      ['claude:claude', join(home, '.claude/sessions')],
    ]);
    expect(json.findings.map((f) => [f.source, f.id, f.verdict]).sort()).toEqual([
      ['claude', 'in-profile', 'ghost'],
      ['claude:claude', 'in-home', 'live'],
    ]);
  });

  it('--claude-dir twice: both profiles read, the second named claude:<folder>; its ghost is reaped and restored', async () => {
    const home = tempRoot();
    const first = join(home, 'one', '.claude');
    const second = join(home, 'two', '.claude-team');
    sessionFile(first, livePid, 'first-live', procStart(livePid));
    sessionFile(second, deadPid, 'second-dead', deadStart);
    const args = ['--source', 'claude', '--claude-dir', first, '--claude-dir', second];
    const r = await gw(home, ['check', '--json', ...args]);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as CheckJson;
    expect(json.lookedFor).toBeUndefined();
    expect(json.sources.map((s) => s.name)).toEqual(['claude', 'claude:claude-team', 'claude-view', 'claude-view:claude-team', 'claude-sessions']);
    expect(json.findings.map((f) => [f.source, f.id, f.verdict]).sort()).toEqual([
      ['claude', 'first-live', 'live'],
      ['claude:claude-team', 'second-dead', 'ghost'],
    ]);
    const text = await gw(home, ['check', ...args]);
    expect(text.stdout).toMatch(new RegExp(`^source claude:claude-team ${second}/sessions: watching$`, 'm'));

    const reap = await gw(home, ['reap', '--yes', ...args]);
    expect(reap.stdout).toMatch(/^evicted\s+session claude:claude-team second-dead pid \d+: moved /m);
    const file = join(second, 'sessions', `${deadPid}.json`);
    expect(existsSync(file)).toBe(false);
    const listed = await gw(home, ['restore']);
    expect(listed.stdout).toMatch(/claude:claude-team session second-dead/);
    expect((await gw(home, ['restore', 'second-dead'])).code).toBe(0);
    expect(existsSync(file)).toBe(true);
    // The same two folders from the config file, as a list.
    mkdirSync(join(home, '.config/ghostwatch'), { recursive: true });
    writeFileSync(join(home, '.config/ghostwatch/config.json'), JSON.stringify({ 'claude-dir': [first, second] }));
    const fromFile = JSON.parse((await gw(home, ['check', '--json'])).stdout) as CheckJson;
    expect(fromFile.lookedFor?.found.map((f) => f.name)).toEqual(['claude', 'claude:claude-team']);
    expect(fromFile.findings.map((f) => f.source).sort()).toEqual(['claude', 'claude:claude-team']);
  });

  it("agentctl's files are found when its daemon is down; an empty folder is not agentctl", async () => {
    const home = tempRoot();
    mkdirSync(join(home, '.agentctl'));
    const empty = await gw(home, ['check', '--json']);
    expect(empty.code).toBe(0);
    expect((JSON.parse(empty.stdout) as CheckJson).lookedFor?.absent.map((a) => a.name)).toContain('agentctl');
    writeFileSync(join(home, '.agentctl/state.json'), JSON.stringify({ sessions: {}, version: 1 }));
    const found = await gw(home, ['check', '--json']);
    expect(found.code).toBe(0);
    const json = JSON.parse(found.stdout) as CheckJson;
    expect(json.lookedFor?.found.map((f) => f.name)).toEqual(['agentctl']);
    expect(json.sources.find((s) => s.name === 'agentctl')?.status).toBe('files-only');
  });
});

describe('the settings of a run with no registry named', () => {
  const settingsIn = (home: string, argv: string[], env: NodeJS.ProcessEnv = {}) => {
    const options = commandOptions(argv, MONITOR_OPTIONS, () => '', { XDG_CONFIG_HOME: join(home, 'none'), ...env });
    return monitorSettings(options!, env, home);
  };

  it('looks for every registry, reads the ones there, and names the rest with where they were looked for', () => {
    const home = tempRoot();
    mkdirSync(join(home, '.claude-sessions'));
    const s = settingsIn(home, []);
    expect(s.kinds).toEqual(['hypivisor', 'claude']);
    expect(s.target?.url).toBe('ws://localhost:31415/ws');
    expect(s.claude).toEqual({ claudeDirs: [], claimsDir: join(home, '.claude-sessions'), snapshotDirs: [] });
    expect(s.discovery?.absent).toEqual([
      { name: 'agentctl', where: join(home, '.agentctl/agentctl.sock') },
      { name: 'claude', where: join(home, '.claude') },
    ]);
    // The live monitor watches for all of them.
    const watched = watchingEveryRegistry(s);
    expect(watched.kinds).toEqual(['hypivisor', 'agentctl', 'claude']);
    expect(watched.claude.claudeDirs).toEqual([join(home, '.claude')]);
  });

  it('$HYPIVISOR_WS says where hypivisor is looked for; it names no registry', () => {
    const home = tempRoot();
    const s = settingsIn(home, [], { HYPIVISOR_WS: 'ws://127.0.0.1:7/ws' });
    expect(s.target?.url).toBe('ws://127.0.0.1:7/ws');
    expect(s.discovery).toBeDefined();
  });

  it('--source, --registry, or either in the config file: only those, no discovery', () => {
    const home = tempRoot();
    mkdirSync(join(home, '.claude'));
    const source = settingsIn(home, ['--source', 'claude']);
    expect([source.kinds, source.discovery]).toEqual([['claude'], undefined]);
    const registry = settingsIn(home, ['--registry', 'ws://127.0.0.1:7/ws']);
    expect([registry.kinds, registry.discovery]).toEqual([['hypivisor'], undefined]);
    mkdirSync(join(home, 'cfg/ghostwatch'), { recursive: true });
    writeFileSync(join(home, 'cfg/ghostwatch/config.json'), JSON.stringify({ registry: 'ws://127.0.0.1:7/ws' }));
    // The file names a registry; the environment only moves it.
    const fromFile = settingsIn(home, [], { XDG_CONFIG_HOME: join(home, 'cfg'), HYPIVISOR_WS: 'ws://127.0.0.1:8/ws' });
    expect([fromFile.kinds, fromFile.discovery, fromFile.target?.url]).toEqual([['hypivisor'], undefined, 'ws://127.0.0.1:8/ws']);
  });

  it('$CLAUDE_CONFIG_DIR alone when ~/.claude is absent or the same folder', () => {
    const home = tempRoot();
    const profile = join(home, 'p');
    expect(settingsIn(home, ['--source', 'claude'], { CLAUDE_CONFIG_DIR: profile }).claude.claudeDirs).toEqual([profile]);
    mkdirSync(join(home, '.claude'));
    expect(settingsIn(home, ['--source', 'claude'], { CLAUDE_CONFIG_DIR: join(home, '.claude') }).claude.claudeDirs).toEqual([join(home, '.claude')]);
    expect(settingsIn(home, ['--source', 'claude'], { CLAUDE_CONFIG_DIR: profile }).claude.claudeDirs).toEqual([profile, join(home, '.claude')]);
    expect(basename(settingsIn(home, ['--source', 'claude']).claude.claudeDirs[0]!)).toBe('.claude');
  });
});

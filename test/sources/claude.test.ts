// The Claude Code session-file sources: fixture files of every format and version (hostile
// strings and truncated JSON among them) filled in with real pids, real watched directories,
// the real engine, eviction into the trash and `ghostwatch restore` back, as real processes.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync, truncateSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sanitize } from '../../src/core/sanitize.js';
import type { Finding } from '../../src/core/types.js';
import { claudeSources, FileSource } from '../../src/sources/claude/index.js';
import { parseClaimSession, parseClaudeSession, parseLiveMonitor, type ParseContext } from '../../src/sources/claude/formats.js';
import { moveToTrash } from '../../src/sources/trash-move.js';
import { FileChanged, fileStamp, listTrash } from '../../src/sources/trash.js';
import { deadPid, engineFor, HOST, sleeper, tempDir, until } from '../engine/helpers.js';
import { runCli } from '../support/cli.js';
import { WatchedDir } from '../../src/sources/claude/watched-dir.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const FIXTURES = join(ROOT, 'test/fixtures/claude');

interface Fill {
  live: number;
  dead: number;
}

function fixture(rel: string, fill: Fill): string {
  const now = Date.now();
  return readFileSync(join(FIXTURES, rel), 'utf8')
    .replaceAll('{{LIVE_PID}}', String(fill.live))
    .replaceAll('{{DEAD_PID}}', String(fill.dead))
    .replaceAll('{{HOST}}', HOST)
    .replaceAll('{{NOW_MS}}', String(now))
    .replaceAll('{{NOW_ISO}}', new Date(now).toISOString())
    .replaceAll('{{OLD_ISO}}', new Date(now - 20 * 60_000).toISOString());
}

/** A home with ~/.claude/sessions, ~/.claude/live-monitor-pids.json and ~/.claude-sessions from the fixtures. */
function home(fill: Fill, opts: { monitor?: string; sessions?: string[]; claims?: string[] } = {}): { claudeDir: string; claimsDir: string; trash: string } {
  const root = tempDir();
  const claudeDir = join(root, '.claude');
  const claimsDir = join(root, '.claude-sessions');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  mkdirSync(claimsDir, { recursive: true });
  for (const f of opts.sessions ?? ['live.json', 'dead.json', 'hostile.json', 'truncated.json', 'not-object.json']) {
    writeFileSync(join(claudeDir, 'sessions', f), fixture(`sessions/${f}`, fill));
  }
  if (opts.monitor !== 'none') writeFileSync(join(claudeDir, 'live-monitor-pids.json'), fixture(`live-monitor/${opts.monitor ?? 'v2.json'}`, fill));
  for (const f of opts.claims ?? ['fresh.json', 'stale-heartbeat.json', 'dead-pid.json', 'no-claim.json', 'remote.json']) {
    writeFileSync(join(claimsDir, f), fixture(`claude-sessions/${f}`, fill));
  }
  return { claudeDir, claimsDir, trash: join(root, 'state', 'ghostwatch', 'trash') };
}

const by = (findings: readonly Finding[], source: string, id: string) => findings.find((f) => f.source === source && f.id === id);
const LIVE_ID = '5f0c2d7e-1b2a-4c3d-9e8f-0a1b2c3d4e5f';
const DEAD_ID = '8a9b0c1d-2e3f-4a5b-8c7d-6e5f4a3b2c1d';

async function settledEngine(h: ReturnType<typeof home>) {
  const sources = claudeSources({ claudeDirs: [h.claudeDir], claimsDir: h.claimsDir }, HOST, h.trash);
  const engine = engineFor(sources, { auditLogPath: join(h.trash, '..', 'evictions.jsonl') });
  const snap = await until(() => {
    const s = engine.getSnapshot();
    return s.settled ? s : undefined;
  }, 5000, 'settled');
  return { engine, snap, sources };
}

describe('claude file formats (pure)', () => {
  const ctx: ParseContext = { source: 'x', host: 'devbox', firstSeen: () => 1, now: () => Date.now() };
  const fill = { live: 1111, dead: 2222 };

  it('reads a time that is no time (1e300, Infinity as text, not a date) as unknown and notes it, in every format', () => {
    const [s] = parseClaudeSession(JSON.stringify({ pid: 1111, sessionId: 'a', startedAt: 1e300, updatedAt: 'Infinity', statusUpdatedAt: Date.now() - 1000, nameSince: 1e300 }), '1111.json', ctx).sessions;
    expect(s).toMatchObject({ registeredAt: undefined, lastSeen: expect.any(Number) });
    expect(s!.invalidTimes).toEqual([
      { field: 'updatedAt', value: 'Infinity' },
      { field: 'startedAt', value: '1e+300' },
    ]);
    const [m] = parseLiveMonitor(JSON.stringify({ version: 2, sessions: { b: { pid: 2222, lastActivityAt: -5 } } }), 'x.json', ctx).sessions;
    expect(m).toMatchObject({ lastSeen: undefined, invalidTimes: [{ field: 'lastActivityAt', value: '-5' }] });
    const c = parseClaimSession(JSON.stringify({ session_id: 'c', pid: 1111, sd_id: 'SD-1', claimed_at: '9999-01-01T00:00:00Z', heartbeat_at: new Date().toISOString() }), 'c.json', ctx);
    expect(c.sessions[0]).toMatchObject({ registeredAt: undefined, invalidTimes: [{ field: 'claimed_at', value: '9999-01-01T00:00:00Z' }] });
    expect(c.claims[0]).toMatchObject({ acquiredAt: undefined, heartbeatAt: expect.any(Number), invalidTimes: [{ field: 'claimed_at', value: '9999-01-01T00:00:00Z' }] });
  });

  it.each([
    ['sessions/live.json', parseClaudeSession, { sessions: 1, claims: 0, id: LIVE_ID, pid: 1111 }],
    ['live-monitor/v1.json', parseLiveMonitor, { sessions: 2, claims: 0, id: LIVE_ID, pid: 1111 }],
    ['live-monitor/v2.json', parseLiveMonitor, { sessions: 2, claims: 0, id: LIVE_ID, pid: 1111 }],
    ['claude-sessions/fresh.json', parseClaimSession, { sessions: 1, claims: 1, id: LIVE_ID, pid: 1111 }],
    ['claude-sessions/no-claim.json', parseClaimSession, { sessions: 1, claims: 0, id: 'cccc0000-0000-4000-8000-00000000000c', pid: 2222 }],
  ] as const)('%s', (rel, parse, want) => {
    const out = parse(fixture(rel, fill), 'f.json', ctx);
    expect(out.sessions).toHaveLength(want.sessions);
    expect(out.claims).toHaveLength(want.claims);
    expect(out.sessions[0]).toMatchObject({ id: want.id, pid: want.pid, machine: expect.any(String) });
  });

  it('reads v2 activity times given as ms or ISO, and a claim heartbeat with the 900 s rule', () => {
    const v2 = parseLiveMonitor(fixture('live-monitor/v2.json', fill), 'f', ctx);
    expect(v2.sessions[1]!.lastSeen).toBe(Date.parse('2026-11-01T10:00:00Z'));
    const claim = parseClaimSession(fixture('claude-sessions/remote.json', fill), 'f', ctx).claims[0]!;
    expect(claim).toMatchObject({ resource: 'SD-104', holder: 'dddd0000-0000-4000-8000-00000000000d', machine: 'buildbox-7.example.net', staleAfterMs: 900_000 });
  });

  it.each([
    ['sessions/truncated.json', parseClaudeSession, /not valid JSON/],
    ['sessions/not-object.json', parseClaudeSession, /not a JSON object/],
    ['live-monitor/v3.json', parseLiveMonitor, /unknown version 3/],
  ] as const)('%s is an error that says what is wrong', (rel, parse, why) => {
    expect(() => parse(fixture(rel, fill), 'f.json', ctx)).toThrow(why);
  });

  it('an empty file is "being written", not a crash', () => {
    expect(() => parseClaudeSession('', 'f.json', ctx)).toThrow(/empty file/);
  });
});

describe('claude sources, live', () => {
  it('every format loads; the malformed files are warnings naming them; verdicts hold', async () => {
    const live = sleeper();
    const fill = { live: live.pid, dead: await deadPid() };
    const { snap } = await settledEngine(home(fill));
    const [claude, view, claims] = snap.sources;
    expect(claude).toMatchObject({ name: 'claude', status: 'watching', eviction: { available: true } });
    expect(claude!.warnings).toEqual([expect.stringMatching(/^not-object\.json: not a JSON object/), expect.stringMatching(/^truncated\.json: not valid JSON/)]);
    expect(view).toMatchObject({ name: 'claude-view', status: 'watching', eviction: { available: false } });
    expect(claims).toMatchObject({ name: 'claude-sessions', status: 'watching' });

    expect(by(snap.findings, 'claude', LIVE_ID)?.verdict).toBe('live');
    expect(by(snap.findings, 'claude', DEAD_ID)?.verdict).toBe('ghost');
    const hostile = snap.findings.find((f) => f.source === 'claude' && f.id.startsWith('evil'))!;
    expect(hostile.verdict).toBe('ghost');
    expect(sanitize(hostile.id, 80)).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(by(snap.findings, 'claude-view', LIVE_ID)?.verdict).toBe('live');
    expect(by(snap.findings, 'claude-view', 'c0ffee00-0000-4000-8000-000000000001')?.verdict).toBe('ghost');
    expect(by(snap.findings, 'claude-sessions', 'SD-101'), by(snap.findings, 'claude-sessions', 'SD-101')?.reason).toMatchObject({ verdict: 'held' });
    expect(by(snap.findings, 'claude-sessions', 'SD-102')).toMatchObject({ verdict: 'stale-claim', reason: expect.stringMatching(/last heartbeat 20m/) });
    expect(by(snap.findings, 'claude-sessions', 'SD-103')).toMatchObject({ verdict: 'stale-claim', reason: expect.stringMatching(/is gone/) });
    expect(by(snap.findings, 'claude-sessions', 'SD-104')).toMatchObject({ verdict: 'held' });
    expect(by(snap.findings, 'claude-sessions', 'dddd0000-0000-4000-8000-00000000000d')?.verdict).toBe('remote');
  });

  it.each(['v1.json', 'v2.json'])('live-monitor-pids.json %s loads; an unknown version is a warning', async (version) => {
    const live = sleeper();
    const fill = { live: live.pid, dead: await deadPid() };
    const { snap } = await settledEngine(home(fill, { monitor: version, sessions: [], claims: [] }));
    expect(snap.findings.filter((f) => f.source === 'claude-view').map((f) => f.verdict).sort()).toEqual(['ghost', 'live']);
    const v3 = await settledEngine(home(fill, { monitor: 'v3.json', sessions: [], claims: [] }));
    expect(v3.snap.sources[1]!.warnings).toEqual([expect.stringMatching(/unknown version 3/)]);
  });

  it('watches: a new file shows up, a removed one goes, a half-written one settles without a warning', async () => {
    const live = sleeper();
    const fill = { live: live.pid, dead: await deadPid() };
    const h = home(fill, { sessions: [], claims: [], monitor: 'none' });
    const { engine } = await settledEngine(h);
    const dir = join(h.claudeDir, 'sessions');

    writeFileSync(join(dir, `${fill.dead}.json`), fixture('sessions/dead.json', fill));
    await until(() => by(engine.getSnapshot().findings, 'claude', DEAD_ID)?.verdict === 'ghost', 3000, 'new file seen');

    // A writer that is not atomic: half a file, then the rest a moment later.
    const full = fixture('sessions/live.json', fill);
    writeFileSync(join(dir, `${fill.live}.json`), full.slice(0, 20));
    await new Promise((r) => setTimeout(r, 50));
    writeFileSync(join(dir, `${fill.live}.json`), full);
    await until(() => by(engine.getSnapshot().findings, 'claude', LIVE_ID)?.verdict === 'live', 3000, 'completed file seen');
    await new Promise((r) => setTimeout(r, 400));
    expect(engine.getSnapshot().sources[0]!.warnings).toBeUndefined();

    unlinkSync(join(dir, `${fill.dead}.json`));
    await until(() => by(engine.getSnapshot().findings, 'claude', DEAD_ID) === undefined, 3000, 'removed file gone');
  });

  it('files that vanish mid-read are not errors', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    const { engine, sources } = await settledEngine(h);
    const dir = join(h.claudeDir, 'sessions');
    for (let i = 0; i < 200; i++) {
      const p = join(dir, `flicker-${i}.json`);
      writeFileSync(p, fixture('sessions/dead.json', fill));
      const rescan = sources[0]!.resync();
      unlinkSync(p);
      await rescan;
    }
    await sources[0]!.resync();
    const s = engine.getSnapshot().sources[0]!;
    expect(s.warnings).toBeUndefined();
    expect(s.lastError).toBeUndefined();
    expect(engine.getSnapshot().findings.filter((f) => f.source === 'claude')).toHaveLength(1);
  });

  it('a missing directory is absent (not an error) until it appears, then watched', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const root = tempDir();
    const claudeDir = join(root, '.claude');
    const sources = [new FileSource({ name: 'claude', dir: join(claudeDir, 'sessions'), accept: (n) => n.endsWith('.json'), parse: parseClaudeSession, host: HOST })];
    const engine = engineFor(sources);
    await until(() => engine.getSnapshot().sources[0]?.status === 'absent', 3000, 'absent');
    // An absent folder does not hold the engine back (settled also waits for the first look at
    // what agents started, which may land a publish later).
    await until(() => engine.getSnapshot().settled, 3000, 'settled with the folder absent');
    mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
    writeFileSync(join(claudeDir, 'sessions', 'x.json'), fixture('sessions/dead.json', fill));
    await until(() => by(engine.getSnapshot().findings, 'claude', DEAD_ID)?.verdict === 'ghost', 6000, 'found once the folder exists');
    expect(engine.getSnapshot().sources[0]!.status).toBe('watching');
  });

  it('two files naming one session both stay visible; the older one is marked with its file name', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: [], claims: [], monitor: 'none' });
    const dir = join(h.claudeDir, 'sessions');
    writeFileSync(join(dir, 'old.json'), fixture('sessions/dead.json', fill));
    await new Promise((r) => setTimeout(r, 20));
    writeFileSync(join(dir, 'new.json'), fixture('sessions/dead.json', fill));
    const { snap } = await settledEngine(h);
    expect(snap.findings.filter((f) => f.source === 'claude').map((f) => f.id).sort()).toEqual([DEAD_ID, `${DEAD_ID}~old.json`]);
  });

  it('evicts into the trash with an audit trail; restore puts it back and never overwrites', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: ['dead-pid.json'], monitor: 'none' });
    const { engine, snap } = await settledEngine(h);
    const ghost = by(snap.findings, 'claude', DEAD_ID)!;
    const result = await engine.evict({ selection: [ghost], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'evicted', detail: expect.stringMatching(/moved .*dead\.json to .*trash.*ghostwatch restore/) });
    expect(existsSync(join(h.claudeDir, 'sessions', 'dead.json'))).toBe(false);
    const trashed = await listTrash(h.trash);
    expect(trashed).toHaveLength(1);
    expect(trashed[0]).toMatchObject({ source: 'claude', kind: 'session', id: DEAD_ID, present: true });
    await until(() => by(engine.getSnapshot().findings, 'claude', DEAD_ID) === undefined, 3000, 'row gone');

    const audit = readFileSync(join(h.trash, '..', 'evictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string });
    expect(audit.map((a) => a.kind)).toEqual(['intent', 'outcome']);

    // The claim's file, moved as a whole; then both come back with the CLI.
    const claim = by(engine.getSnapshot().findings, 'claude-sessions', 'SD-103')!;
    expect((await engine.evict({ selection: [claim], force: false })).counts.evicted).toBe(1);
    const env = { ...process.env, XDG_STATE_HOME: join(h.trash, '..', '..') };
    const listed = await runCli(['restore'], env);
    expect(listed.stdout).toMatch(/2 in .*trash, newest first/);
    expect((await runCli(['restore', DEAD_ID], env)).stdout).toMatch(/restored .*dead\.json/);
    await until(() => by(engine.getSnapshot().findings, 'claude', DEAD_ID)?.verdict === 'ghost', 3000, 'back in view');

    // Someone wrote a new file at the claim's old path: restore must not overwrite it.
    writeFileSync(join(h.claimsDir, 'dead-pid.json'), '{"session_id": "new"}');
    const refused = await runCli(['restore', 'SD-103'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/exists now; it was not overwritten/);
    expect(readFileSync(join(h.claimsDir, 'dead-pid.json'), 'utf8')).toBe('{"session_id": "new"}');
    const log = readFileSync(join(h.trash, '..', 'evictions.jsonl'), 'utf8');
    expect(log).toMatch(/"kind":"restore"/);
  });

  it('a file that changed since it was read is not moved', async () => {
    const root = tempDir();
    const path = join(root, 'a.json');
    writeFileSync(path, '{"pid": 1}');
    const stamp = fileStamp(statSync(path));
    await new Promise((r) => setTimeout(r, 15));
    writeFileSync(path, '{"pid": 2, "more": true}');
    await expect(moveToTrash(path, stamp, { source: 's', kind: 'session', id: 'a' }, join(root, 'trash'))).rejects.toBeInstanceOf(FileChanged);
    expect(readFileSync(path, 'utf8')).toContain('"pid": 2');
    expect(existsSync(join(root, 'trash')) ? readdirSync(join(root, 'trash')) : []).toEqual([]);
    renameSync(path, `${path}.bak`); // and a file already gone is ENOENT, which the source calls already-gone
    await expect(moveToTrash(path, stamp, { source: 's', kind: 'session', id: 'a' }, join(root, 'trash'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reap over the file sources: trashes what it can, names what it leaves and why, exit 0', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'v1.json' });
    const env = { ...process.env, XDG_STATE_HOME: join(h.trash, '..', '..'), XDG_CONFIG_HOME: tempDir() };
    const out = await runCli(['reap', '--yes', '--source', 'claude', '--claude-dir', h.claudeDir, '--claude-sessions-dir', h.claimsDir], env);
    expect(out.stderr).toMatch(/1 problem of claude-view left alone: claude-view rewrites live-monitor-pids\.json/);
    expect(out.stdout).toMatch(new RegExp(`^evicted\\s+session claude ${DEAD_ID} pid ${fill.dead}: moved `, 'm'));
    expect(out.stdout).toMatch(/evicted 1, already gone 0, skipped 0, refused 0, failed 0/);
    expect(out.code).toBe(0);
    expect(existsSync(join(h.claudeDir, 'sessions', 'dead.json'))).toBe(false);
  });

  it('the source list can come from the config file', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    const config = tempDir();
    mkdirSync(join(config, 'ghostwatch'));
    writeFileSync(join(config, 'ghostwatch', 'config.json'), JSON.stringify({ source: ['claude'], 'claude-dir': h.claudeDir, 'claude-sessions-dir': h.claimsDir }));
    const out = await runCli(['check', '--json'], { ...process.env, XDG_CONFIG_HOME: config, XDG_STATE_HOME: tempDir() });
    const json = JSON.parse(out.stdout) as { sources: { name: string }[]; findings: { id: string; verdict: string }[] };
    expect(json.sources.map((s) => s.name)).toEqual(['claude', 'claude-view', 'claude-sessions']);
    expect(json.findings).toEqual([expect.objectContaining({ id: DEAD_ID, verdict: 'ghost' })]);
    expect(out.code).toBe(1);
    const text = await runCli(['check'], { ...process.env, XDG_CONFIG_HOME: config, XDG_STATE_HOME: tempDir() });
    expect(text.stdout).toMatch(/^VERDICT\s+KIND\s+SOURCE\s+ID\s+PID\s+REASON$/m);
    expect(text.stdout).toMatch(new RegExp(`^!ghost\\s+session claude\\s+${DEAD_ID}`, 'm'));
    const status = await runCli(['status', '--format', 'tmux'], { ...process.env, XDG_CONFIG_HOME: config, XDG_STATE_HOME: tempDir() });
    expect(status).toMatchObject({ stdout: 'gw 1 ghost\n', code: 1 });
  });

  it('claude-view rows cannot be evicted, and the reason is given', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const { engine, snap } = await settledEngine(home(fill, { sessions: [], claims: [], monitor: 'v1.json' }));
    const ghost = by(snap.findings, 'claude-view', 'c0ffee00-0000-4000-8000-000000000001')!;
    const result = await engine.evict({ selection: [ghost], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/rewrites live-monitor-pids\.json/) });
  });

  it('a symlink in the sessions folder is not followed (out of the folder or not): a warning, no entry', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    const outside = join(h.claudeDir, '..', 'outside.json');
    writeFileSync(outside, JSON.stringify({ pid: fill.dead, sessionId: 'from-outside' }));
    symlinkSync(outside, join(h.claudeDir, 'sessions', 'out.json'));
    symlinkSync('/etc/passwd', join(h.claudeDir, 'sessions', 'passwd.json'));
    const { snap } = await settledEngine(h);
    const claude = snap.sources[0]!;
    expect(claude.warnings).toEqual([
      'out.json: a symbolic link, not followed (a session file is a regular file in the folder)',
      'passwd.json: a symbolic link, not followed (a session file is a regular file in the folder)',
    ]);
    expect(snap.findings.filter((f) => f.source === 'claude').map((f) => f.id)).toEqual([DEAD_ID]);
  });

  it('a huge session file (sparse, 1.5 GB) costs a bounded read: a "too large" warning, nothing parsed', async () => {
    const dir = tempDir();
    const big = join(dir, '4242.json');
    const fd = openSync(big, 'w');
    writeSync(fd, '{"pid": 4242, "sessionId": "huge", "cwd": "/w", "pad": "');
    closeSync(fd);
    truncateSync(big, 1_500_000_000);
    writeFileSync(join(dir, 'small.json'), '{"pid": 1, "sessionId": "small"}');
    let changes = 0;
    const watched = new WatchedDir({ dir, accept: (n) => n.endsWith('.json'), parse: (text) => JSON.parse(text) as { sessionId: string }, onChange: () => changes++ });
    await watched.start();
    watched.stop();
    const files = watched.files();
    expect(files.get('4242.json')).toMatchObject({ value: undefined, warning: '4242.json: too large for a session file (1500000000 bytes, over 1048576); not read' });
    expect(files.get('small.json')?.value).toEqual({ pid: 1, sessionId: 'small' });
    expect(watched.bytesRead).toBe('{"pid": 1, "sessionId": "small"}'.length);
    expect(changes).toBe(1);
  });

  it('an eviction detail names the file and the id sanitized', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['hostile.json'], claims: [], monitor: 'none' });
    const { engine, snap } = await settledEngine(h);
    const hostile = snap.findings.find((f) => f.source === 'claude' && f.id.startsWith('evil'))!;
    const result = await engine.evict({ selection: [hostile], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'evicted', detail: expect.stringMatching(/ghostwatch restore evil\^\[\]0;pwned\^G/) });
    expect(result.results[0]!.detail).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
  });

  it('a symlinked trash folder: eviction is off, with the reason; a loose one is tightened with a warning', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    const elsewhere = join(h.trash, '..', 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    symlinkSync(elsewhere, h.trash);
    const { engine, snap } = await settledEngine(h);
    expect(snap.sources[0]).toMatchObject({ eviction: { available: false, why: expect.stringMatching(/trash folder .* is a symbolic link ghostwatch did not make/) } });
    const result = await engine.evict({ selection: [by(snap.findings, 'claude', DEAD_ID)!], force: false });
    expect(result.results[0]).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/symbolic link/) });
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(existsSync(join(h.claudeDir, 'sessions', 'dead.json'))).toBe(true);

    const loose = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    mkdirSync(loose.trash, { recursive: true });
    chmodSync(loose.trash, 0o777);
    const second = await settledEngine(loose);
    expect(second.snap.sources[0]!.warnings).toEqual([`the trash folder ${loose.trash} was mode 0777; tightened to 0700`]);
    expect(statSync(loose.trash).mode & 0o777).toBe(0o700);
  });

  it('restore writes its own audit lines (intent, then outcome), and moves nothing when it cannot', async () => {
    const fill = { live: 1, dead: await deadPid() };
    const h = home(fill, { sessions: ['dead.json'], claims: [], monitor: 'none' });
    const { engine, snap } = await settledEngine(h);
    expect((await engine.evict({ selection: [by(snap.findings, 'claude', DEAD_ID)!], force: false })).counts.evicted).toBe(1);
    const env = { ...process.env, XDG_STATE_HOME: join(h.trash, '..', '..') };
    const logPath = join(h.trash, '..', 'evictions.jsonl');
    const original = join(h.claudeDir, 'sessions', 'dead.json');

    // The audit log replaced by a symlink: the restore is refused, nothing moves, the target is untouched.
    renameSync(logPath, `${logPath}.real`);
    const victim = join(h.trash, '..', 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, logPath);
    const refused = await runCli(['restore', DEAD_ID], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^ghostwatch: cannot restore .*: the audit log \(.*\) cannot be written, so nothing was moved: the audit log .* is a symbolic link ghostwatch did not make; refusing to write through it\n$/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(existsSync(original)).toBe(false);

    unlinkSync(logPath);
    renameSync(`${logPath}.real`, logPath);
    chmodSync(logPath, 0o644);
    const restored = await runCli(['restore', DEAD_ID], env);
    expect(restored).toMatchObject({ code: 0, stdout: expect.stringMatching(/^restored .*dead\.json\n$/) });
    expect(restored.stderr).toBe(`ghostwatch: warning: the audit log ${logPath} was mode 0644; tightened to 0600\n`);
    expect(existsSync(original)).toBe(true);
    const audit = readFileSync(logPath, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.map((a) => a.kind)).toEqual(['intent', 'outcome', 'restore', 'outcome']);
    const [intent, outcome] = audit.slice(2);
    expect(intent).toMatchObject({ kind: 'restore', id: expect.any(String), source: 'claude', entryKind: 'session', entryId: DEAD_ID, to: original });
    expect(outcome).toEqual({ ts: expect.any(String), kind: 'outcome', id: intent!.id, outcome: 'restored' });
  });

  it('restore with a symlinked trash folder refuses in one line', async () => {
    const root = tempDir();
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(root, 'ghostwatch'));
    symlinkSync(elsewhere, join(root, 'ghostwatch', 'trash'));
    const out = await runCli(['restore'], { ...process.env, XDG_STATE_HOME: root });
    expect(out).toMatchObject({ code: 1, stdout: '' });
    expect(out.stderr).toMatch(/^ghostwatch: cannot read the trash: the trash folder .* is a symbolic link ghostwatch did not make; refusing to write through it\n$/);
  });
});

// Whole evictions of Claude Code records, with real files, real sockets and real processes: the
// record written as 2.1.332 writes it (protocols.md §4) moves with its `<pid>.<sha256>.key` into
// one trash entry, its messaging socket is removed only when it is a socket, its pid is dead in
// our own pid namespace and a connect is refused; `ghostwatch restore` puts the whole entry back;
// two reaps at once (two real processes) trash each record once and each tells what it did.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeSources, FileSource } from '../../src/sources/claude/index.js';
import { parseClaudeSession } from '../../src/sources/claude/formats.js';
import { CLAUDE_LIVE_EVICT_NOTE, CLAUDE_SESSION_EVICTION, keyFilesOf, removeDeadSocket } from '../../src/sources/claude/session-companions.js';
import { listTrash, type TrashMeta } from '../../src/sources/trash.js';
import type { RegistryAnswer } from '../../src/sources/types.js';
import { deadPid, HOST, killAndReap, onCleanup, sleeper, tempDir, until } from '../engine/helpers.js';
import { runCli, reapReport } from '../support/cli.js';
import { claudeRecord } from '../support/claude-records.js';

const OWN_DOMAIN = `linux:${readFileSync('/etc/machine-id', 'utf8').trim()}:${readlinkSync('/proc/self/ns/pid')}`;

interface Home {
  root: string;
  sessions: string;
  socks: string;
  trash: string;
}

function home(): Home {
  const root = tempDir();
  const sessions = join(root, '.claude', 'sessions');
  const socks = join(root, 'cc-socks');
  mkdirSync(sessions, { recursive: true });
  mkdirSync(socks);
  return { root, sessions, socks, trash: join(root, 'state', 'ghostwatch', 'trash') };
}

/** A record as Claude Code 2.1.332 writes it, its key file beside it (0600); returns both paths. */
function record(h: Home, pid: number, fields: Record<string, unknown> = {}): { json: string; key: string; id: string } {
  const id = `${randomBytes(4).toString('hex')}-1b2a-4c3d-9e8f-0a1b2c3d4e5f`;
  const body = claudeRecord(pid, id, { version: '2.1.332', pidDomain: OWN_DOMAIN, messagingSocketPath: join(h.socks, `${pid}.sock`), ...fields });
  const json = join(h.sessions, `${pid}.json`);
  writeFileSync(json, JSON.stringify(body));
  const key = join(h.sessions, `${pid}.${randomBytes(32).toString('hex')}.key`);
  writeFileSync(key, JSON.stringify({ peerToken: 'secret-token-never-printed', procStart: '97090', pidDomain: OWN_DOMAIN }), { mode: 0o600 });
  return { json, key, id };
}

/** A socket whose listener was SIGKILLed (as Claude Code's is): the file stays, nothing listens. Resolves with the dead pid. */
async function staleSocket(path: string): Promise<number> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`listener exited ${code}`)));
  });
  await killAndReap(child); // SIGKILL: no close, the socket file is left
  expect(lstatSync(path).isSocket()).toBe(true);
  return child.pid as number;
}

/** A listener in this process that accepts on `path`. */
async function liveListener(path: string): Promise<void> {
  const server = createServer((c) => c.destroy());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  onCleanup(() => new Promise((r) => server.close(r)));
}

async function claudeSource(h: Home): Promise<FileSource> {
  const source = new FileSource({ name: 'claude', dir: h.sessions, accept: (n) => n.endsWith('.json'), parse: parseClaudeSession, host: HOST, trashDir: h.trash, ...CLAUDE_SESSION_EVICTION });
  source.start();
  onCleanup(() => source.stop());
  await until(() => (source.snapshot().state.status === 'watching' ? true : undefined), 5000, 'watching');
  return source;
}

async function evict(source: FileSource, id: string): Promise<RegistryAnswer & { detail?: string }> {
  await source.resync();
  return source.evict({ type: 'deregister', source: 'claude', id });
}

describe('a Claude record is evicted whole', () => {
  it('the record and its key file go into one 0700 entry with one note; the dead socket is removed; restore puts both back', async () => {
    const h = home();
    const sock = join(h.socks, 'x.sock');
    const pid = await staleSocket(sock);
    const r = record(h, pid, { messagingSocketPath: sock });
    const source = await claudeSource(h);

    const answer = await evict(source, r.id);
    expect(answer.outcome).toBe('evicted');
    const keyName = r.key.slice(h.sessions.length + 1);
    expect(answer.detail).toContain(`moved ${r.json} with its file ${keyName} to ${h.trash}/`);
    expect(answer.detail).toContain(`removed the dead messaging socket ${sock} (pid ${pid} is gone and nothing listens)`);
    expect(answer.detail).not.toContain('secret-token');
    expect(existsSync(r.json)).toBe(false);
    expect(existsSync(r.key)).toBe(false);
    expect(existsSync(sock)).toBe(false);

    const [item, ...more] = await listTrash(h.trash);
    expect(more).toEqual([]);
    expect(statSync(item!.entryDir!).mode & 0o777).toBe(0o700);
    expect(readdirSync(item!.entryDir!).sort()).toEqual([`${pid}.json`, keyName].sort());
    const note = JSON.parse(readFileSync(item!.metaPath, 'utf8')) as TrashMeta;
    expect(note).toMatchObject({ version: 2, source: 'claude', kind: 'session', id: r.id, originalPath: r.json });
    expect(note.files).toEqual([
      { name: `${pid}.json`, originalPath: r.json },
      { name: keyName, originalPath: r.key },
    ]);
    expect(statSync(join(item!.entryDir!, keyName)).mode & 0o077).toBe(0);

    // `ghostwatch restore` lists the entry with its key file and puts both back.
    const env = { ...process.env, XDG_STATE_HOME: join(h.root, 'state') };
    const listed = await runCli(['restore'], env);
    expect(listed.stdout).toContain(`was ${r.json}\n      and ${r.key}\n`);
    const restored = await runCli(['restore', r.id], env);
    expect(restored).toMatchObject({ code: 0, stdout: `restored ${r.json} and ${r.key}\n` });
    expect(JSON.parse(readFileSync(r.json, 'utf8'))).toMatchObject({ sessionId: r.id });
    expect(JSON.parse(readFileSync(r.key, 'utf8'))).toMatchObject({ peerToken: 'secret-token-never-printed' });
    expect(readdirSync(h.trash)).toEqual([]);
    const audit = readFileSync(join(h.root, 'state', 'ghostwatch', 'evictions.jsonl'), 'utf8');
    expect(audit).toContain(`"detail":"put back ${r.json}, ${r.key}"`);
  });

  it('a key file left group/world readable is made 0600 in the trash; a key of another pid stays where it is', async () => {
    const h = home();
    const pid = await deadPid();
    const r = record(h, pid);
    chmodSync(r.key, 0o644);
    const other = record(h, pid + 100_000);
    // A name that only starts like the record's: not one of its key files.
    const lookalike = join(h.sessions, `${pid}0.${'a'.repeat(64)}.key`);
    writeFileSync(lookalike, 'x', { mode: 0o600 });
    const source = await claudeSource(h);

    const answer = await evict(source, r.id);
    expect(answer.outcome).toBe('evicted');
    expect(answer.detail).toContain(`no messaging socket at ${join(h.socks, `${pid}.sock`)} (already gone)`);
    const [item] = await listTrash(h.trash);
    const trashedKey = item!.entryFiles[1]!.trashPath;
    expect(statSync(trashedKey).mode & 0o777).toBe(0o600);
    expect(existsSync(other.json) && existsSync(other.key) && existsSync(lookalike)).toBe(true);
    expect(await keyFilesOf(other.json)).toEqual([other.key]);
  });

  it('restore refuses, moving nothing, when a file of the record\'s name is there again', async () => {
    const h = home();
    const r = record(h, await deadPid());
    const source = await claudeSource(h);
    expect((await evict(source, r.id)).outcome).toBe('evicted');
    writeFileSync(r.json, '{"pid": 1, "sessionId": "a new session"}');

    const env = { ...process.env, XDG_STATE_HOME: join(h.root, 'state') };
    const refused = await runCli(['restore', r.id], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`ghostwatch: cannot restore ${r.id}: ${r.json} exists now; it was not overwritten (the entry stays in the trash)\n`);
    expect(readFileSync(r.json, 'utf8')).toBe('{"pid": 1, "sessionId": "a new session"}');
    expect(existsSync(r.key)).toBe(false);
    const [item] = await listTrash(h.trash);
    expect(item!.entryFiles.map((f) => f.present)).toEqual([true, true]);
  });
});

describe('reap, as a real process', () => {
  it('evicts a SIGKILLed session whole; its line and the audit log name what moved and what was removed', async () => {
    const h = home();
    const sock = join(h.socks, 'k.sock');
    const pid = await staleSocket(sock);
    const r = record(h, pid, { messagingSocketPath: sock });
    const env = { ...process.env, XDG_STATE_HOME: join(h.root, 'state'), XDG_CONFIG_HOME: tempDir() };
    const out = await runCli(['reap', '--yes', '--source', 'claude', '--claude-dir', join(h.root, '.claude'), '--claude-sessions-dir', join(h.root, 'none')], env);
    expect(out.stdout).toMatch(new RegExp(`^evicted\\s+session claude ${r.id} pid ${pid}: moved ${r.json} with its file ${pid}\\.[0-9a-f]{64}\\.key to `, 'm'));
    expect(out.stdout).toContain(`removed the dead messaging socket ${sock}`);
    expect(out.stdout).not.toContain('secret-token');
    expect(out.code).toBe(0);
    expect(existsSync(r.json) || existsSync(r.key) || existsSync(sock)).toBe(false);
    const audit = readFileSync(join(h.root, 'state', 'ghostwatch', 'evictions.jsonl'), 'utf8');
    expect(audit).toContain(`removed the dead messaging socket ${sock}`);
    expect(audit).toMatch(/"outcome":"evicted","detail":"moved [^"]*with its file \d+\.[0-9a-f]{64}\.key/);
    expect(audit).not.toContain('secret-token');
  });
});

describe('two reaps at once, as two real processes (two panes, a cron job)', () => {
  it('a record taken by another process after it was read is already gone, and says so, whether or not the folder was read again; nothing of it goes to the trash', async () => {
    const h = home();
    const r = record(h, await deadPid());
    const source = await claudeSource(h);
    await source.resync();
    renameSync(r.json, join(h.root, 'taken.json')); // another ghostwatch moved it a moment ago
    const answer = await source.evict({ type: 'deregister', source: 'claude', id: r.id });
    expect(answer).toEqual({ outcome: 'already-gone', detail: `${r.json} was gone when it was to be moved (another process moved or removed it)` });
    expect(existsSync(r.key)).toBe(true);
    // Taken, and the folder read again before the move: gone from the source's view, said the same way.
    const q = record(h, await deadPid());
    await source.resync();
    renameSync(q.json, join(h.root, 'taken-too.json'));
    await source.resync();
    expect(await source.evict({ type: 'deregister', source: 'claude', id: q.id })).toEqual({
      outcome: 'already-gone',
      detail: `no longer in ${h.sessions} when it was to be moved (another process moved or removed its file)`,
    });
    expect(existsSync(h.trash) ? readdirSync(h.trash) : []).toEqual([]);
  });


  it('60 dead sessions make 60 trash entries, each record in one, whole; each reap evicted what it moved and says already gone for the rest; neither refuses or fails', async () => {
    const h = home();
    const records: { json: string; id: string; key?: string; bytes: string }[] = [];
    for (let i = 0; i < 60; i++) {
      const pid = await deadPid();
      if (i % 2 === 0) {
        const r = record(h, pid); // 2.1.332: a key file beside it
        records.push({ ...r, bytes: readFileSync(r.json, 'utf8') });
      } else {
        const id = `${randomBytes(4).toString('hex')}-2b3c-4d5e-8f90-0a1b2c3d4e5f`;
        const json = join(h.sessions, `${pid}.json`);
        writeFileSync(json, JSON.stringify(claudeRecord(pid, id))); // 2.1.197
        records.push({ json, id, bytes: readFileSync(json, 'utf8') });
      }
    }
    const env = { ...process.env, HOME: h.root, CLAUDE_CONFIG_DIR: join(h.root, '.claude'), XDG_STATE_HOME: join(h.root, 'state'), XDG_CONFIG_HOME: tempDir() };
    const reap = () => runCli(['reap', '--yes', '--source', 'claude'], env);
    const runs = await Promise.all([reap(), reap()]);

    for (const run of runs) {
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).not.toMatch(/^(refused|failed|skipped) /m);
    }
    const [a, b] = runs.map((r) => reapReport(r.stdout, 'claude'));
    for (const r of records) {
      const said = [a!.outcomes.get(r.id), b!.outcomes.get(r.id)].filter((o) => o !== undefined).sort();
      expect(['evicted', 'already-gone,evicted'], `${r.id}: ${said.join(',')}`).toContain(said.join(','));
    }
    expect(a!.counts!.evicted + b!.counts!.evicted).toBe(60);
    // Already gone, in so many words: found gone at the re-check, by a rescan just after it, or when its file was to be moved.
    for (const gone of runs.flatMap((r) => r.stdout.split('\n').filter((l) => l.startsWith('already-gone ')))) {
      expect(gone).toMatch(/: (no longer in the registry|no longer in \/\S+ when it was to be moved \(another process moved or removed its file\)|\/\S+\.json was gone when it was to be moved \(another process moved or removed it\))$/);
    }

    // One entry per record: its note, its record whole, its key file with it; nothing else in the trash.
    expect(readdirSync(h.sessions)).toEqual([]);
    const items = await listTrash(h.trash);
    expect(readdirSync(h.trash).length).toBe(120); // 60 entry folders, 60 notes
    expect(items.map((i) => i.originalPath).sort()).toEqual(records.map((r) => r.json).sort());
    for (const r of records) {
      const item = items.find((i) => i.originalPath === r.json)!;
      expect(readFileSync(item.trashPath, 'utf8')).toBe(r.bytes);
      expect(item.entryFiles.map((f) => [f.originalPath, f.present])).toEqual([[r.json, true], ...(r.key ? [[r.key, true]] : [])]);
    }
    const audit = readFileSync(join(h.root, 'state', 'ghostwatch', 'evictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; outcome?: string });
    expect(audit.filter((l) => l.kind === 'outcome' && l.outcome === 'evicted').length).toBe(60);
  }, 60_000);
});

describe('the messaging socket is removed only when it is certainly dead', () => {
  it('is left while a listener accepts on it, though the record\'s pid is dead', async () => {
    const h = home();
    const sock = join(h.socks, 'live.sock');
    await liveListener(sock);
    const r = record(h, await deadPid(), { messagingSocketPath: sock });
    const answer = await evict(await claudeSource(h), r.id);
    expect(answer.outcome).toBe('evicted');
    expect(answer.detail).toContain(`left the messaging socket ${sock}: something still accepts connections on it`);
    expect(lstatSync(sock).isSocket()).toBe(true);
  });

  it('is left while the record\'s pid is alive, though nothing listens', async () => {
    const h = home();
    const sock = join(h.socks, 'stale.sock');
    await staleSocket(sock);
    const alive = sleeper();
    const r = record(h, alive.pid, { messagingSocketPath: sock });
    const answer = await evict(await claudeSource(h), r.id);
    expect(answer.detail).toContain(`left the messaging socket ${sock}: pid ${alive.pid} is alive`);
    expect(lstatSync(sock).isSocket()).toBe(true);
  });

  it('is left when its path is a regular file, or a symlink (not followed, even to a dead socket)', async () => {
    const h = home();
    const file = join(h.socks, 'file.sock');
    writeFileSync(file, 'not a socket');
    const r1 = record(h, await deadPid(), { messagingSocketPath: file });
    const target = join(h.socks, 'target.sock');
    const pid = await staleSocket(target);
    const link = join(h.socks, 'link.sock');
    symlinkSync(target, link);
    const r2 = record(h, pid, { messagingSocketPath: link });
    const source = await claudeSource(h);

    expect((await evict(source, r1.id)).detail).toContain(`left the messaging socket ${file}: not a socket`);
    expect(readFileSync(file, 'utf8')).toBe('not a socket');
    expect((await evict(source, r2.id)).detail).toContain(`left the messaging socket ${link}: a symbolic link, not a socket (not followed)`);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(lstatSync(target).isSocket()).toBe(true);
  });

  it.each([
    ['another pid namespace', (d: string) => d.replace(/pid:\[\d+\]$/, 'pid:[1]'), /its pid is of another pid namespace/],
    ['another machine', (d: string) => d.replace(/^linux:[^:]+:/, 'linux:0123456789abcdef0123456789abcdef:'), /its pid is of another machine/],
    ['a pidDomain it cannot read', () => 'bsd:whatever', /is not one ghostwatch reads/],
  ])('is left, its pid not judged, when pidDomain names %s', async (_what, domain, why) => {
    const h = home();
    const sock = join(h.socks, 'ns.sock');
    const pid = await staleSocket(sock);
    const r = record(h, pid, { messagingSocketPath: sock, pidDomain: domain(OWN_DOMAIN) });
    const answer = await evict(await claudeSource(h), r.id);
    expect(answer.outcome).toBe('evicted');
    expect(answer.detail).toMatch(why);
    expect(answer.detail).toContain(`left the messaging socket ${sock}: `);
    expect(answer.detail).toContain('so its pid is not judged here');
    expect(lstatSync(sock).isSocket()).toBe(true);
    expect(existsSync(r.key)).toBe(false); // the key goes with the record all the same
  });

  it('a record of 2.1.197 (no pidDomain) is judged in our pid table; a socket of another owner is left', async () => {
    const h = home();
    const sock = join(h.socks, 'old.sock');
    const pid = await staleSocket(sock);
    const raw = { pid, messagingSocketPath: sock };
    const uid = statSync(sock).uid;
    expect(await removeDeadSocket(raw, uid + 1)).toBe(`left the messaging socket ${sock}: owned by uid ${uid}, not by the session file's owner (uid ${uid + 1})`);
    expect(await removeDeadSocket({ pid, messagingSocketPath: 'cc-socks/x.sock' }, uid)).toBe('left its messagingSocketPath alone: not an absolute path');
    expect(await removeDeadSocket({ pid }, uid)).toBeUndefined();
    // A hostile path is told inert.
    const hostile = await removeDeadSocket({ pid, messagingSocketPath: `${h.socks}/\u001b]0;pwned\u0007\u202e.sock` }, uid);
    expect(hostile).toMatch(/^no messaging socket at .*\^\[\]0;pwned\^G/);
    expect(hostile).not.toMatch(/[\u0000-\u001f\u007f\u202e]/);
    expect(await removeDeadSocket(raw, uid)).toBe(`removed the dead messaging socket ${sock} (pid ${pid} is gone and nothing listens)`);
    expect(existsSync(sock)).toBe(false);
  });
});

describe('what the dialogs say', () => {
  it('claudeSources gives the claude source the whole eviction and the force dialog\'s lines', () => {
    const h = home();
    const [claude, view, claims] = claudeSources({ claudeDirs: [join(h.root, '.claude')], claimsDir: join(h.root, '.claude-sessions') }, HOST, h.trash);
    expect(claude!.snapshot().state.eviction).toMatchObject({ available: true, liveNote: CLAUDE_LIVE_EVICT_NOTE, note: expect.stringMatching(/key files/) });
    expect(view!.snapshot().state.eviction?.liveNote).toBeUndefined();
    expect(claims!.snapshot().state.eviction?.liveNote).toBeUndefined();
  });
});

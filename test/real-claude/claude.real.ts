// `npm run test:real-claude`: the real Claude Code from npm (2.1.332 unless
// GHOSTWATCH_REAL_CLAUDE_VERSION says otherwise), offline against a fake Messages API on
// 127.0.0.1, in tmux; and the built ghostwatch reading the files it writes (protocols.md §4):
// a live session; SIGKILL → ghost → `reap` moves the record and its key file into the trash;
// `/exit` → gone; `--resume` of a session still open elsewhere → both rows marked; a session in its
// own pid namespace (unshare --pid) judged there, live then ghost; CLAUDE_CONFIG_DIR found without
// flags. What Claude Code did (files and their fields, exit codes, timings) is printed at the end
// and kept in last-run.json beside the install. Not part of `npm test`: it installs Claude Code
// from the npm registry on its first run.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_TMUX } from '../support/tmux.js';
import { REPLY, startFakeApi, type FakeApi } from './fake-api.js';
import { ClaudeInTmux, CliWorld, findingOfPid, waitFor, type Finding } from './harness.js';
import { alive, filesUnder, isSocket, keyFilePattern, MACHINE_ID, namespaceHeld, pidNamespaceOf, writtenFiles } from './host.js';
import { CLAUDE_VERSION, INSTALL_DIR, installClaude, WRITES_PID_DOMAIN } from './install.js';

const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

let bin = '';
let api: FakeApi | undefined;
let world: CliWorld | undefined;
const homes: string[] = [];
const claudes: ClaudeInTmux[] = [];
const report: Record<string, unknown> = { claudeVersion: CLAUDE_VERSION, node: process.version };

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'gw-real-claude-'));
  homes.push(home);
  return home;
}

async function launch(home = newHome(), options: { args?: string[]; unsharePid?: boolean; configDir?: string } = {}): Promise<ClaudeInTmux> {
  const claude = new ClaudeInTmux(bin, api!.url, home, options.configDir);
  claudes.push(claude);
  await claude.start({ ...(options.args ? { args: options.args } : {}), ...(options.unsharePid ? { unsharePid: true } : {}) });
  return claude;
}

/** What a scenario saw of one Claude process, for the report. */
function seen(claude: ClaudeInTmux): Record<string, unknown> {
  return {
    hostPid: claude.hostPid,
    pidInFile: claude.pid,
    dialogsAnswered: claude.dialogs,
    sessionFileAfterMs: claude.fileAfterMs,
    firstWriteFields: Object.keys(claude.firstRecord),
  };
}

const brief = (f: Finding | undefined): unknown => f && { verdict: f.verdict, problem: f.problem, evictable: f.evictable, reason: f.reason, evidence: f.evidence };

/** The key file of `pid` in a sessions folder, if Claude Code wrote one. */
function keyFileOf(claude: ClaudeInTmux): string | undefined {
  return readdirSync(claude.sessionsDir).find((name) => keyFilePattern(claude.pid).test(name));
}

describe.runIf(HAS_TMUX || IN_CI)(`real Claude Code ${CLAUDE_VERSION}, offline, read by ghostwatch`, () => {
  beforeAll(async () => {
    if (!HAS_TMUX) throw new Error('the real-Claude tests need tmux (CI is set, so they fail instead of skipping)');
    const t0 = Date.now();
    bin = await installClaude();
    report.installMs = Date.now() - t0;
    report.binary = bin;
    api = await startFakeApi();
    world = await new CliWorld().init();
  }, 660_000);

  afterAll(async () => {
    for (const claude of claudes) await claude.stop();
    report.apiRequests = api?.requests.map((r) => `${r.method} ${r.path}${r.stream ? ' (stream)' : ''} ${r.model ?? ''}`.trim());
    await api?.close();
    world?.remove();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
    const text = JSON.stringify(report, null, 2);
    if (existsSync(INSTALL_DIR)) writeFileSync(join(INSTALL_DIR, 'last-run.json'), `${text}\n`);
    console.log(`what real Claude Code did:\n${text}`);
  });

  it('(a) a started session: the file as Claude Code writes it, and ghostwatch calls it live', async () => {
    const claude = await launch();
    const files = writtenFiles(claude.sessionsDir);
    const { run, findings } = await world!.check(claude.home, world!.claudeFlags(claude.configDir));
    const finding = findingOfPid(findings, claude.pid);
    report.a_live = { ...seen(claude), files, socket: claude.record.messagingSocketPath ?? 'none', checkExit: run.code, ghostwatch: brief(finding) };

    expect(claude.pid).toBe(claude.hostPid);
    expect(claude.record).toMatchObject({ pid: claude.pid, cwd: claude.cwd, version: CLAUDE_VERSION, kind: 'interactive', entrypoint: 'cli', status: 'idle' });
    expect(claude.record.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // procStart is field 22 of /proc/<pid>/stat, as a string: an exact identity.
    const stat = readFileSync(`/proc/${claude.hostPid}/stat`, 'utf8');
    expect(claude.record.procStart).toBe(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    if (WRITES_PID_DOMAIN) {
      expect(claude.record.pidDomain).toBe(`linux:${MACHINE_ID}:pid:[${pidNamespaceOf('self')}]`);
      // The socket is $TMPDIR/cc-socks/<pid>.sock, and the key file is named after it:
      // <pid>.<sha256 of messagingSocketPath>.key.
      const socket = join(claude.tmp, 'cc-socks', `${claude.pid}.sock`);
      expect(claude.record.messagingSocketPath).toBe(socket);
      expect(isSocket(socket)).toBe(true);
      const key = files.find((f) => keyFilePattern(claude.pid).test(f.name));
      expect(key).toMatchObject({
        name: `${claude.pid}.${createHash('sha256').update(socket).digest('hex')}.key`,
        mode: '0600',
        fields: ['peerToken', 'procStart', 'pidDomain'],
        sample: { procStart: claude.record.procStart, pidDomain: claude.record.pidDomain },
      });
    } else {
      expect(files.map((f) => f.name)).toEqual([`${claude.pid}.json`]);
    }
    expect(run.code).toBe(0);
    expect(finding?.verdict).toBe('live');
    expect(finding?.entry).toMatchObject({ pid: claude.pid, sessionId: claude.record.sessionId, status: 'idle' });
  });

  let killed: { claude: ClaudeInTmux; key: string | undefined; keyBody: string; recordBody: string } | undefined;

  it('(b) SIGKILL leaves the file: a ghost, and reap moves the record into the trash', async () => {
    const claude = await launch();
    const key = keyFileOf(claude);
    const keyBody = key ? readFileSync(join(claude.sessionsDir, key), 'utf8') : '';
    const recordBody = readFileSync(claude.sessionFile, 'utf8');
    killed = { claude, key, keyBody, recordBody };
    const t = Date.now();
    process.kill(claude.hostPid, 'SIGKILL');
    const goneMs = await claude.waitGone(t);
    const shStatus = await waitFor('sh to write the exit status', () => claude.exitStatus(), 5000);
    const left = writtenFiles(claude.sessionsDir).map((f) => f.name);
    const socketLeft = isSocket(String(claude.record.messagingSocketPath));
    const { findings } = await world!.check(claude.home, world!.claudeFlags(claude.configDir));
    const finding = findingOfPid(findings, claude.pid);
    const reap = await world!.reap(claude.home, world!.claudeFlags(claude.configDir));
    const afterReap = writtenFiles(claude.sessionsDir).map((f) => f.name);
    const trash = filesUnder(world!.trash);
    report.b_sigkill = {
      ...seen(claude),
      goneMs,
      shExitStatus: shStatus,
      leftInSessions: left,
      socketLeft,
      ghostwatch: brief(finding),
      reap: { exit: reap.code, stdout: reap.stdout.trim().split('\n'), stderr: reap.stderr.trim() },
      sessionsAfterReap: afterReap,
      trash,
    };

    expect(shStatus).toBe(137);
    expect(left).toContain(`${claude.pid}.json`);
    expect(finding?.verdict).toBe('ghost');
    expect(finding?.evictable).toBe(true);
    expect(reap.code).toBe(0);
    expect(afterReap).not.toContain(`${claude.pid}.json`);
    const trashed = trash.find((p) => p.endsWith(`-${claude.pid}.json`) || p.endsWith(`/${claude.pid}.json`));
    expect(trashed).toBeDefined();
    expect(readFileSync(join(world!.trash, trashed!), 'utf8')).toBe(recordBody);
  });

  it(`(b) reap moves the record's ${WRITES_PID_DOMAIN ? '<pid>.<sha256>.key file with it' : 'only file: this version writes no key file'}`, () => {
    expect(killed, 'the SIGKILL test above ran').toBeDefined();
    const { claude, key, keyBody } = killed!;
    if (!WRITES_PID_DOMAIN) {
      expect(key).toBeUndefined();
      return;
    }
    expect(key).toMatch(keyFilePattern(claude.pid));
    expect(existsSync(join(claude.sessionsDir, key!))).toBe(false);
    const trashed = filesUnder(world!.trash).find((p) => p.endsWith(key!));
    expect(trashed, `${key} in the trash`).toBeDefined();
    expect(readFileSync(join(world!.trash, trashed!), 'utf8')).toBe(keyBody);
  });

  it('(c) /exit: Claude Code deletes its file (and key and socket), and the row goes with it', async () => {
    const claude = await launch();
    const socket = String(claude.record.messagingSocketPath);
    const t = Date.now();
    await claude.type('/exit');
    const goneMs = await claude.waitGone(t);
    const shStatus = await waitFor('sh to write the exit status', () => claude.exitStatus(), 5000);
    const left = writtenFiles(claude.sessionsDir).map((f) => f.name);
    const { run, findings } = await world!.check(claude.home, world!.claudeFlags(claude.configDir));
    const finding = findingOfPid(findings, claude.pid);
    report.c_exit = { ...seen(claude), goneMs, shExitStatus: shStatus, leftInSessions: left, socketLeft: isSocket(socket), checkExit: run.code, ghostwatch: brief(finding) ?? 'no row' };

    expect(shStatus).toBe(0);
    expect(left).toEqual([]);
    expect(isSocket(socket)).toBe(false);
    expect(run.code).toBe(0);
    expect(finding).toBeUndefined();
  });

  it('(d) --resume of a session still open elsewhere: two live files with one sessionId, both rows say so', async () => {
    const first = await launch();
    await first.type('hello');
    // --resume finds a session by its transcript: resuming before the reply is written there ends
    // with "No conversation found" (exit 1).
    await waitFor('the fake API reply in the transcript', () => (first.transcriptHas(REPLY) ? true : undefined), 20_000);
    const sessionId = String(first.record.sessionId);
    const second = await launch(first.home, { args: ['--resume', sessionId] });
    const files = writtenFiles(first.sessionsDir);
    const { findings } = await world!.check(first.home, world!.claudeFlags(first.configDir));
    const a = findingOfPid(findings, first.pid);
    const b = findingOfPid(findings, second.pid);
    report.d_resume = { first: seen(first), second: seen(second), files: files.map((f) => f.name), secondRecord: second.record, ghostwatch: { [first.pid]: brief(a), [second.pid]: brief(b) } };

    expect(second.record.sessionId).toBe(sessionId);
    expect(files.map((f) => f.name)).toEqual(expect.arrayContaining([`${first.pid}.json`, `${second.pid}.json`]));
    expect(a?.verdict).toBe('live');
    expect(b?.verdict).toBe('live');
    expect(a?.evictable).toBe(false);
    expect(b?.evictable).toBe(false);
    expect(a?.evidence.alsoOpenIn).toEqual([second.pid]);
    expect(b?.evidence.alsoOpenIn).toEqual([first.pid]);
    expect(a?.reason).toContain(`also open in pid ${second.pid}`);
    expect(b?.reason).toContain(`also open in pid ${first.pid}`);
  });

  let contained: { claude: ClaudeInTmux; namespace: string } | undefined;

  it('(e) a session in its own pid namespace (unshare --pid): judged there, live, never against our pid table', async () => {
    const claude = await launch(newHome(), { unsharePid: true });
    const namespace = pidNamespaceOf(claude.hostPid);
    contained = { claude, namespace };
    const { findings } = await world!.check(claude.home, world!.claudeFlags(claude.configDir));
    const finding = findingOfPid(findings, claude.pid);
    report.e_pid_namespace = {
      ...seen(claude),
      namespace: `pid:[${namespace}]`,
      ours: `pid:[${pidNamespaceOf('self')}]`,
      pidDomain: claude.record.pidDomain ?? 'none',
      procStart: claude.record.procStart,
      messagingSocketPath: claude.record.messagingSocketPath ?? 'none',
      files: writtenFiles(claude.sessionsDir).map((f) => f.name),
      ghostwatch: brief(finding),
    };

    // sh is pid 1 in the namespace, Claude Code pid 2; on this host pid 2 is someone else.
    expect(claude.pid).toBe(2);
    expect(claude.hostPid).not.toBe(2);
    expect(namespace).not.toBe(pidNamespaceOf('self'));
    if (!WRITES_PID_DOMAIN) {
      // No pidDomain: the file cannot say where pid 2 lives, but its procStart is not the start
      // time of our pid 2 (a kernel thread): exact identity says `reused`, never `live`.
      expect(claude.record.pidDomain).toBeUndefined();
      expect(finding?.verdict).toBe('reused');
      return;
    }
    expect(claude.record.pidDomain).toBe(`linux:${MACHINE_ID}:pid:[${namespace}]`);
    expect(finding?.verdict).toBe('live');
    expect(finding?.evidence.pidDomain).toMatchObject({ domain: claude.record.pidDomain, machineId: MACHINE_ID, nsPid: 2, hostPid: claude.hostPid, status: 'mapped' });
    expect(String((finding?.evidence.pidDomain as Record<string, unknown>).namespace)).toContain(namespace);
  });

  it('(e) killed, its namespace gone: a ghost, although our pid 2 lives', async () => {
    expect(contained, 'the pid-namespace test above ran').toBeDefined();
    const { claude, namespace } = contained!;
    const t = Date.now();
    process.kill(claude.hostPid, 'SIGKILL');
    const goneMs = await claude.waitGone(t);
    await waitFor(`pid namespace ${namespace} to end`, () => (namespaceHeld(namespace) ? undefined : true), 10_000);
    const left = writtenFiles(claude.sessionsDir).map((f) => f.name);
    const { findings } = await world!.check(claude.home, world!.claudeFlags(claude.configDir));
    const finding = findingOfPid(findings, claude.pid);
    report.e_killed = { goneMs, shExitStatus: claude.exitStatus() ?? 'none', leftInSessions: left, ghostwatch: brief(finding) };

    expect(left).toContain('2.json');
    expect(alive(2)).toBe(true);
    if (!WRITES_PID_DOMAIN) {
      expect(finding?.verdict).toBe('reused');
      return;
    }
    expect(finding?.verdict).toBe('ghost');
    expect(String((finding?.evidence.pidDomain as Record<string, unknown> | undefined)?.namespace)).toContain(namespace);
  });

  it('(f) CLAUDE_CONFIG_DIR: Claude Code writes there, and ghostwatch finds it with no flags', async () => {
    const home = newHome();
    const configDir = join(home, 'profile-work');
    const claude = await launch(home, { configDir });
    const { run, findings } = await world!.check(home, [], { CLAUDE_CONFIG_DIR: configDir });
    const finding = findingOfPid(findings, claude.pid);
    report.f_config_dir = {
      ...seen(claude),
      files: writtenFiles(claude.sessionsDir).map((f) => f.name),
      inHome: existsSync(join(home, '.claude')) ? readdirSync(join(home, '.claude')) : 'no ~/.claude',
      checkExit: run.code,
      checkStderr: run.stderr.trim(),
      ghostwatch: brief(finding),
    };

    expect(existsSync(join(configDir, 'sessions', `${claude.pid}.json`))).toBe(true);
    expect(existsSync(join(home, '.claude', 'sessions'))).toBe(false);
    expect(run.code).toBe(0);
    expect(finding?.verdict).toBe('live');
  });
});

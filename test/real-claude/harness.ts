// What the real-Claude tests drive: Claude Code (install.ts) run offline in a tmux pane of a
// private tmux server against the fake Messages API (fake-api.ts), with a private HOME (or
// CLAUDE_CONFIG_DIR) and TMPDIR; the first-run dialogs (trust this folder, use this API key)
// answered with keys; and the built `ghostwatch check --json` / `reap` reading what it wrote.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliRun } from '../support/cli.js';
import { tuiEnv } from '../support/tmux.js';
import { alive, descendantRunning, filesUnder, freePort, nsPids, readJson } from './host.js';
import { until } from '../support/wait.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `until` with the subject first, as these harnesses read: fails after `timeoutMs`, naming `what`. */
export function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  return until(probe, timeoutMs, what);
}

// ---- Claude Code in tmux -----------------------------------------------------------------------

let runs = 0;

export interface StartOptions {
  readonly args?: readonly string[];
  /** Run it as `unshare --pid --fork --mount-proc sh -c …`: sh is pid 1 there, Claude Code pid 2. */
  readonly unsharePid?: boolean;
}

export class ClaudeInTmux {
  readonly socket = `gw-real-claude-${process.pid}-${++runs}`;
  readonly exitFile: string;
  readonly cwd: string;
  readonly configDir: string;
  /** The pid on this host, and the pid Claude Code sees (different under unshare --pid). */
  hostPid = 0;
  pid = 0;
  startedAt = 0;
  /** ms from start until the session file held this pid's record. */
  fileAfterMs = 0;
  readonly dialogs: string[] = [];
  record: Record<string, unknown> = {};
  /** The record as first seen on disk. */
  firstRecord: Record<string, unknown> = {};
  private readonly explicitConfigDir: boolean;
  /** When the last key went to a dialog. */
  private keyAt = 0;

  /**
   * `home`: HOME of the Claude process (its files go to home/.claude unless `configDir` is given:
   * then CLAUDE_CONFIG_DIR). Several ClaudeInTmux may share a home (a --resume needs the first one's
   * transcript).
   */
  constructor(
    private readonly bin: string,
    private readonly apiUrl: string,
    readonly home: string,
    configDir?: string,
  ) {
    this.configDir = configDir ?? join(home, '.claude');
    this.cwd = join(home, 'project');
    this.exitFile = join(home, `exit-status-${runs}`);
    this.explicitConfigDir = configDir !== undefined;
  }

  get tmp(): string {
    return join(this.home, 'tmp');
  }

  get sessionsDir(): string {
    return join(this.configDir, 'sessions');
  }

  get sessionFile(): string {
    return join(this.sessionsDir, `${this.pid}.json`);
  }

  env(): NodeJS.ProcessEnv {
    const inherited = tuiEnv({});
    for (const name of Object.keys(inherited)) {
      if (/^(ANTHROPIC_|CLAUDE_|CLAUDECODE|HYPI|https?_proxy|HTTPS?_PROXY|ALL_PROXY|all_proxy|NO_PROXY|no_proxy)/.test(name)) delete inherited[name];
    }
    // Loopback only: the API is ours, and any other request meets a proxy that refuses.
    const refuse = 'http://127.0.0.1:9';
    return {
      ...inherited,
      HOME: this.home,
      // Its messaging socket goes to $TMPDIR/cc-socks/<pid>.sock: a private one, gone with the home.
      TMPDIR: this.tmp,
      ...(this.explicitConfigDir ? { CLAUDE_CONFIG_DIR: this.configDir } : {}),
      ANTHROPIC_BASE_URL: this.apiUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      HTTPS_PROXY: refuse,
      https_proxy: refuse,
      HTTP_PROXY: refuse,
      http_proxy: refuse,
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
    };
  }

  /** Starts Claude Code in a 120×40 pane, answers its first-run dialogs, waits for its session file. */
  async start(options: StartOptions = {}): Promise<this> {
    mkdirSync(this.cwd, { recursive: true });
    mkdirSync(this.tmp, { recursive: true });
    const onboarding = join(this.explicitConfigDir ? this.configDir : this.home, '.claude.json');
    if (!existsSync(onboarding)) {
      mkdirSync(this.explicitConfigDir ? this.configDir : this.home, { recursive: true });
      writeFileSync(onboarding, '{"hasCompletedOnboarding":true,"theme":"dark"}\n');
    }
    const args = (options.args ?? []).map((a) => `'${a}'`).join(' ');
    // sh waits for claude and writes its exit status (128+n for a signal).
    const inner = `'${this.bin}' ${args}; echo $? > '${this.exitFile}'`;
    const command = options.unsharePid ? `exec unshare --pid --fork --mount-proc sh -c "${inner.replace(/\$/g, '\\$')}"` : inner;
    this.startedAt = Date.now();
    execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'cc', '-x', '120', '-y', '40', '-c', this.cwd, 'sh', '-c', command], { env: this.env() });
    const panePid = Number(this.tmux('display-message', '-p', '-t', 'cc', '#{pane_pid}').trim());
    const exe = realpathSync(this.bin);
    this.hostPid = await waitFor('the claude process', () => descendantRunning(panePid, exe), 15_000);
    this.pid = nsPids(this.hostPid).at(-1)!;
    await waitFor(
      `claude ${this.pid}'s session file`,
      () => {
        const record = readJson(this.sessionFile);
        if (record?.pid === this.pid && typeof record.sessionId === 'string') return (this.record = record);
        this.answerDialog();
        return undefined;
      },
      45_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; exit status ${this.exitStatus() ?? 'none yet'}; the pane shows:\n${this.screen()}`);
    });
    this.fileAfterMs = Date.now() - this.startedAt;
    // The prompt is drawn once the file is there; keys typed before it would be lost.
    await waitFor('the prompt', () => (/^\s*[❯>]\s*$/m.test(this.screen()) ? true : undefined), 15_000);
    // The first write comes before the status fields: the record as it stands once idle.
    this.firstRecord = this.record;
    this.record = await waitFor('the record with a status', () => {
      const record = readJson(this.sessionFile);
      return record && 'status' in record ? record : undefined;
    });
    return this;
  }

  /**
   * Answers "trust this folder" and "use this API key" with Yes, one key per look at the screen: the
   * cursor is moved one option and the screen read again, and Enter is sent only once the cursor
   * is seen on Yes (in 2.1.332 the trust dialog starts on "No, exit": an Enter that overtook a lost
   * arrow key would end the run).
   */
  private answerDialog(): void {
    const screen = this.screen();
    const dialog = /trust this folder|Do you trust/i.test(screen) ? 'trust' : /use this API key/i.test(screen) ? 'api-key' : undefined;
    if (!dialog) return;
    const options = screen.split('\n').filter((l) => /^\s*(❯\s*)?(\d+\.\s*)?(Yes|No)\b/.test(l));
    const at = options.findIndex((l) => l.includes('❯'));
    const to = options.findIndex((l) => /^\s*(❯\s*)?(\d+\.\s*)?Yes/.test(l));
    if (at < 0 || to < 0) return;
    // A key sent a moment ago may not have been drawn yet: one key per 300 ms.
    if (Date.now() - this.keyAt < 300) return;
    this.keyAt = Date.now();
    if (at !== to) {
      this.tmux('send-keys', '-t', 'cc', at < to ? 'Down' : 'Up');
      return;
    }
    if (this.dialogs.at(-1) !== dialog) this.dialogs.push(dialog);
    this.tmux('send-keys', '-t', 'cc', 'Enter');
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  screen(): string {
    try {
      return this.tmux('capture-pane', '-p', '-t', 'cc');
    } catch {
      return '';
    }
  }

  /** Types a line at the prompt (a slash command's menu opens on "/": Enter comes after a pause). */
  async type(line: string): Promise<void> {
    this.tmux('send-keys', '-t', 'cc', '-l', line);
    await sleep(500);
    this.tmux('send-keys', '-t', 'cc', 'Enter');
  }

  /** The session's transcript (configDir/projects/<cwd as a name>/<sessionId>.jsonl) holds `text`. */
  transcriptHas(text: string): boolean {
    const projects = join(this.configDir, 'projects');
    const name = `${String(this.record.sessionId)}.jsonl`;
    return filesUnder(projects).some((p) => p.endsWith(`/${name}`) && readFileSync(join(projects, p), 'utf8').includes(text));
  }

  exitStatus(): number | undefined {
    if (!existsSync(this.exitFile)) return undefined;
    const text = readFileSync(this.exitFile, 'utf8').trim();
    return text ? Number(text) : undefined;
  }

  /** Waits until the Claude process is gone; gives the ms since `since`. */
  async waitGone(since: number, timeoutMs = 15_000): Promise<number> {
    await waitFor(`claude ${this.hostPid} to end`, () => (alive(this.hostPid) && this.isOurs() ? undefined : true), timeoutMs);
    return Date.now() - since;
  }

  /** hostPid still names the Claude process we started (not a zombie, its binary). */
  isOurs(): boolean {
    try {
      return /\) [^Z]/.test(readFileSync(`/proc/${this.hostPid}/stat`, 'utf8')) && readlinkSync(`/proc/${this.hostPid}/exe`) === realpathSync(this.bin);
    } catch {
      return false;
    }
  }

  /**
   * Ends the Claude Code we started with SIGTERM (it removes its files, key and socket; its sh,
   * still there, reaps it: killing the tmux server first would leave it to this host's init, which
   * here leaves zombies), SIGKILL if it is still there 5 s later; then the tmux server.
   */
  async stop(): Promise<void> {
    if (this.hostPid && this.isOurs()) {
      process.kill(this.hostPid, 'SIGTERM');
      await waitFor('claude to end on SIGTERM', () => (this.isOurs() ? undefined : true), 5000).catch(() => process.kill(this.hostPid, 'SIGKILL'));
    }
    try {
      this.tmux('kill-server');
    } catch {
      // the server already ended with its last pane
    }
  }
}

// ---- ghostwatch --------------------------------------------------------------------------------

export interface Finding {
  readonly source: string;
  readonly kind: string;
  readonly id: string;
  readonly verdict: string;
  readonly problem: boolean;
  readonly evictable: boolean;
  readonly reason: string;
  readonly evidence: Record<string, unknown>;
  readonly entry: Record<string, unknown>;
}

export interface Report {
  readonly run: CliRun;
  readonly findings: Finding[];
}

/** A private world for the CLI: HOME, state (trash, audit log) and a hypivisor address nothing answers. */
export class CliWorld {
  readonly root = mkdtempSync(join(tmpdir(), 'gw-real-claude-cli-'));
  readonly state = join(this.root, 'state');
  readonly trash = join(this.state, 'ghostwatch', 'trash');
  readonly claimsDir = join(this.root, 'claude-sessions');
  private hypivisor = '';

  async init(): Promise<this> {
    this.hypivisor = `ws://127.0.0.1:${await freePort()}/ws`;
    return this;
  }

  env(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(CLAUDE_|HYPI|GHOSTWATCH_|XDG_)/.test(k) && k !== 'CI' && !k.startsWith('CI_')));
    return {
      ...env,
      HOME: home,
      XDG_STATE_HOME: this.state,
      XDG_CONFIG_HOME: join(this.root, 'config'),
      XDG_CACHE_HOME: join(this.root, 'cache'),
      HYPIVISOR_WS: this.hypivisor,
      NO_COLOR: '1',
      ...extra,
    };
  }

  /** `--source claude --claude-dir <dir>` (its claim-manager folder a private, empty one). */
  claudeFlags(configDir: string): string[] {
    return ['--source', 'claude', '--claude-dir', configDir, '--claude-sessions-dir', this.claimsDir];
  }

  /** `ghostwatch check --json` with these flags: its run and its Claude Code findings. */
  async check(home: string, flags: readonly string[], extra: Record<string, string> = {}): Promise<Report> {
    const run = await runCli(['check', '--json', '--timeout', '5', ...flags], this.env(home, extra));
    let findings: Finding[] = [];
    try {
      findings = (JSON.parse(run.stdout) as { findings: Finding[] }).findings.filter((f) => f.source === 'claude');
    } catch {
      // no JSON (an error): the caller looks at run
    }
    return { run, findings };
  }

  reap(home: string, flags: readonly string[]): Promise<CliRun> {
    return runCli(['reap', '--yes', '--timeout', '5', ...flags], this.env(home));
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The finding whose entry is the record of `pid`. */
export function findingOfPid(findings: readonly Finding[], pid: number): Finding | undefined {
  return findings.find((f) => f.entry.pid === pid);
}

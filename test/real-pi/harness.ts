// What the real-pi tests drive: the real `pi` CLI from npm (installed once per version into a
// fixed temp folder), a real `ghostwatch serve`, an observer on that registry that records every
// event with its arrival time, the built `ghostwatch check --json`, and pi itself in a tmux pane
// of a private tmux server, with our registering extension and a trace file it writes.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../support/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { runCli } from '../support/cli.js';
import { BIN, ROOT, tuiEnv } from '../support/tmux.js';
import { until } from '../support/wait.js';
import { alive } from '../support/processes.js';

export const PI_VERSION = process.env.GHOSTWATCH_REAL_PI_VERSION ?? '0.73.1';
export const EXTENSION = join(ROOT, 'test/real-pi/registering-extension.ts');
const PACKAGE = '@mariozechner/pi-coding-agent';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `until` with the subject first, as these harnesses read: fails after `timeoutMs`, naming `what`. */
export function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  return until(probe, timeoutMs, what);
}

function installedVersion(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { version?: string };
    return existsSync(join(dir, 'node_modules/.bin/pi')) ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The `pi` binary of `version`, installed from npm on first use into
 * os.tmpdir()/ghostwatch-real-pi-<version> (built in a side folder and renamed into place, so a
 * killed install never leaves a half cache). Reruns reuse it.
 */
export async function installPi(version = PI_VERSION): Promise<string> {
  const dir = join(tmpdir(), `ghostwatch-real-pi-${version}`);
  if (installedVersion(dir) !== version) {
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      execFile(
        'npm',
        ['install', '--prefix', partial, '--no-audit', '--no-fund', '--loglevel=error', `${PACKAGE}@${version}`],
        { timeout: 300_000 },
        (error, _stdout, stderr) => (error ? reject(new Error(`npm install ${PACKAGE}@${version} failed: ${stderr}`)) : resolve()),
      );
    });
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
    if (installedVersion(dir) !== version) throw new Error(`${dir} does not hold ${PACKAGE}@${version} after npm install`);
  }
  return join(dir, 'node_modules/.bin/pi');
}

export { freePort };

export { alive };

/** The process state letter from /proc (Z = zombie), or undefined when the pid is gone. */
export function procState(pid: number): string | undefined {
  try {
    return /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

// ---- ghostwatch serve --------------------------------------------------------------------------

export interface Serve {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startServe(): Promise<Serve> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--quiet'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const url = await waitFor('serve to listen', () => /listening on (ws:\/\/\S+)/.exec(err)?.[1], 15_000).catch((error: Error) => {
    child.kill('SIGKILL');
    throw error;
  });
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

// ---- a registry observer (never registers) -----------------------------------------------------

export interface RegistryEvent {
  readonly at: number;
  readonly event: string;
  readonly id: string;
  readonly node?: Record<string, unknown>;
}

export interface Observer {
  readonly events: RegistryEvent[];
  /** The first event of that kind for that id at or after `since`, waited for. */
  waitEvent(event: string, id: string, since?: number, timeoutMs?: number): Promise<RegistryEvent>;
  close(): void;
}

export async function observe(url: string): Promise<Observer> {
  const ws = new WebSocket(url);
  const events: RegistryEvent[] = [];
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { event?: string; id?: string; node?: Record<string, unknown> };
    if (!frame.event || frame.event === 'init') return;
    const id = String(frame.node?.id ?? frame.id ?? '');
    events.push({ at: Date.now(), event: frame.event, id, ...(frame.node ? { node: frame.node } : {}) });
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return {
    events,
    waitEvent: (event, id, since = 0, timeoutMs = 10_000) =>
      waitFor(`${event} for ${id}`, () => events.find((e) => e.event === event && e.id === id && e.at >= since), timeoutMs),
    close: () => ws.terminate(),
  };
}

// ---- ghostwatch check --json -------------------------------------------------------------------

export interface Finding {
  readonly id: string;
  readonly verdict: string;
  readonly problem: boolean;
  readonly reason: string;
  readonly entry: Record<string, unknown>;
}

/** One `ghostwatch check --json` pass: its exit code and its hypivisor findings. */
export async function check(url: string): Promise<{ code: number; findings: Finding[] }> {
  const run = await runCli(['check', '--json', '--timeout', '5', '--registry', url], tuiEnv({}));
  if (run.code === 2 || !run.stdout.trim()) throw new Error(`check failed (${run.code}): ${run.stderr}`);
  const report = JSON.parse(run.stdout) as { findings: (Finding & { kind: string })[] };
  return { code: run.code, findings: report.findings.filter((f) => f.kind !== 'claim') };
}

// ---- pi in tmux --------------------------------------------------------------------------------

export interface TraceLine {
  readonly at: number;
  readonly step: string;
  readonly pid: number;
  readonly [key: string]: unknown;
}

let sessions = 0;

export class PiInTmux {
  readonly socket = `gw-real-pi-${process.pid}-${++sessions}`;
  readonly home = mkdtempSync(join(tmpdir(), 'gw-real-pi-'));
  readonly traceFile = join(this.home, 'trace.jsonl');
  readonly exitFile = join(this.home, 'exit-code');
  readonly cwd = join(this.home, 'project');
  pid = 0;
  nodeId = '';
  port = 0;
  startedAt = 0;

  constructor(
    private readonly bin: string,
    private readonly registryUrl: string,
    /** More arguments for pi (quoted as they are: no quotes in them). */
    private readonly args: readonly string[] = [],
  ) {}

  /** Starts pi in a 120×40 pane and waits until its extension has registered and been answered. */
  async start(): Promise<this> {
    mkdirSync(this.cwd);
    const env = tuiEnv({
      HOME: this.home,
      PI_CODING_AGENT_DIR: join(this.home, 'agent'),
      PI_OFFLINE: '1',
      PI_TELEMETRY: '0',
      PI_SKIP_VERSION_CHECK: '1',
      HYPIVISOR_WS: this.registryUrl,
      PI_SOCKET_PORT: String(await freePort()),
      GHOSTWATCH_REAL_PI_TRACE: this.traceFile,
    });
    delete env.HYPI_TOKEN;
    this.startedAt = Date.now();
    // sh waits for pi and writes its exit status (128+n for a signal) next to the trace.
    const extra = this.args.map((a) => ` '${a}'`).join('');
    const command = `'${this.bin}' -e '${EXTENSION}'${extra}; echo $? > '${this.exitFile}'`;
    execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'pi', '-x', '120', '-y', '40', '-c', this.cwd, 'sh', '-c', command], { env });
    const registered = await this.waitStep('reply', (l) => String(l.text).includes('"registered"'), 30_000);
    // session_start runs before the interactive mode's init, which installs pi's SIGTERM/SIGHUP
    // handlers and then draws the header: a signal before the header kills pi outright.
    await waitFor('the pi header in the pane', () => (this.screen().includes(`pi v${PI_VERSION}`) ? true : undefined), 15_000);
    const start = this.trace().find((l) => l.step === 'session_start');
    const sent = this.trace().find((l) => l.step === 'register-sent');
    this.pid = registered.pid;
    this.nodeId = String(start?.id);
    this.port = Number(sent?.port);
    return this;
  }

  trace(): TraceLine[] {
    if (!existsSync(this.traceFile)) return [];
    return readFileSync(this.traceFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TraceLine);
  }

  steps(): string[] {
    return this.trace().map((l) => (l.reason ? `${l.step}:${String(l.reason)}` : l.step));
  }

  waitStep(step: string, match: (line: TraceLine) => boolean = () => true, timeoutMs = 10_000, since = 0): Promise<TraceLine> {
    return waitFor(`trace step ${step}`, () => this.trace().find((l) => l.step === step && l.at >= since && match(l)), timeoutMs);
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', 'pi');
  }

  /** The status sh wrote after pi ended (absent when sh died with it). */
  exitStatus(): number | undefined {
    if (!existsSync(this.exitFile)) return undefined;
    const text = readFileSync(this.exitFile, 'utf8').trim();
    return text ? Number(text) : undefined;
  }

  /** Waits until the pi process has gone (kill(pid,0) fails); gives the ms since `since`. */
  async waitGone(since: number, timeoutMs = 10_000): Promise<number> {
    await waitFor(`pi ${this.pid} to end`, () => (alive(this.pid) ? undefined : true), timeoutMs);
    return Date.now() - since;
  }

  /** Ends the tmux server and, if pi outlived it, SIGKILLs the pi we started. */
  stop(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // the server already ended with its last pane
    }
    if (this.pid && this.isOurPi()) process.kill(this.pid, 'SIGKILL');
  }

  /** pi's pid still names the pi we started (alive, not a zombie, our extension on its command line). */
  isOurPi(): boolean {
    if (!alive(this.pid) || procState(this.pid) === 'Z') return false;
    try {
      return readFileSync(`/proc/${this.pid}/cmdline`, 'utf8').includes(EXTENSION);
    } catch {
      return false;
    }
  }

  removeFiles(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

// ---- serve --allow-spawn starting real pi ------------------------------------------------------

/**
 * What a pi that `spawn_agent` starts reads: a HOME (serve's $HOME, so the folders are inside it),
 * an agent dir whose extensions/ loads our registering extension (pi loads every extension there),
 * a trace file. spawn_agent starts pi with no arguments, so nothing can be passed on its command line.
 */
export class SpawnHome {
  readonly home = realpathSync(mkdtempSync(join(tmpdir(), 'gw-real-spawn-')));
  readonly agentDir = join(this.home, 'agent');
  readonly traceFile = join(this.home, 'trace.jsonl');

  constructor() {
    mkdirSync(join(this.agentDir, 'extensions'), { recursive: true });
    writeFileSync(join(this.agentDir, 'extensions', 'registering.ts'), `export { default } from '${EXTENSION}';\n`);
  }

  folder(name: string): string {
    const path = join(this.home, name);
    mkdirSync(path, { recursive: true });
    return path;
  }

  /** serve's environment, which the pi it starts inherits: outside any tmux, no token. */
  async env(): Promise<NodeJS.ProcessEnv> {
    const env = tuiEnv({
      HOME: this.home,
      PI_CODING_AGENT_DIR: this.agentDir,
      PI_OFFLINE: '1',
      PI_TELEMETRY: '0',
      PI_SKIP_VERSION_CHECK: '1',
      PI_SOCKET_PORT: String(await freePort()),
      GHOSTWATCH_REAL_PI_TRACE: this.traceFile,
    });
    for (const name of ['HYPI_TOKEN', 'HYPIVISOR_WS', 'TMUX', 'TMUX_PANE']) delete env[name];
    return env;
  }

  trace(): TraceLine[] {
    if (!existsSync(this.traceFile)) return [];
    return readFileSync(this.traceFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TraceLine);
  }

  remove(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/** `ghostwatch serve --allow-spawn --spawn-command <pi>` in the first pane of a private tmux server, as a person starts it. */
export async function startSpawningServeInTmux(piBin: string, env: NodeJS.ProcessEnv): Promise<Serve & { socket: string; tmux(...args: string[]): string }> {
  const port = await freePort();
  const socket = `gw-real-spawn-${process.pid}`;
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  execFileSync(
    'tmux',
    ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'serve', '-x', '160', '-y', '40', process.execPath, BIN, 'serve', '--port', String(port), '--allow-spawn', '--spawn-command', piBin],
    { env },
  );
  const url = `ws://127.0.0.1:${port}/ws`;
  await waitFor('serve in tmux to listen', () => observe(url).then((o) => (o.close(), true), () => undefined), 15_000);
  return {
    url,
    socket,
    tmux,
    async stop() {
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    },
  };
}

/** `ghostwatch serve --allow-spawn --spawn-command <pi>` with no terminal (stdin /dev/null) and outside tmux; its log is kept. */
export async function startSpawningServeDetached(piBin: string, env: NodeJS.ProcessEnv): Promise<Serve & { log(): string }> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--allow-spawn', '--spawn-command', piBin], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const url = await waitFor('serve to listen', () => /listening on (ws:\/\/\S+)/.exec(err)?.[1], 15_000);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url,
    log: () => err,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/**
 * `ghostwatch serve --allow-spawn --spawn-command <pi>` in a terminal of its own outside tmux, as a
 * person starts it in a plain terminal: util-linux `script` gives it a pty (its stdin and stdout);
 * what is written to that terminal (serve's log, pi's screen) is kept.
 */
export async function startSpawningServeInTerminal(piBin: string, env: NodeJS.ProcessEnv): Promise<Serve & { screen(): string; pty(): string }> {
  const port = await freePort();
  const command = [process.execPath, BIN, 'serve', '--port', String(port), '--allow-spawn', '--spawn-command', piBin].map((w) => `'${w.replaceAll("'", `'\\''`)}'`).join(' ');
  const child: ChildProcess = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...env, COLUMNS: '120', LINES: '40' } });
  let screen = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (screen += chunk));
  const url = `ws://127.0.0.1:${port}/ws`;
  await waitFor('serve in its terminal to listen', () => observe(url).then((o) => (o.close(), true), () => undefined), 15_000);
  const exited = new Promise((r) => child.once('exit', r));
  return {
    url,
    screen: () => screen,
    /** The terminal serve runs on (its stdin), e.g. /dev/pts/3. */
    pty: () => {
      const serve = execFileSync('pgrep', ['-f', '--', `serve --port ${port} --allow-spawn`], { encoding: 'utf8' }).trim().split('\n')[0]!;
      return readlinkSync(`/proc/${serve}/fd/0`);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

/** Pi-DE's spawn dialog on its own /ws connection: one spawn_agent (a string id, new_folder left out when empty), and what came back when. */
export async function spawnAsPiDe(url: string, path: string): Promise<{ reply: { result?: unknown; error?: string }; replyMs: number; joined: { at: number; node: Record<string, unknown> }[] }> {
  const ws = new WebSocket(url);
  const joined: { at: number; node: Record<string, unknown> }[] = [];
  let t0 = 0;
  const reply = new Promise<{ id?: string; result?: unknown; error?: string; at: number }>((resolve) => {
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as { event?: string; id?: string; node?: Record<string, unknown>; result?: unknown; error?: string };
      if (frame.event === 'node_joined' && frame.node) joined.push({ at: Date.now() - t0, node: frame.node });
      else if (frame.event === undefined && frame.id === 'pide-spawn-1') resolve({ ...frame, at: Date.now() - t0 });
    });
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  t0 = Date.now();
  ws.send(JSON.stringify({ id: 'pide-spawn-1', method: 'spawn_agent', params: { path, new_folder: undefined } }));
  const answer = await Promise.race([
    reply,
    sleep(35_000).then(() => {
      throw new Error('no spawn_agent reply within 35 s (Pi-DE gives up after 30 s)');
    }),
  ]);
  ws.terminate();
  const { at, id: _id, ...rest } = answer;
  return { reply: rest, replyMs: at, joined };
}

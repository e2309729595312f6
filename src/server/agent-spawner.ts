// spawn_agent's agents, started where a person can reach them and watched until they register.
// pi needs a terminal: started with none it loads its extensions and exits 0 before registering
// (protocols.md §1). So when serve runs inside tmux ($TMUX), the agent gets a window of its own in
// serve's session, named after its folder (tmux-window.ts; the window's process is our launcher,
// agent-launcher.ts, whose child the agent is: ghostwatch finds the pane by the pid's ancestry);
// otherwise it shares serve's own terminal (stdio inherited), as hypivisor starts it.
// The spawn_agent reply waits until the agent registers (success), ends (a failure, with how), or
// `registerTimeoutMs` passes with it still running (success: it may be waiting for its person).
// Pi-DE keeps its dialog open ("Deploying…") until the reply and gives up after 30 s.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { matchHost } from '../core/host.js';
import { sanitize } from '../core/sanitize.js';
import { hasEnded } from '../os/liveness.js';
import { readParents } from '../os/tmux.js';
import { EXIT_FILE, REQUEST_FILE, type LaunchExit, type LaunchRequest } from './launch-request.js';
import type { NodeInfo } from './protocol.js';
import { insideTmux, openTmuxWindow, windowName } from './tmux-window.js';

/**
 * How long the reply waits for a started agent to register: pi 0.73.1 registers within a few
 * seconds on a loaded machine, and Pi-DE's own RPC timeout (30 s) must not fire first.
 */
export const DEFAULT_REGISTER_TIMEOUT_MS = 15_000;
/** How often a tmux window's process is checked while its agent has not registered. */
const EXIT_POLL_MS = 100;

export interface AgentSpawnerOptions {
  /** The executable to start, with no arguments. */
  readonly command: string;
  /** The environment agents start from; its $TMUX says whether serve runs inside tmux. */
  readonly baseEnv: NodeJS.ProcessEnv;
  /** What an agent needs to register here: HYPIVISOR_WS, and HYPI_TOKEN when serve has one. */
  readonly registryEnv: Readonly<Record<string, string>>;
  readonly registerTimeoutMs: number;
  /** This host's name: only registrations from it can be our agents. */
  readonly hostName: string;
  /** Whether serve's stdin is a terminal, which an agent started outside tmux shares. */
  readonly hasTerminal: boolean;
  readonly log: (line: string) => void;
}

export type SpawnOutcome = { readonly ok: true } | { readonly ok: false; readonly error: string };

/** A process spawn_agent started and watches. */
interface Started {
  /** The agent itself, or its tmux window's launcher (the agent's parent). */
  readonly pid: number;
  /** Where a person finds it. */
  readonly where: string;
  /** Settles, if it ends, with how: "exited with code 0". */
  readonly ended: Promise<string>;
  stopWatching(): void;
}

type Settled = { kind: 'registered'; id: string } | { kind: 'ended'; how: string } | { kind: 'timeout' } | { kind: 'closed' };

interface Waiting {
  readonly pid: number;
  readonly path: string;
  settle(result: Settled): void;
}

/** The launcher next to this module; from the TypeScript sources (tests) or the bundle, the one in dist/. */
export function launcherScriptPath(): string {
  const sibling = fileURLToPath(new URL('./agent-launcher.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  return fileURLToPath(new URL('../../dist/src/server/agent-launcher.js', import.meta.url));
}

function endedText(exit: LaunchExit | undefined): string {
  if (exit === undefined) return 'ended';
  if ('error' in exit) return `could not start: ${sanitize(exit.error, 300)}`;
  return exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${sanitize(exit.signal ?? 'a signal', 20)}`;
}

function readExit(folder: string): LaunchExit | undefined {
  try {
    return JSON.parse(readFileSync(join(folder, EXIT_FILE), 'utf8')) as LaunchExit;
  } catch {
    return undefined; // the launcher itself was killed
  }
}

export class AgentSpawner {
  private readonly waiting = new Set<Waiting>();

  constructor(private readonly opts: AgentSpawnerOptions) {}

  /** Starts the agent in `path` (a validated folder) and waits as the file's header says. */
  async start(path: string): Promise<SpawnOutcome> {
    const command = sanitize(this.opts.command, 120);
    const what = `${command} in ${sanitize(path, 300)}`;
    const tmux = insideTmux(this.opts.baseEnv);
    const started = tmux ? await this.inTmuxWindow(path) : await this.inOwnTerminal(path);
    if ('error' in started) {
      this.opts.log(`serve: spawn failed: ${what}: ${started.error}`);
      return { ok: false, error: started.error };
    }
    this.opts.log(`serve: spawned ${what}: pid ${started.pid}, ${started.where}`);
    const t0 = performance.now();
    const settled = await this.watch(started, path);
    started.stopWatching();
    switch (settled.kind) {
      case 'registered':
        this.opts.log(`serve: spawned ${what} registered as ${sanitize(settled.id, 80)} after ${Math.round(performance.now() - t0)} ms`);
        return { ok: true };
      case 'timeout':
        this.opts.log(
          `serve: spawned ${what} has not registered after ${this.opts.registerTimeoutMs / 1000} s; it runs on (pid ${started.pid}, ${started.where})`,
        );
        return { ok: true };
      case 'closed':
        return { ok: false, error: 'serve shut down before the agent registered' };
      case 'ended': {
        const hint = !tmux && !this.opts.hasTerminal ? ' (serve has no terminal and is not inside tmux: start serve inside tmux or from a terminal)' : '';
        const error = `${command} ${settled.how} before it registered${hint}`;
        this.opts.log(`serve: spawn failed: ${what} ${settled.how} before it registered`);
        return { ok: false, error };
      }
    }
  }

  /** A registration: if it comes from an agent we wait for (its pid or a descendant; its cwd when it sends no pid), that spawn succeeded. */
  joined(node: NodeInfo): void {
    if (this.waiting.size === 0 || matchHost(node.machine, this.opts.hostName, []) === undefined) return;
    void this.match(node);
  }

  /** serve is shutting down: every spawn still waiting is answered now. */
  close(): void {
    for (const w of [...this.waiting]) w.settle({ kind: 'closed' });
  }

  private async match(node: NodeInfo): Promise<void> {
    const waiting = [...this.waiting];
    let found: Waiting | undefined;
    if (node.pid === undefined) {
      found = waiting.find((w) => w.path === node.cwd);
    } else {
      const roots = new Set(waiting.map((w) => w.pid));
      const parents = await readParents([node.pid], roots);
      let at: number | undefined = node.pid;
      for (let step = 0; at !== undefined && !roots.has(at) && step < 64; step++) at = parents.get(at);
      found = at === undefined ? undefined : waiting.find((w) => w.pid === at);
    }
    found?.settle({ kind: 'registered', id: node.id });
  }

  private watch(started: Started, path: string): Promise<Settled> {
    return new Promise((resolve) => {
      const entry: Waiting = {
        pid: started.pid,
        path,
        settle: (result) => {
          clearTimeout(timer);
          this.waiting.delete(entry);
          resolve(result);
        },
      };
      const timer = setTimeout(() => entry.settle({ kind: 'timeout' }), this.opts.registerTimeoutMs);
      this.waiting.add(entry);
      void started.ended.then((how) => entry.settle({ kind: 'ended', how }));
    });
  }

  private agentEnv(path: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.opts.baseEnv)) if (value !== undefined) env[name] = value;
    return { ...env, ...this.opts.registryEnv, PWD: path };
  }

  /** As hypivisor: a child sharing serve's stdio (and so its terminal, if it has one). */
  private async inOwnTerminal(path: string): Promise<Started | { error: string }> {
    const child = spawn(this.opts.command, [], { cwd: path, stdio: 'inherit', env: this.agentEnv(path) });
    const failure = await new Promise<string | undefined>((done) => {
      child.once('error', (err) => done(err.message)); // "spawn pi ENOENT"
      child.once('spawn', () => done(undefined));
    });
    if (failure !== undefined || child.pid === undefined) return { error: sanitize(failure ?? 'no pid') };
    child.unref();
    const ended = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(endedText({ code, signal }))));
    return { pid: child.pid, where: "serve's terminal", ended, stopWatching: () => {} };
  }

  /** A new window in serve's tmux session; the request (with the environment) goes in a private file, never on tmux's argv. */
  private async inTmuxWindow(path: string): Promise<Started | { error: string }> {
    const launcher = launcherScriptPath();
    if (!existsSync(launcher)) return { error: `the agent launcher ${sanitize(launcher)} is missing (is ghostwatch built?)` };
    const folder = mkdtempSync(join(tmpdir(), 'ghostwatch-spawn-'));
    const request: LaunchRequest = { command: this.opts.command, cwd: path, env: this.agentEnv(path) };
    writeFileSync(join(folder, REQUEST_FILE), JSON.stringify(request), { mode: 0o600, flag: 'wx' });
    const removeFolder = (): void => rmSync(folder, { recursive: true, force: true });
    const window = await openTmuxWindow({
      name: windowName(path),
      argv: [process.execPath, launcher, join(folder, REQUEST_FILE)],
      cwd: path,
      env: this.opts.baseEnv,
    });
    if ('error' in window) {
      removeFolder();
      return window;
    }
    let poll: NodeJS.Timeout | undefined;
    const ended = new Promise<string>((resolve) => {
      poll = setInterval(() => {
        if (!hasEnded(window.panePid)) return;
        clearInterval(poll);
        resolve(endedText(readExit(folder)));
      }, EXIT_POLL_MS);
    });
    return {
      pid: window.panePid,
      where: `tmux window ${window.target} (${window.paneId})`,
      ended,
      stopWatching: () => {
        clearInterval(poll);
        removeFolder();
      },
    };
  }
}
